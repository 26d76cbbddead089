"""Options of the built-in network backend.

keystoneauth's options of ``[network]`` (``auth_type`` and its plugin's)
are registered by ``register_keystoneauth_opts``, which
``nova.network.events`` calls before it reads them, not on import:
importing keystoneauth1 (requests, urllib3, charset_normalizer with it)
costs a process about 6 MiB and 160 modules, which a nova-compute that
sends its events over RPC never uses.
"""

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
    cfg.FloatOpt('agent_poll_interval',
                 default=2.0,
                 min=0.05,
                 max=10.0,
                 help="""
Seconds between two looks of a compute host's network agent at the ports
bound to the host when nothing told it to look. The agent looks at once
when the virt driver plugs or unplugs VIFs and, with the ``linuxbridge``
VIF driver, when the kernel reports a link (netlink), and then marks a
port ``ACTIVE`` (or ``ERROR``) and sends ``network-vif-plugged``. The poll
is the fallback for a change nobody announced (a tap removed by hand, a
host where netlink cannot be used) and the resync that tries unsent
events again. Each look is one query on the database, so a short interval
costs every idle host that many queries a second (Neutron's L2 agents
poll every 2 s too).

Possible values: 0.05 to 10 seconds.

Related options: ``vif_plugging_timeout``.
"""),
    cfg.StrOpt('events_api_url',
               default='',
               help="""
Base URL of the Compute API (``nova-api``) the network agent posts
``os-server-external-events`` to, for example
``http://127.0.0.1:8774/v2.1``, as Neutron notifies Nova.

When empty, the agent of a ``nova-compute`` process casts the events to its
own host over RPC, and ``nova-all`` routes them through the compute API in
process.

Related options: ``events_api_token``.
"""),
    cfg.StrOpt('events_api_token',
               default='admin:admin',
               secret=True,
               help="""
``X-Auth-Token`` the network agent sends with external events. It must be
an administrator's: ``admin:admin`` for ``[api] auth_strategy = noauth2``,
or a token of ``[api] static_tokens`` with the ``admin`` role. Unused when
``auth_type`` is set in this section: the agent then gets (and renews)
Keystone tokens with those credentials, as Neutron does with its ``[nova]``
section.

Related options: ``events_api_url``; ``auth_type``.
"""),
]


def register_opts(conf):
    # A group object of this configuration's own: keystoneauth registers
    # its plugin's options (auth-url required) on the group, which must
    # not leak into every other configuration built from this module.
    conf.register_group(cfg.OptGroup(network_group.name,
                                     title=network_group.title))
    conf.register_opts(network_opts, group=network_group)


def register_keystoneauth_opts(conf, group=network_group.name):
    """Register keystoneauth's ``auth_type`` and ``auth_section`` of
    ``group`` on ``conf`` (``[network] auth_type = password``,
    ``auth_url``, ``username``, ...: Keystone credentials, an
    administrator's, for the events the agent posts with ``[api]
    auth_strategy = keystone``). Calling it again is harmless."""
    # Imported here, not at the top: see the module docstring.
    from keystoneauth1 import loading as ks_loading
    ks_loading.register_auth_conf_options(conf, group)


def list_opts():
    # Imported here, not at the top: see the module docstring.
    from keystoneauth1 import loading as ks_loading
    return {network_group: network_opts
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('password')}
