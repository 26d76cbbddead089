"""Options of the Glance image backend (``[image] backend = glance``).

Nova's names: ``[glance] api_servers`` and keystoneauth's adapter options
(``service_type``, ``valid_interfaces``, ``region_name``,
``endpoint_override``) say where Glance is (the service catalog when none
is set); keystoneauth's ``auth_type`` and its plugin's options
(``auth_url``, ``username``, ...) are the service user nova-compute and
the compute API read images with. The image proxy API (``/v2.1/images``)
calls Glance with the requesting user's own token.

keystoneauth's options are registered by ``register_keystoneauth_opts``,
which ``GlanceSettings.from_conf`` calls before it reads them, not on
import: importing keystoneauth1 (requests, urllib3, charset_normalizer
with it) costs a process about 6 MiB and 160 modules, which a
nova-compute on the local image store never uses.
"""

from oslo_config import cfg

glance_group = cfg.OptGroup('glance', title='Glance image backend options')

glance_opts = [
    cfg.ListOpt('api_servers',
                default=[],
                help="""
Glance endpoints (``http://host:9292``). The first is used; when empty,
``endpoint_override`` or else the service catalog (``service_type``
``image``) says where Glance is.

Related options: ``[image] backend``; ``endpoint_override``.
"""),
]

DEFAULT_SERVICE_TYPE = 'image'


def register_opts(conf):
    # A group object of this configuration's own (as [network]'s):
    # keystoneauth registers its options on it.
    conf.register_group(cfg.OptGroup(glance_group.name,
                                     title=glance_group.title))
    conf.register_opts(glance_opts, group=glance_group)


def register_keystoneauth_opts(conf, group=glance_group.name):
    """Register keystoneauth's options of ``group`` on ``conf``:
    ``auth_type`` and ``auth_section``, and the adapter's
    (``service_type``, default ``image``, ``valid_interfaces``, ...).
    Calling it again is harmless."""
    # Imported here, not at the top: see the module docstring.
    from keystoneauth1 import loading as ks_loading
    ks_loading.register_auth_conf_options(conf, group)
    ks_loading.register_adapter_conf_options(conf, group,
                                             include_deprecated=False)
    conf.set_default('service_type', DEFAULT_SERVICE_TYPE, group=group)


def list_opts():
    # Imported here, not at the top: see the module docstring.
    from keystoneauth1 import loading as ks_loading
    return {glance_group: glance_opts
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('password')
            + ks_loading.get_adapter_conf_options(include_deprecated=False)}
