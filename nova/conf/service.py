"""Options of service records, heartbeats and periodic tasks."""

from oslo_config import cfg

service_opts = [
    cfg.IntOpt('report_interval',
               default=10,
               min=1,
               help="""
Seconds between two heartbeats of a service's record.

Related options: ``service_down_time`` must be larger.
"""),
    cfg.IntOpt('service_down_time',
               default=60,
               min=1,
               help="""
Seconds since its last heartbeat after which a service counts as down.

Evacuating an instance is allowed only from a host whose compute service is
down (or forced down by an operator).

Related options: ``report_interval``.
"""),
    cfg.IntOpt('periodic_interval',
               default=60,
               min=1,
               help="Seconds between two runs of the periodic tasks."),
    cfg.IntOpt('periodic_fuzzy_delay',
               default=5,
               min=0,
               help="""
Upper bound, in seconds, of the random delay added to each periodic task
run, so that hosts started together do not all hit the database at once.
"""),
]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return {'DEFAULT': service_opts}
