"""The ``[keystone_authtoken]`` options, for ``[api] auth_strategy =
keystone``.

They are keystonemiddleware's own (``www_authenticate_uri``,
``memcached_servers``, ...) and keystoneauth's (``auth_type`` then the
plugin's: ``auth_url``, ``username``, ``password``, ``project_name``,
``user_domain_name``, ``project_domain_name``), registered here so that a
configuration naming them is checked at start whatever the strategy, and
so that the API can tell at start that the service credentials are
missing. The sample lists them under their own namespaces
(``keystonemiddleware.auth_token`` in
``etc/nova/nova-config-generator.conf``).
"""

from keystoneauth1 import loading as ks_loading
from keystonemiddleware import auth_token

GROUP = 'keystone_authtoken'


def register_opts(conf):
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    ks_loading.register_auth_conf_options(conf, GROUP)


def list_opts():
    return {}
