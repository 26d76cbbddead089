"""Options of ``nova-all``: several compute hosts in one process.

``[DEFAULT] compute_hosts`` names the hosts; each host ``NAME`` has its own
group ``[compute:NAME]``, registered when ``nova-all`` starts (the names are
known only once the configuration is read)::

    [DEFAULT]
    compute_hosts = compute1, compute2

    [compute:compute2]
    instances_path = /srv/shared/instances
    connection_uri = test:///srv/compute2/node.xml
    bridges = br-public, br-private

Every option of a host group has a default built from the host's name, so
the embedded default needs no configuration file at all: each host gets
libvirt's test driver with its own node file and its own instances
directory under ``state_path``.
"""

import os

from oslo_config import cfg

from nova.conf import host_settings
from nova import exception

GROUP_PREFIX = 'compute:'
DEFAULT_BRIDGES = ['br-public']

all_in_one_opts = [
    cfg.ListOpt('compute_hosts',
                default=['compute1', 'compute2'],
                help="""
Names of the compute hosts ``nova-all`` runs in its one process.

Each name is the host's ``host`` (service record, RPC server, the ``host``
of its instances) and selects its option group ``[compute:NAME]``
(``instances_path``, ``connection_uri``, ``bridges``, ``vif_driver``).
Only ``nova-all`` reads it; ``nova-compute`` serves the one host named by
``[DEFAULT] host``.

Possible values: a list of distinct names.
"""),
]


def host_opts(name):
    """The options of the group ``[compute:<name>]``, defaults included."""
    base = '$state_path/hosts/%s' % name
    return [
        cfg.StrOpt('instances_path',
                   default=base + '/instances',
                   help="""
Instances directory of compute host ``%(name)s`` (its ``instances_path``).

Give two hosts the same directory to simulate shared storage; the hosts
recognise it by the identity marker at its root.

Related options: ``[DEFAULT] instances_path`` (of ``nova-compute``).
""" % {'name': name}),
        cfg.StrOpt('connection_uri',
                   default='test://%s/node.xml' % base,
                   help="""
libvirt URI of compute host ``%(name)s``.

The default is libvirt's test driver with a node file of this host, written
at start when missing. ``qemu+unix:///system?socket=...`` reaches a real
libvirtd (one per simulated host, see doc/source/cluster.rst).

Related options: ``[libvirt] connection_uri`` (of ``nova-compute``).
""" % {'name': name}),
        cfg.ListOpt('bridges',
                    default=list(DEFAULT_BRIDGES),
                    help="""
Bridges compute host ``%(name)s`` offers to ports with the ``noop`` VIF
driver. A port on a network whose bridge is not listed cannot be plugged
on this host.

Related options: ``[network] bridges`` (of ``nova-compute``).
""" % {'name': name}),
        cfg.StrOpt('vif_driver',
                   choices=('auto', 'linuxbridge', 'noop'),
                   default='auto',
                   help="""
How compute host ``%(name)s`` plugs VIFs; see ``[libvirt] vif_driver``.
""" % {'name': name}),
    ]


def group_name(name):
    return GROUP_PREFIX + name


def register_host_groups(conf, names=None):
    """Register ``[compute:<name>]`` for each name (default: the
    ``compute_hosts`` option). Registering again is harmless."""
    names = conf.compute_hosts if names is None else names
    for name in names:
        group = cfg.OptGroup(group_name(name),
                             title='Compute host %s of nova-all' % name)
        conf.register_group(group)
        conf.register_opts(host_opts(name), group=group)
    return list(names)


def host_settings_for(conf, name):
    """The ``HostSettings`` of host ``name`` of ``nova-all``: the global
    per-host defaults with this host's group applied."""
    group = conf[group_name(name)]
    return host_settings.HostSettings.from_conf(conf).replace(
        host=name,
        instances_path=os.path.abspath(group.instances_path),
        connection_uri=group.connection_uri,
        bridges=tuple(group.bridges),
        vif_driver=group.vif_driver)


def all_host_settings(conf):
    """One ``HostSettings`` per name of ``compute_hosts``."""
    names = register_host_groups(conf)
    if len(set(names)) != len(names):
        raise exception.InvalidConfiguration(
            reason='compute_hosts repeats a name: %s' % ', '.join(names))
    return [host_settings_for(conf, name) for name in names]


def register_opts(conf):
    conf.register_opts(all_in_one_opts)


def list_opts():
    # The sample shows the group of the first default host as a template.
    return {'DEFAULT': all_in_one_opts,
            group_name('compute1'): host_opts('compute1')}
