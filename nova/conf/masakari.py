"""Where Masakari is, and the service user nova-hamonitor posts its
host-failure notifications as (``[ha] recovery = masakari``).

keystoneauth's own options: ``auth_type`` and its plugin's (``auth_url``,
``username``, ``password``, ``project_name``, ...), the session's
(``cafile``, ``timeout``, ...) and the adapter's
(``service_type``, ``valid_interfaces``, ``region_name``,
``endpoint_override``): Masakari is found in the service catalog as
``instance-ha`` unless ``endpoint_override`` names it.

They are all keystoneauth's: ``register_opts`` registers the group alone,
and ``register_keystoneauth_opts`` the options, which
``nova.ha.masakari.Notifier.from_conf`` calls before it reads them:
importing keystoneauth1 (requests, urllib3, charset_normalizer with it)
costs a process about 6 MiB and 160 modules, which no service but
nova-hamonitor with ``[ha] recovery = masakari`` uses.
"""

from oslo_config import cfg

masakari_group = cfg.OptGroup(
    'masakari', title='Masakari options',
    help='The Masakari nova-hamonitor reports failed hosts to when [ha] '
         'recovery = masakari, and the Keystone user it posts as. Unless '
         'set here, service_type is instance-ha and timeout 30 seconds.')

DEFAULT_SERVICE_TYPE = 'instance-ha'
DEFAULT_TIMEOUT = 30


def register_opts(conf):
    # A group object of this configuration's own (as [glance]'s):
    # keystoneauth registers its options on it.
    conf.register_group(cfg.OptGroup(masakari_group.name,
                                     title=masakari_group.title,
                                     help=masakari_group.help))


def register_keystoneauth_opts(conf, group=masakari_group.name):
    """Register keystoneauth's options of ``group`` on ``conf``: the
    auth, session and adapter options, with this module's defaults.
    Calling it again is harmless."""
    # Imported here, not at the top: see the module docstring.
    from keystoneauth1 import loading as ks_loading
    ks_loading.register_auth_conf_options(conf, group)
    ks_loading.register_session_conf_options(conf, group)
    ks_loading.register_adapter_conf_options(conf, group,
                                             include_deprecated=False)
    conf.set_default('service_type', DEFAULT_SERVICE_TYPE, group=group)
    # A Masakari that hangs must not hold the monitor's loop (and with it
    # every other host's watch): the call fails and is made again.
    conf.set_default('timeout', DEFAULT_TIMEOUT, group=group)


def list_opts():
    # Imported here, not at the top: see the module docstring.
    from keystoneauth1 import loading as ks_loading
    return {masakari_group: ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('password')
            + ks_loading.get_session_conf_options()
            + ks_loading.get_adapter_conf_options(include_deprecated=False)}
