"""Who makes a request: the three authentication strategies.

``noauth2`` trusts the client: ``X-Auth-Token: USER:PROJECT`` (a token
without a colon is both), ``X-Auth-Project-Id`` overrides the project, and
the user ``admin`` is an administrator. It is for one trusted machine (the
embedded default), never for a network.

``token`` accepts only the tokens of ``[api] static_tokens``
(``TOKEN:USER:PROJECT[:ROLE,...]``); anything else is a 401.

``keystone`` takes the identity keystonemiddleware's ``auth_token``
established from a Keystone token (``[keystone_authtoken]``).

Each gives a ``RequestContext`` whose request id every record of the
request carries; a valid incoming ``X-OpenStack-Request-ID`` becomes its
``global_request_id``.
"""

import dataclasses
import re

from nova import context as nova_context
from nova import exception

TOKEN_HEADER = 'X-Auth-Token'
PROJECT_HEADER = 'X-Auth-Project-Id'
GLOBAL_REQUEST_ID_HEADER = 'X-OpenStack-Request-ID'

ADMIN_ROLE = 'admin'
NOAUTH_ADMIN_USER = 'admin'

_ID_RE = re.compile(r'^[A-Za-z0-9_.@-]{1,255}$')
_REQUEST_ID_RE = re.compile(
    r'^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')


@dataclasses.dataclass(frozen=True)
class Identity:
    user_id: str
    project_id: str
    roles: tuple[str, ...] = ()

    @property
    def is_admin(self) -> bool:
        return ADMIN_ROLE in self.roles


def _checked_id(value: str, what: str) -> str:
    if not _ID_RE.match(value):
        raise exception.NotAuthenticated(
            reason='%s %r is not a valid id' % (what, value))
    return value


def parse_static_tokens(lines) -> dict[str, Identity]:
    """``[api] static_tokens`` as a token -> Identity map.

    Raises InvalidConfiguration for a malformed or repeated entry; the
    message never contains the token itself.
    """
    tokens = {}
    for number, line in enumerate(lines or (), start=1):
        parts = line.strip().split(':')
        if len(parts) not in (3, 4) or not all(parts[:3]):
            raise exception.InvalidConfiguration(
                reason='[api] static_tokens entry %d is not '
                       'TOKEN:USER_ID:PROJECT_ID[:ROLES]' % number)
        token, user_id, project_id = parts[:3]
        roles = tuple(r.strip() for r in parts[3].split(',')
                      if r.strip()) if len(parts) == 4 else ()
        if token in tokens:
            raise exception.InvalidConfiguration(
                reason='[api] static_tokens entry %d repeats a token'
                       % number)
        if not (_ID_RE.match(user_id) and _ID_RE.match(project_id)):
            raise exception.InvalidConfiguration(
                reason='[api] static_tokens entry %d has an invalid user '
                       'or project id' % number)
        tokens[token] = Identity(user_id, project_id, roles)
    return tokens


class NoAuth2:
    name = 'noauth2'

    def identify(self, headers) -> Identity:
        token = headers.get(TOKEN_HEADER)
        if not token:
            raise exception.NotAuthenticated(
                reason='send %s: USER:PROJECT' % TOKEN_HEADER)
        user_id, _sep, project_id = token.partition(':')
        user_id = _checked_id(user_id, 'user')
        project_id = headers.get(PROJECT_HEADER) or project_id or user_id
        project_id = _checked_id(project_id, 'project')
        roles = (ADMIN_ROLE,) if user_id == NOAUTH_ADMIN_USER else ()
        return Identity(user_id, project_id, roles)


class StaticTokenAuth:
    name = 'token'

    def __init__(self, tokens: dict[str, Identity]):
        self._tokens = dict(tokens)

    def identify(self, headers) -> Identity:
        token = headers.get(TOKEN_HEADER)
        if not token:
            raise exception.NotAuthenticated(
                reason='send a token in %s' % TOKEN_HEADER)
        identity = self._tokens.get(token)
        if identity is None:
            raise exception.NotAuthenticated(reason='the token is invalid')
        return identity


class KeystoneAuth:
    """Who keystonemiddleware's ``auth_token`` says made the request.

    ``auth_token`` runs in front of the application
    (``nova.api.wsgi.make_app``) with ``delay_auth_decision``, so version
    discovery stays public: it removes any identity header a client sent,
    validates the token against Keystone and, when the token is good,
    sets ``X-Identity-Status: Confirmed`` with the user, the project and
    the roles; this reads them.
    """
    name = 'keystone'

    def identify(self, headers) -> Identity:
        if headers.get('X-Identity-Status') != 'Confirmed':
            raise exception.NotAuthenticated(
                reason='send a valid Keystone token in %s' % TOKEN_HEADER)
        project_id = headers.get('X-Project-Id')
        if not project_id:
            raise exception.NotAuthenticated(
                reason='the token is not scoped to a project')
        roles = tuple(role.strip()
                      for role in headers.get('X-Roles', '').split(',')
                      if role.strip())
        return Identity(_checked_id(headers.get('X-User-Id', ''), 'user'),
                        _checked_id(project_id, 'project'), roles)


def from_config(conf) -> NoAuth2 | StaticTokenAuth | KeystoneAuth:
    if conf.api.auth_strategy == 'token':
        return StaticTokenAuth(parse_static_tokens(conf.api.static_tokens))
    if conf.api.auth_strategy == 'keystone':
        return KeystoneAuth()
    return NoAuth2()


def make_context(identity: Identity, headers,
                 request_id: str) -> nova_context.RequestContext:
    global_id = headers.get(GLOBAL_REQUEST_ID_HEADER)
    if global_id is not None and not _REQUEST_ID_RE.match(global_id):
        global_id = None
    return nova_context.RequestContext(
        user_id=identity.user_id, project_id=identity.project_id,
        is_admin=identity.is_admin, roles=identity.roles,
        request_id=request_id, global_request_id=global_id)
