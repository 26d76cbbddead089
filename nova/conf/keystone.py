"""The ``[keystone_authtoken]`` options, for ``[api] auth_strategy =
keystone``.

They are keystonemiddleware's own (``www_authenticate_uri``,
``memcached_servers``, ...) and keystoneauth's (``auth_type`` then the
plugin's: ``auth_url``, ``username``, ``password``, ``project_name``,
``user_domain_name``, ``project_domain_name``). Only the processes that
serve the REST API (nova-api, nova-all) register them, through
``nova.conf.register_api_opts``, before they parse their configuration:
importing keystonemiddleware costs a process about 6 MiB and 170 modules
(keystoneclient, oslo.cache, dogpile, WebOb), which nova-compute,
nova-conductor, nova-hamonitor and nova-manage never use. The API checks
them at start whatever the strategy (``check``: a value that does not
parse stops it, naming the option) and, with ``keystone``, that the
service credentials are there (``nova.api.wsgi``). The sample lists them
under their own namespaces (``keystonemiddleware.auth_token`` in
``etc/nova/nova-config-generator.conf``), hence the empty ``list_opts``.
"""

from oslo_config import cfg

from nova import exception

GROUP = 'keystone_authtoken'


def register_opts(conf):
    # Imported here, not at the top: nova.conf imports this module in
    # every process, and only the API's ever call this (keystoneauth1
    # too: see nova.conf.glance).
    from keystoneauth1 import loading as ks_loading
    from keystonemiddleware import auth_token

    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    ks_loading.register_auth_conf_options(conf, GROUP)


def check(conf):
    """Read every registered ``[keystone_authtoken]`` option of ``conf``
    once: oslo.config parses a value only when it is read, and
    keystonemiddleware reads some only when it first needs them, and none
    with another ``auth_strategy``. A value that does not parse raises
    ``InvalidConfiguration`` naming the option."""
    group = conf[GROUP]
    for name in sorted(group):
        try:
            getattr(group, name)
        except cfg.ConfigSourceValueError as e:
            raise exception.InvalidConfiguration(
                reason='[%s] %s: %s' % (GROUP, name, e))


def list_opts():
    return {}
