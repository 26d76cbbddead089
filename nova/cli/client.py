"""A small client of the Compute API over HTTP (the CLI's transport).

Errors come back as exceptions named like novaclient's (``NotFound``,
``Conflict`` ...) carrying the server's message, HTTP status and request
id, so the CLI can print ``ERROR (NotFound): ... (HTTP 404) (Request-ID:
req-...)``.

Example::

    client = Client('http://127.0.0.1:8774/v2.1', 'admin:admin')
    client.negotiate('latest')                  # -> APIVersion(2, 53)
    servers = client.get('/servers/detail')['servers']
"""

import http.client
import json
import socket
import urllib.parse

from nova.api.openstack import api_version
from nova import exception

DEFAULT_ENDPOINT = 'http://127.0.0.1:8774/v2.1'
# The newest microversion this client knows how to speak: its commands
# were written for 2.53 (``evacuate --force`` is refused from 2.68, and
# from 2.95 an evacuated server ends stopped), so ``latest`` stays there
# until they learn the newer ones, as novaclient pins its own maximum.
CLIENT_MAX_VERSION = api_version.v('2.53')


class ClientException(Exception):
    """An error the CLI prints as ``ERROR (<class name>): <message>``."""
    http_status = None

    def __init__(self, message, http_status=None, request_id=None):
        super().__init__(message)
        self.message = message
        if http_status is not None:
            self.http_status = http_status
        self.request_id = request_id

    def __str__(self):
        text = self.message
        if self.http_status is not None:
            text += ' (HTTP %s)' % self.http_status
        if self.request_id:
            text += ' (Request-ID: %s)' % self.request_id
        return text


class CommandError(ClientException):
    pass


class UsageError(CommandError):
    """Arguments that cannot be right (the CLI exits 2); nothing was
    changed."""


class ConnectionRefused(ClientException):
    pass


class BadRequest(ClientException):
    http_status = 400


class Unauthorized(ClientException):
    http_status = 401


class Forbidden(ClientException):
    http_status = 403


class NotFound(ClientException):
    http_status = 404


class MethodNotAllowed(ClientException):
    http_status = 405


class NotAcceptable(ClientException):
    http_status = 406


class Conflict(ClientException):
    http_status = 409


class OverLimit(ClientException):
    http_status = 413


class HTTPNotImplemented(ClientException):
    http_status = 501


_BY_STATUS = {cls.http_status: cls for cls in (
    BadRequest, Unauthorized, Forbidden, NotFound, MethodNotAllowed,
    NotAcceptable, Conflict, OverLimit, HTTPNotImplemented)}


def error_from_response(status: int, body, request_id=None):
    message = 'Unknown error'
    if isinstance(body, dict) and len(body) == 1:
        (fault,) = body.values()
        if isinstance(fault, dict) and 'message' in fault:
            message = fault['message']
    elif isinstance(body, str) and body:
        message = body
    cls = _BY_STATUS.get(status, ClientException)
    return cls(message, http_status=status, request_id=request_id)


def normalize_endpoint(endpoint: str) -> str:
    """``http://h:8774`` or ``.../v2.1/`` -> ``http://h:8774/v2.1``."""
    parsed = urllib.parse.urlsplit(endpoint)
    if parsed.scheme not in ('http', 'https') or not parsed.netloc:
        raise CommandError('Invalid endpoint %r: expected '
                           'http://HOST:PORT/v2.1' % endpoint)
    path = parsed.path.rstrip('/')
    if not path.endswith('/v2.1'):
        path += '/v2.1'
    return urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path,
                                    '', ''))


class Client:
    def __init__(self, endpoint: str, token: str | None,
                 version: api_version.APIVersion = api_version.MIN_VERSION,
                 timeout: float = 60.0):
        self.endpoint = normalize_endpoint(endpoint)
        self.token = token
        self.version = version
        self.timeout = timeout
        parsed = urllib.parse.urlsplit(self.endpoint)
        self._scheme = parsed.scheme
        self._netloc = parsed.netloc
        self._base_path = parsed.path

    def _connection(self):
        cls = (http.client.HTTPSConnection if self._scheme == 'https'
               else http.client.HTTPConnection)
        return cls(self._netloc, timeout=self.timeout)

    def request(self, method: str, path: str, body=None, query=None,
                version=None):
        """(status, headers, parsed body); raises ClientException >= 400."""
        url = self._base_path + path
        if query:
            url += '?' + urllib.parse.urlencode(
                [(k, v) for k, v in query.items() if v is not None])
        headers = {'Accept': 'application/json'}
        if self.token:
            headers['X-Auth-Token'] = self.token
        version = self.version if version is None else version
        headers['OpenStack-API-Version'] = 'compute %s' % version
        headers['X-OpenStack-Nova-API-Version'] = str(version)
        payload = None
        if body is not None:
            payload = json.dumps(body).encode('utf-8')
            headers['Content-Type'] = 'application/json'
        conn = self._connection()
        try:
            conn.request(method, url, body=payload, headers=headers)
            response = conn.getresponse()
            raw = response.read()
        except (ConnectionError, socket.timeout, socket.gaierror,
                http.client.HTTPException) as e:
            raise ConnectionRefused(
                'Unable to establish connection to %s%s: %s'
                % (self._netloc, url, e))
        finally:
            conn.close()
        parsed = None
        if raw:
            try:
                parsed = json.loads(raw.decode('utf-8'))
            except ValueError:
                parsed = raw.decode('utf-8', 'replace')
        request_id = response.getheader('X-OpenStack-Request-ID')
        if response.status >= 400:
            raise error_from_response(response.status, parsed, request_id)
        return response.status, response, parsed

    def get(self, path, query=None, version=None):
        return self.request('GET', path, query=query, version=version)[2]

    def post(self, path, body, version=None):
        return self.request('POST', path, body=body, version=version)[2]

    def put(self, path, body, version=None):
        return self.request('PUT', path, body=body, version=version)[2]

    def delete(self, path, version=None):
        return self.request('DELETE', path, version=version)[2]

    # -- microversions -------------------------------------------------------

    def server_versions(self) -> tuple[api_version.APIVersion,
                                       api_version.APIVersion]:
        """The (min, max) microversion the server announces at /v2.1."""
        doc = self.request('GET', '', version=api_version.MIN_VERSION)[2]
        try:
            version = doc['version']
            return (api_version.APIVersion.parse(version['min_version']),
                    api_version.APIVersion.parse(version['version']))
        except (KeyError, TypeError, exception.InvalidAPIVersionString):
            raise ClientException('The endpoint %s does not look like a '
                                  'Compute API v2.1' % self.endpoint)

    def negotiate(self, requested: str) -> api_version.APIVersion:
        """Set and return the microversion to use.

        ``latest`` (or ``2.latest``) is the newest both sides know;
        ``2`` means 2.1; anything else is used as given.
        """
        text = (requested or 'latest').strip().lower()
        if text in ('latest', '2.latest'):
            _low, high = self.server_versions()
            self.version = min(high, CLIENT_MAX_VERSION)
        elif text == '2':
            self.version = api_version.MIN_VERSION
        else:
            try:
                self.version = api_version.APIVersion.parse(text)
            except exception.InvalidAPIVersionString:
                raise CommandError(
                    'Invalid API version %r: use 2.X, 2 or latest'
                    % requested)
        return self.version
