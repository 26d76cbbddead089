"""Where the ``nova`` CLI sends its requests, and with which token.

With ``OS_AUTH_URL`` (or ``--os-auth-url``) and no explicit token, the CLI
authenticates as OpenStack clients do: password authentication against
Keystone (keystoneauth1, identity v3) with ``OS_USERNAME``,
``OS_PASSWORD``, ``OS_PROJECT_NAME``, ``OS_USER_DOMAIN_NAME`` and
``OS_PROJECT_DOMAIN_NAME`` (both ``Default`` when unset); the token is the
one Keystone issues and the endpoint the catalog's public ``compute``
endpoint (``OS_REGION_NAME`` picks the region), unless one is given.
Without ``OS_AUTH_URL`` the token is ``--os-token``/``OS_TOKEN``, else
the embedded default's ``admin:admin``, and the endpoint the given one,
else ``http://127.0.0.1:8774/v2.1``.

    endpoint, token = keystone_auth.resolve(args)
"""

import dataclasses

from nova.cli import client as client_mod

DEFAULT_TOKEN = 'admin:admin'


@dataclasses.dataclass(frozen=True)
class Password:
    auth_url: str
    username: str | None
    password: str | None
    project_name: str | None
    user_domain_name: str = 'Default'
    project_domain_name: str = 'Default'
    region_name: str | None = None

    def session_and_auth(self):
        from keystoneauth1.identity import v3
        from keystoneauth1 import session
        missing = [name for name in ('username', 'password', 'project_name')
                   if not getattr(self, name)]
        if missing:
            raise client_mod.UsageError(
                'OS_AUTH_URL is set: Keystone authentication needs %s'
                % ', '.join('OS_' + name.upper() for name in missing))
        auth = v3.Password(
            auth_url=self.auth_url, username=self.username,
            password=self.password, project_name=self.project_name,
            user_domain_name=self.user_domain_name,
            project_domain_name=self.project_domain_name)
        return session.Session(auth=auth), auth

    def authenticate(self, endpoint: str | None) -> tuple[str, str]:
        """(endpoint, token): a token from Keystone and, unless given,
        the compute endpoint of its catalog."""
        from keystoneauth1 import exceptions as ks_exceptions
        sess, auth = self.session_and_auth()
        try:
            token = sess.get_token()
            if endpoint is None:
                endpoint = sess.get_endpoint(
                    service_type='compute', interface='public',
                    region_name=self.region_name)
        except ks_exceptions.ClientException as e:
            raise client_mod.ClientException(
                'Keystone at %s: %s' % (self.auth_url, e))
        if not endpoint:
            raise client_mod.ClientException(
                'the catalog of Keystone at %s has no public compute '
                'endpoint%s' % (self.auth_url, ' in region %s' %
                                self.region_name if self.region_name
                                else ''))
        return endpoint, token


def resolve(args) -> tuple[str, str]:
    """(endpoint, token) for the parsed arguments (module docstring)."""
    if args.os_auth_url and not args.os_token:
        return Password(
            auth_url=args.os_auth_url, username=args.os_username,
            password=args.os_password, project_name=args.os_project_name,
            user_domain_name=args.os_user_domain_name,
            project_domain_name=args.os_project_domain_name,
            region_name=args.os_region_name).authenticate(args.os_endpoint)
    return (args.os_endpoint or client_mod.DEFAULT_ENDPOINT,
            args.os_token or DEFAULT_TOKEN)
