"""The noauth2, static token and keystone strategies."""

from nova.api.openstack import auth
from nova import exception
from nova.tests import base


class NoAuth2Test(base.TestCase):

    def identify(self, headers):
        return auth.NoAuth2().identify(headers)

    def test_user_and_project(self):
        identity = self.identify({'X-Auth-Token': 'alice:demo'})
        self.assertEqual(('alice', 'demo', False),
                         (identity.user_id, identity.project_id,
                          identity.is_admin))

    def test_token_without_colon_is_user_and_project(self):
        identity = self.identify({'X-Auth-Token': 'bob'})
        self.assertEqual(('bob', 'bob'), (identity.user_id,
                                          identity.project_id))

    def test_project_header_overrides(self):
        identity = self.identify({'X-Auth-Token': 'bob:one',
                                  'X-Auth-Project-Id': 'two'})
        self.assertEqual('two', identity.project_id)

    def test_admin_user_is_admin(self):
        self.assertTrue(self.identify({'X-Auth-Token': 'admin:x'}).is_admin)
        self.assertFalse(self.identify({'X-Auth-Token': 'x:admin'}).is_admin)

    def test_missing_or_invalid_token_is_401(self):
        for headers in ({}, {'X-Auth-Token': ''},
                        {'X-Auth-Token': ':demo'},
                        {'X-Auth-Token': 'a b:demo'},
                        {'X-Auth-Token': '../x:demo'}):
            with self.subTest(headers=headers):
                with self.assertRaises(exception.NotAuthenticated) as c:
                    self.identify(headers)
                self.assertEqual(401, c.exception.code)


class StaticTokenTest(base.TestCase):

    def test_parse(self):
        tokens = auth.parse_static_tokens([
            's3cret:alice:demo', ' 0ps:operator:admin:admin, member '])
        self.assertEqual(auth.Identity('alice', 'demo', ()),
                         tokens['s3cret'])
        self.assertEqual(('admin', 'member'), tokens['0ps'].roles)
        self.assertTrue(tokens['0ps'].is_admin)

    def test_parse_refuses_bad_entries_without_echoing_them(self):
        for lines in (['onlytoken'], ['t::demo'], ['a:b:c:d:e'],
                      ['t:alice:demo', 't:bob:demo'], ['t:a/b:demo']):
            with self.subTest(lines=lines):
                with self.assertRaises(exception.InvalidConfiguration) as c:
                    auth.parse_static_tokens(lines)
                self.assertNotIn(lines[-1].split(':')[0] + ':',
                                 c.exception.format_message())

    def test_identify(self):
        strategy = auth.StaticTokenAuth(
            auth.parse_static_tokens(['s3cret:alice:demo:admin']))
        identity = strategy.identify({'X-Auth-Token': 's3cret'})
        self.assertEqual('alice', identity.user_id)
        self.assertTrue(identity.is_admin)
        for headers in ({}, {'X-Auth-Token': 'alice:demo'},
                        {'X-Auth-Token': 's3cre'}):
            with self.subTest(headers=headers):
                self.assertRaises(exception.NotAuthenticated,
                                  strategy.identify, headers)

    def test_from_config(self):
        self.flags(auth_strategy='token', static_tokens=['t:u:p'],
                   group='api')
        from nova.conf import CONF
        strategy = auth.from_config(CONF)
        self.assertIsInstance(strategy, auth.StaticTokenAuth)
        self.flags(auth_strategy='noauth2', group='api')
        self.assertIsInstance(auth.from_config(CONF), auth.NoAuth2)


class KeystoneAuthTest(base.TestCase):
    """What keystonemiddleware's auth_token leaves in the headers."""

    CONFIRMED = {'X-Identity-Status': 'Confirmed',
                 'X-User-Id': '5f1c0c0e9f7a4a3c8d1e2f3a4b5c6d7e',
                 'X-Project-Id': '0a1b2c3d4e5f60718293a4b5c6d7e8f9',
                 'X-Roles': 'member, reader'}

    def identify(self, **changes):
        headers = dict(self.CONFIRMED, **changes)
        return auth.KeystoneAuth().identify(
            {k: v for k, v in headers.items() if v is not None})

    def test_a_confirmed_identity(self):
        identity = self.identify()
        self.assertEqual(('5f1c0c0e9f7a4a3c8d1e2f3a4b5c6d7e',
                          '0a1b2c3d4e5f60718293a4b5c6d7e8f9',
                          ('member', 'reader'), False),
                         (identity.user_id, identity.project_id,
                          identity.roles, identity.is_admin))
        self.assertTrue(self.identify(**{'X-Roles': 'admin'}).is_admin)

    def test_no_confirmed_token_is_401(self):
        for changes in ({'X-Identity-Status': 'Invalid'},
                        {'X-Identity-Status': None},
                        {'X-Project-Id': None},
                        {'X-User-Id': 'bad id'}):
            with self.subTest(changes=changes):
                with self.assertRaises(exception.NotAuthenticated) as c:
                    self.identify(**changes)
                self.assertEqual(401, c.exception.code)

    def test_from_config(self):
        self.flags(auth_strategy='keystone', group='api')
        from nova.conf import CONF
        self.assertIsInstance(auth.from_config(CONF), auth.KeystoneAuth)


class MakeContextTest(base.TestCase):

    def test_context_carries_identity_and_request_ids(self):
        global_id = 'req-3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'
        ctx = auth.make_context(auth.Identity('u', 'p', ('admin',)),
                                {'X-OpenStack-Request-ID': global_id},
                                'req-local')
        self.assertEqual(('u', 'p', True, 'req-local', global_id),
                         (ctx.user_id, ctx.project_id, ctx.is_admin,
                          ctx.request_id, ctx.global_request_id))

    def test_malformed_global_request_id_is_dropped(self):
        ctx = auth.make_context(auth.Identity('u', 'p'),
                                {'X-OpenStack-Request-ID': 'x\r\ny'}, 'r')
        self.assertIsNone(ctx.global_request_id)
