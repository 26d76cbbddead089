"""Options of the built-in network backend."""

from oslo_config import cfg

network_group = cfg.OptGroup('network', title='Network options')

network_opts = [
    cfg.ListOpt('bridges',
                default=[],
                help="""
Bridges this host offers to instance ports when no real bridge device is
involved (the ``noop`` VIF driver, with libvirt's test driver). A port whose
network's bridge is not listed cannot be plugged on this host.

Related options: ``[libvirt] vif_driver``.
"""),
]


def register_opts(conf):
    conf.register_group(network_group)
    conf.register_opts(network_opts, group=network_group)


def list_opts():
    return {network_group: network_opts}
