"""The WSGI application: one request from bytes in to JSON out.

Order of work for a request:

1. ``/``, ``/v2`` and ``/v2.1`` are version discovery,
   ``/v2.1/openapi.json`` the OpenAPI document of the API
   (``openapi.py``): no authentication.
   ``/image`` is the image store as the Image service v2 shows it
   (``image_v2.py``; its version document public, the rest
   authenticated).
2. Anything else under ``/v2.1/`` is authenticated (401 otherwise), the
   microversion negotiated (400/406), the path routed (404/405), and the
   handler run. Every response carries the request id; every versioned
   one the microversion headers and ``Vary``.
3. Whatever a handler raises becomes a Compute API fault (``faults``).
"""

import http
import json
import sys
import time

from oslo_log import log as logging

from nova.api.openstack import api_version
from nova.api.openstack import auth
from nova.api.openstack.compute import versions
from nova.api.openstack import faults
from nova.api.openstack import image_v2
from nova.api.openstack import openapi
from nova.api.openstack import router as router_mod
from nova.api.openstack import wsgi
from nova import context as nova_context
from nova import exception

LOG = logging.getLogger(__name__)

PREFIX = 'v2.1'
# Listed by version discovery, as the reference lists it; only its version
# document is served (versions.py).
V20_PREFIX = 'v2'
OPENAPI_DOCUMENT = 'openapi.json'
REQUEST_ID_HEADERS = ('X-Compute-Request-Id', 'X-OpenStack-Request-ID')


def _status_line(status: int) -> str:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = 'Unknown'
    return '%d %s' % (status, phrase)


def _encoded(body, headers, request_id) -> tuple[bytes, list]:
    """The JSON payload of ``body`` (None: empty) and the response's
    headers: ``headers`` with the content type and length, and the
    request id."""
    payload = b'' if body is None else json.dumps(body).encode('utf-8')
    headers = dict(headers)
    if body is not None:
        headers['Content-Type'] = wsgi.JSON_TYPE
    headers['Content-Length'] = str(len(payload))
    for name in REQUEST_ID_HEADERS:
        headers[name] = request_id
    return payload, list(headers.items())


def _raw_path_qs(environ) -> str:
    """The request's path and query as the server received them, for the
    log: unlike WebOb's, never fails on bytes that are not UTF-8."""
    path = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
    query = environ.get('QUERY_STRING')
    return path + ('?' + query if query else '')


def _check_utf8(req) -> None:
    """A path that is not UTF-8 names no resource (404); a query that is
    not UTF-8 is a client error (400). Both are checked first, so that no
    handler meets an undecodable value."""
    try:
        req.path_info
    except UnicodeDecodeError:
        raise wsgi.HTTPError(404, 'The resource could not be found: the '
                                  'path is not valid UTF-8.')
    try:
        req.GET.items()
    except UnicodeDecodeError:
        raise exception.ValidationError(
            detail='Invalid query string: not valid UTF-8.')


class APIApplication:
    def __init__(self, router: router_mod.Router, authenticator,
                 max_body_size: int,
                 image_api: image_v2.ImageAPI | None = None):
        self.router = router
        self.authenticator = authenticator
        self.max_body_size = max_body_size
        # /image: the image store as the Image service shows it.
        self.image_api = image_api

    def __call__(self, environ, start_response):
        req = wsgi.Request(environ)
        req.max_body_size = self.max_body_size
        req.request_id = nova_context.generate_request_id()
        started = time.monotonic()
        status, body, headers = self._respond(req)
        payload, headers = _encoded(body, headers, req.request_id)
        LOG.info('%(method)s %(path)s status: %(status)d len: %(len)d '
                 'microversion: %(ver)s time: %(secs).3f request: %(req)s',
                 {'method': req.method, 'path': _raw_path_qs(environ),
                  'status': status, 'len': len(payload),
                  'ver': req.api_version, 'secs': time.monotonic() - started,
                  'req': req.request_id})
        start_response(_status_line(status), headers)
        return [payload]

    def _respond(self, req) -> tuple[int, object, dict]:
        headers = {}
        try:
            _check_utf8(req)
            segments = router_mod.split_path(req.path_info)
            if not segments:
                return 200, versions.index(req), headers
            if segments[0] == image_v2.PREFIX and self.image_api:
                if len(segments) > 1:
                    identity = self.authenticator.identify(req.headers)
                    req.context = auth.make_context(identity, req.headers,
                                                    req.request_id)
                return 200, self.image_api(req, segments[1:]), headers
            if segments == (V20_PREFIX,):
                return 200, versions.show_v20(req), headers
            if segments[0] != PREFIX:
                raise wsgi.HTTPError(404, 'Unknown API version %s; this '
                                          'API serves /%s.'
                                     % (segments[0], PREFIX))
            if len(segments) == 1:
                return 200, versions.show(req), headers
            if segments[1:] == (OPENAPI_DOCUMENT,):
                # Public, like version discovery: what the API accepts.
                version = (api_version.negotiate(req.headers)
                           if api_version.HEADER in req.headers
                           else api_version.MAX_VERSION)
                headers.update(api_version.response_headers(version))
                return 200, openapi.document(self.router, version), headers
            headers['Vary'] = api_version.VARY
            req.api_version = api_version.negotiate(req.headers)
            headers.update(api_version.response_headers(req.api_version))
            identity = self.authenticator.identify(req.headers)
            req.context = auth.make_context(identity, req.headers,
                                            req.request_id)
            rest = '/' + '/'.join(segments[1:])
            route, params = self.router.match(req.method, rest,
                                              req.api_version)
            req.route = route
            result = route.handler(req, **params)
        except Exception as exc:
            fault = faults.from_exception(exc, req.request_id)
            headers.update(fault.headers)
            if fault.status == 401:
                headers['WWW-Authenticate'] = 'Token'
            return fault.status, fault.body, headers
        if not isinstance(result, wsgi.Result):
            result = wsgi.Result(result)
        headers.update(result.headers)
        return result.status, result.body, headers


class FaultBarrier:
    """A middleware in front of the API (keystonemiddleware's
    ``auth_token``) that raises gets a Compute API fault, as a handler
    would, instead of the WSGI server's bare text/plain 500."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        try:
            return self.app(environ, start_response)
        except Exception as exc:
            request_id = nova_context.generate_request_id()
            fault = faults.from_exception(exc, request_id)
            payload, headers = _encoded(fault.body, fault.headers,
                                        request_id)
            start_response(_status_line(fault.status), headers,
                           sys.exc_info())
            return [payload]
