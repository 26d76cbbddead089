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
from nova.api import server as server_mod
from nova.conf import CONF


def make_app(compute_api, image_store=None, authenticator=None,
             max_limit=None, max_body_size=None):
    """The Compute API v2.1 as a WSGI application.

    :param compute_api: a ``nova.compute.api.API``
    :param image_store: a ``nova.image.store.ImageStore`` for ``/images``
        (default: the one at ``[image] store_path``)
    :param authenticator: ``auth.NoAuth2()`` or ``auth.StaticTokenAuth``
        (default: from ``[api] auth_strategy`` and ``static_tokens``)
    """
    if image_store is None:
        from nova.image import store
        image_store = store.ImageStore(CONF.image.store_path)
    if authenticator is None:
        authenticator = auth.from_config(CONF)
    max_limit = max_limit or CONF.api.max_limit
    router = compute.build_router(compute_api, image_store, max_limit)
    return app_mod.APIApplication(
        router, authenticator,
        max_body_size=max_body_size or CONF.api.max_request_body_size)


def serve(app, host=None, port=None) -> server_mod.APIServer:
    """Serve ``app`` on ``host``:``port`` (``[api] listen``/``listen_port``
    by default; port 0 picks a free one) in a background thread."""
    host = CONF.api.listen if host is None else host
    port = CONF.api.listen_port if port is None else port
    return server_mod.APIServer(app, host, port).start()
