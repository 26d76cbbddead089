"""/os-keypairs: create or import, list, show, delete, by microversion;
and key_name in POST /servers."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova import objects
from nova.tests import sample_keys
from nova.tests.unit.api.openstack import fakes

PATH = '/v2.1/os-keypairs'
LISTED = {'name', 'public_key', 'fingerprint'}
CREATED = LISTED | {'user_id'}
SHOWN = CREATED | {'id', 'created_at', 'updated_at', 'deleted',
                   'deleted_at'}


class KeypairsTestCase(fakes.APITestCase):

    def rows(self):
        with db_api.session(read_only=True) as session:
            return [(r.user_id, r.name, r.type, r.public_key)
                    for r in session.scalars(
                        sa.select(control_models.KeyPair).order_by(
                            control_models.KeyPair.id))]

    def create(self, token=fakes.USER_TOKEN, version=None, **keypair):
        return self.request('POST', PATH, {'keypair': keypair},
                            token=token, version=version)

    def import_rsa(self, name='k1', **kwargs):
        response = self.create(name=name, public_key=sample_keys.RSA,
                               **kwargs)
        self.assertIn(response.status_int, (200, 201), response.text)
        return response


class CreateTest(KeypairsTestCase):

    def test_import_at_21(self):
        response = self.import_rsa()
        self.assertEqual(200, response.status_int)
        keypair = response.json['keypair']
        self.assertEqual(CREATED, set(keypair))
        self.assertEqual(('k1', 'alice', sample_keys.RSA,
                          sample_keys.RSA_FINGERPRINT),
                         (keypair['name'], keypair['user_id'],
                          keypair['public_key'], keypair['fingerprint']))
        self.assertEqual([('alice', 'k1', 'ssh', sample_keys.RSA)],
                         self.rows())

    def test_import_from_22_has_a_type_and_answers_201(self):
        response = self.import_rsa(version='2.2')
        self.assertEqual(201, response.status_int)
        self.assertEqual(CREATED | {'type'}, set(response.json['keypair']))
        self.assertEqual('ssh', response.json['keypair']['type'])

    def test_generate_returns_the_private_key_once(self):
        for version, status, keys in (('2.1', 200, CREATED),
                                      ('2.91', 201, CREATED | {'type'})):
            with self.subTest(version=version):
                response = self.create(name='gen-' + version[2:],
                                       version=version)
                self.assertEqual(status, response.status_int, response.text)
                keypair = response.json['keypair']
                self.assertEqual(keys | {'private_key'}, set(keypair))
                self.assertTrue(keypair['private_key'].startswith(
                    '-----BEGIN RSA PRIVATE KEY-----'))
                self.assertTrue(keypair['public_key'].startswith('ssh-rsa '))
                shown = self.request(
                    'GET', PATH + '/' + keypair['name'],
                    token=fakes.USER_TOKEN).json['keypair']
                self.assertNotIn('private_key', shown)
        # Only public keys are stored.
        for row in self.rows():
            self.assertNotIn('PRIVATE', repr(row))

    def test_x509_from_22(self):
        response = self.create(name='cert', type='x509', version='2.2')
        self.assertEqual(201, response.status_int, response.text)
        certificate = response.json['keypair']['public_key']
        self.assertTrue(certificate.startswith('-----BEGIN CERTIFICATE'))
        imported = self.create(name='again', type='x509',
                               public_key=certificate, version='2.2')
        self.assertEqual(201, imported.status_int, imported.text)
        self.assertEqual(response.json['keypair']['fingerprint'],
                         imported.json['keypair']['fingerprint'])
        self.assertEqual(['x509', 'x509'], [r[2] for r in self.rows()])

    def test_bad_input_is_400_and_writes_nothing(self):
        bodies = [
            ('2.1', {}),
            ('2.1', {'name': ''}),
            ('2.1', {'name': 'a/b', 'public_key': sample_keys.RSA}),
            ('2.1', {'name': 'a@b', 'public_key': sample_keys.RSA}),
            ('2.1', {'name': 'x' * 256, 'public_key': sample_keys.RSA}),
            ('2.1', {'name': 'k', 'public_key': 'ssh-rsa AAAA'}),
            ('2.1', {'name': 'k', 'public_key': 'not a key'}),
            ('2.1', {'name': 'k', 'type': 'ssh',
                     'public_key': sample_keys.RSA}),
            ('2.2', {'name': 'k', 'type': 'pgp',
                     'public_key': sample_keys.RSA}),
            ('2.2', {'name': 'k', 'type': 'x509',
                     'public_key': sample_keys.RSA}),
            ('2.2', {'name': 'k', 'user_id': 'bob',
                     'public_key': sample_keys.RSA}),
            ('2.91', {'name': 'a.b', 'public_key': sample_keys.RSA}),
            ('2.92', {'name': 'k'}),
            ('2.92', {'name': '..', 'public_key': sample_keys.RSA}),
            ('2.92', {'name': 'k', 'public_key': sample_keys.RSA,
                      'extra': 1}),
        ]
        for version, keypair in bodies:
            with self.subTest(version=version, keypair=keypair):
                self.assertFault(self.create(version=version, **keypair),
                                 400, 'badRequest')
        self.assertEqual([], self.rows())

    def test_names_with_at_and_dot_from_292(self):
        response = self.create(name='me@host.example',
                               public_key=sample_keys.ED25519,
                               version='2.92')
        self.assertEqual(201, response.status_int, response.text)
        self.assertEqual(sample_keys.ED25519_FINGERPRINT,
                         response.json['keypair']['fingerprint'])
        shown = self.request('GET', PATH + '/me@host.example',
                             token=fakes.USER_TOKEN)
        self.assertEqual(200, shown.status_int, shown.text)

    def test_a_duplicate_name_of_the_same_user_is_409(self):
        self.import_rsa()
        self.assertFault(self.create(name='k1', public_key=sample_keys.ECDSA),
                         409, 'conflictingRequest')
        # Another user may have a pair of that name.
        self.import_rsa(token='bob:demo')
        self.assertEqual([('alice', 'k1', 'ssh', sample_keys.RSA),
                          ('bob', 'k1', 'ssh', sample_keys.RSA)],
                         self.rows())

    def test_user_id_from_210_for_administrators(self):
        response = self.import_rsa(token=fakes.ADMIN_TOKEN, user_id='bob',
                                   version='2.10')
        self.assertEqual('bob', response.json['keypair']['user_id'])
        self.assertFault(self.create(name='k2', public_key=sample_keys.RSA,
                                     user_id='bob', version='2.10'),
                         403, 'forbidden')
        # Naming oneself is allowed.
        self.import_rsa(name='k3', user_id='alice', version='2.10')
        self.assertEqual([('bob', 'k1'), ('alice', 'k3')],
                         [r[:2] for r in self.rows()])


class ListShowDeleteTest(KeypairsTestCase):

    def setUp(self):
        super().setUp()
        for name in ('k1', 'k2', 'k3'):
            self.import_rsa(name)
        self.import_rsa('bobs', token='bob:demo')

    def get(self, path='', **kwargs):
        kwargs.setdefault('token', fakes.USER_TOKEN)
        return self.request('GET', PATH + path, **kwargs)

    def test_list_by_microversion(self):
        for version, keys in (('2.1', LISTED), ('2.2', LISTED | {'type'}),
                              ('2.95', LISTED | {'type'})):
            with self.subTest(version=version):
                body = self.get(version=version).json
                self.assertEqual({'keypairs'}, set(body))
                self.assertEqual(['k1', 'k2', 'k3'],
                                 [k['keypair']['name']
                                  for k in body['keypairs']])
                for item in body['keypairs']:
                    self.assertEqual({'keypair'}, set(item))
                    self.assertEqual(keys, set(item['keypair']))

    def test_limit_and_marker_from_235(self):
        # Below 2.35 they are not acted on.
        self.assertEqual(3, len(self.get('?limit=1').json['keypairs']))
        first = self.get('?limit=2', version='2.35').json
        self.assertEqual(['k1', 'k2'], [k['keypair']['name']
                                        for k in first['keypairs']])
        self.assertEqual([{'rel': 'next', 'href': 'http://localhost/v2.1/'
                           'os-keypairs?limit=2&marker=k2'}],
                         first['keypairs_links'])
        rest = self.get('?limit=2&marker=k2', version='2.35').json
        self.assertEqual({'keypairs'}, set(rest))
        self.assertEqual(['k3'], [k['keypair']['name']
                                  for k in rest['keypairs']])
        self.assertFault(self.get('?marker=bobs', version='2.35'), 400,
                         'badRequest')

    def test_user_id_query_from_210_for_administrators(self):
        admin = self.get('?user_id=bob', token=fakes.ADMIN_TOKEN,
                         version='2.10').json
        self.assertEqual(['bobs'], [k['keypair']['name']
                                    for k in admin['keypairs']])
        # Below 2.10 the parameter is not acted on.
        self.assertEqual([], self.get('?user_id=bob',
                                      token=fakes.ADMIN_TOKEN).json[
                                          'keypairs'])
        for path in ('?user_id=bob', '/bobs?user_id=bob'):
            with self.subTest(path=path):
                self.assertFault(self.get(path, version='2.10'), 403,
                                 'forbidden')
        shown = self.get('/bobs?user_id=bob', token=fakes.ADMIN_TOKEN,
                         version='2.10').json['keypair']
        self.assertEqual('bob', shown['user_id'])

    def test_unknown_query_is_400_from_275(self):
        self.assertEqual(3, len(self.get('?foo=1',
                                         version='2.74').json['keypairs']))
        self.assertFault(self.get('?foo=1', version='2.75'), 400,
                         'badRequest')

    def test_show_by_microversion(self):
        for version, keys in (('2.1', SHOWN), ('2.2', SHOWN | {'type'})):
            with self.subTest(version=version):
                shown = self.get('/k2', version=version).json
                self.assertEqual({'keypair'}, set(shown))
                self.assertEqual(keys, set(shown['keypair']))
                self.assertEqual(('k2', 'alice', False),
                                 (shown['keypair']['name'],
                                  shown['keypair']['user_id'],
                                  shown['keypair']['deleted']))

    def test_pairs_of_others_and_unknown_names_are_404(self):
        for name in ('bobs', 'nope', 'k1%20'):
            with self.subTest(name=name):
                self.assertFault(self.get('/' + name), 404, 'itemNotFound')
                self.assertFault(self.request('DELETE', PATH + '/' + name,
                                              token=fakes.USER_TOKEN),
                                 404, 'itemNotFound')
        self.assertEqual(4, len(self.rows()))

    def test_delete_by_microversion(self):
        response = self.request('DELETE', PATH + '/k1',
                                token=fakes.USER_TOKEN)
        self.assertEqual(202, response.status_int, response.text)
        response = self.request('DELETE', PATH + '/k2',
                                token=fakes.USER_TOKEN, version='2.2')
        self.assertEqual(204, response.status_int, response.text)
        self.assertEqual('', response.text)
        self.assertEqual([('alice', 'k3'), ('bob', 'bobs')],
                         [r[:2] for r in self.rows()])

    def test_delete_for_another_user_from_210(self):
        self.assertFault(self.request('DELETE', PATH + '/bobs?user_id=bob',
                                      token=fakes.USER_TOKEN,
                                      version='2.10'), 403, 'forbidden')
        response = self.request('DELETE', PATH + '/bobs?user_id=bob',
                                token=fakes.ADMIN_TOKEN, version='2.10')
        self.assertEqual(204, response.status_int, response.text)
        self.assertEqual(['k1', 'k2', 'k3'], [r[1] for r in self.rows()])


class ServerKeyNameTest(KeypairsTestCase):

    def boot(self, key_name, token=fakes.USER_TOKEN):
        server = {'name': 'vm', 'imageRef': fakes.IMAGE.id,
                  'flavorRef': '1', 'key_name': key_name}
        return self.request('POST', '/v2.1/servers', {'server': server},
                            token=token)

    def test_the_server_shows_its_key_name(self):
        self.import_rsa()
        response = self.boot('k1')
        self.assertEqual(202, response.status_int, response.text)
        server_id = response.json['server']['id']
        shown = self.request('GET', '/v2.1/servers/%s' % server_id,
                             token=fakes.USER_TOKEN).json['server']
        self.assertEqual('k1', shown['key_name'])
        self.assertEqual('k1', objects.Instance.get_by_uuid(
            self.ctx, server_id).key_name)
        # A server created without one shows null.
        plain = self.make_instance()
        shown = self.request('GET', '/v2.1/servers/%s' % plain.uuid,
                             token=fakes.USER_TOKEN).json['server']
        self.assertIsNone(shown['key_name'])

    def test_a_key_the_user_does_not_have_is_400_and_creates_nothing(self):
        self.import_rsa('bobs', token='bob:demo')
        for key_name in ('nope', 'bobs', ''):
            with self.subTest(key_name=key_name):
                self.assertFault(self.boot(key_name), 400, 'badRequest')
        self.assertEqual([], objects.Instance.get_all(
            self.ctx, include_deleted=True))
        self.assertEqual([], self.compute_rpc.casts)
