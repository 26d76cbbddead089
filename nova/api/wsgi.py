"""Build and serve the REST API: the entry points other code uses.

``nova-api`` and ``nova-all`` both do::

    app = make_app(compute_api)               # a WSGI callable
    server = serve(app, '127.0.0.1', 8774)    # started, in a thread
    ...
    server.stop()

``make_app`` reads ``[api]`` options for what it is not given.
"""

from nova.api.openstack import app as app_mod
from nova.api.openstack import auth
from nova.api.openstack import compute
from nova.api.openstack import image_v2
from nova.api.openstack import policy
from nova.api import server as server_mod
from nova import conf as nova_conf
from nova.conf import CONF
from nova.conf import keystone as keystone_conf
from nova import exception


def make_app(compute_api, image_store=None, authenticator=None,
             max_limit=None, max_body_size=None, auth_token_conf=None):
    """The Compute API v2.1 as a WSGI application.

    :param compute_api: a ``nova.compute.api.API``
    :param image_store: where ``/images`` reads images: a
        ``nova.image.store.ImageStore`` or a ``nova.image.glance.
        GlanceImages`` (default: as ``[image] backend`` says)
    :param authenticator: ``auth.NoAuth2()`` or ``auth.StaticTokenAuth``
        (default: from ``[api] auth_strategy`` and ``static_tokens``)
    :param auth_token_conf: the configuration whose ``[keystone_authtoken]``
        keystonemiddleware reads (default: the service's)

    ``[keystone_authtoken]`` is registered on that configuration if it is
    not yet (nova-api and nova-all register it before they parse theirs;
    tests and harnesses build the app in process) and checked, whatever
    the strategy: a value that does not parse stops the API here.
    """
    from nova.image import glance
    auth_token_conf = CONF if auth_token_conf is None else auth_token_conf
    nova_conf.register_api_opts(auth_token_conf)
    keystone_conf.check(auth_token_conf)
    if image_store is None:
        from nova.conf import host_settings
        from nova.image import source
        image_store = source.for_host(
            host_settings.HostSettings.from_conf(CONF))
    if authenticator is None:
        authenticator = auth.from_config(CONF)
    max_limit = max_limit or CONF.api.max_limit
    router = compute.build_router(compute_api, image_store, max_limit)
    # A policy file that cannot be read or parsed stops the service here,
    # not at the first request.
    policy.validate()
    app = app_mod.APIApplication(
        router, authenticator,
        max_body_size=max_body_size or CONF.api.max_request_body_size,
        # With Glance, clients find the Image service itself in the
        # catalog: /image views only the local store.
        image_api=(None if isinstance(image_store, glance.GlanceImages)
                   else image_v2.ImageAPI(image_store)))
    if isinstance(authenticator, auth.KeystoneAuth):
        return keystone_auth_token(app, auth_token_conf)
    return app


def keystone_auth_token(app, conf=None):
    """``app`` behind keystonemiddleware's ``auth_token``, configured by
    ``[keystone_authtoken]`` of ``conf`` (default: the service's). With
    ``delay_auth_decision`` the middleware lets through a request with no
    valid token, marked so: version discovery and the OpenAPI document
    stay public, everything else gets the API's own 401 fault."""
    from keystoneauth1 import exceptions as ks_exceptions
    from keystonemiddleware import auth_token
    needs = ('[api] auth_strategy = keystone needs the service\'s own '
             'credentials in [keystone_authtoken] (auth_type = password, '
             'auth_url, username, password, project_name, user_domain_name, '
             'project_domain_name) and www_authenticate_uri')
    conf = CONF if conf is None else conf
    if not conf.keystone_authtoken.auth_type:
        raise exception.InvalidConfiguration(reason=needs)
    try:
        wrapped = auth_token.AuthProtocol(app, {
            'oslo_config_config': conf, 'delay_auth_decision': 'true'})
    except ks_exceptions.ClientException as e:
        raise exception.InvalidConfiguration(reason='%s: %s' % (needs, e))
    return app_mod.FaultBarrier(wrapped)


def serve(app, host=None, port=None) -> server_mod.APIServer:
    """Serve ``app`` on ``host``:``port`` (``[api] listen``/``listen_port``
    by default; port 0 picks a free one) in a background thread."""
    host = CONF.api.listen if host is None else host
    port = CONF.api.listen_port if port is None else port
    return server_mod.APIServer(app, host, port).start()
