"""Options every process reads: identity of the host and where state lives."""

import socket

from oslo_config import cfg

base_opts = [
    cfg.StrOpt('host',
               default=socket.gethostname(),
               sample_default='<current_hostname>',
               help="""
Name of this compute host as the rest of the system knows it.

It keys the service record, the RPC server and the ``host`` column of every
instance placed here. Several libvirt daemons on one machine report the same
hypervisor hostname, so the service never uses the hypervisor's idea of its
name, only this option.

Possible values: any string that is unique among the compute hosts.
"""),
    cfg.StrOpt('state_path',
               default='/var/lib/nova',
               help="""
Top-level directory for the state this service keeps on disk.

Related options: ``instances_path`` and ``[database] connection`` default to
paths below it.
"""),
]


def register_opts(conf):
    conf.register_opts(base_opts)


def list_opts():
    return {'DEFAULT': base_opts}
