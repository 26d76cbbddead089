"""Options naming the availability zones hosts are in unless an aggregate
says otherwise."""

from oslo_config import cfg

availability_zone_opts = [
    cfg.StrOpt('default_availability_zone',
               default='nova',
               help="""
The availability zone of a compute host that no aggregate puts in one.

An aggregate's ``availability_zone`` metadata puts its hosts in that zone;
every other compute host is in this one. ``GET /os-availability-zone``
lists it while such hosts exist, and ``POST /servers`` may name it.

Possible values: any string but the ``internal_service_availability_zone``.

Related options: ``internal_service_availability_zone``.
"""),
    cfg.StrOpt('internal_service_availability_zone',
               default='internal',
               help="""
The availability zone shown for services other than nova-compute.

Servers never run there: ``POST /servers`` refuses it, and no aggregate
may take it as its zone. ``GET /os-availability-zone`` hides it; only the
administrators' ``/os-availability-zone/detail`` shows it.

Possible values: any string but the ``default_availability_zone``.

Related options: ``default_availability_zone``.
"""),
]


def register_opts(conf):
    conf.register_opts(availability_zone_opts)


def list_opts():
    return {'DEFAULT': availability_zone_opts}
