"""``nova keypair-*`` and ``boot --key-name`` against the real API."""

import os

from nova import objects
from nova.objects import keypair as keypair_obj
from nova.tests import sample_keys
from nova.tests.unit.api.openstack import fakes
from nova.tests.unit.cli import test_shell


class KeypairCommandsTest(test_shell.ShellTestCase):

    def names(self, user_id='alice'):
        return [k.name for k in keypair_obj.KeyPair.get_by_user(self.ctx,
                                                                user_id)]

    def pub_key_file(self, text=sample_keys.RSA):
        path = os.path.join(self.tmp, 'key.pub')
        with open(path, 'w') as f:
            f.write(text + '\n')
        return path

    def test_add_generates_and_prints_the_private_key(self):
        code, out, err = self.nova('keypair-add', 'gen',
                                   token=fakes.USER_TOKEN)
        self.assertEqual(0, code, err)
        self.assertTrue(out.startswith('-----BEGIN RSA PRIVATE KEY-----'))
        self.assertEqual(['gen'], self.names())

    def test_add_imports_a_public_key_file(self):
        code, out, err = self.nova('keypair-add', '--pub-key',
                                   self.pub_key_file(), 'mine',
                                   token=fakes.USER_TOKEN)
        self.assertEqual((0, ''), (code, out), err)
        (keypair,) = keypair_obj.KeyPair.get_by_user(self.ctx, 'alice')
        self.assertEqual(('mine', sample_keys.RSA_FINGERPRINT),
                         (keypair.name, keypair.fingerprint))

    def test_add_refusals_change_nothing(self):
        for argv in (['--pub-key', self.pub_key_file('not a key'), 'k'],
                     ['--pub-key', os.path.join(self.tmp, 'none'), 'k'],
                     ['bad/name']):
            with self.subTest(argv=argv):
                code, _out, err = self.nova('keypair-add', *argv,
                                            token=fakes.USER_TOKEN)
                self.assertEqual(1, code)
                self.assertTrue(err.startswith('ERROR'), err)
        self.assertEqual([], self.names())

    def test_list_show_delete(self):
        self.nova('keypair-add', '--pub-key', self.pub_key_file(), 'k1',
                  token=fakes.USER_TOKEN)
        code, out, _err = self.nova('keypair-list', token=fakes.USER_TOKEN)
        self.assertEqual(0, code)
        self.assertIn('| Name | Type | Fingerprint', out)
        self.assertIn('| k1   | ssh  | %s |' % sample_keys.RSA_FINGERPRINT,
                      out)
        code, out, _err = self.nova('keypair-show', 'k1',
                                    token=fakes.USER_TOKEN)
        self.assertEqual(0, code)
        self.assertIn('| user_id ', out)
        self.assertIn('Public key: %s\n' % sample_keys.RSA, out)
        self.assertEqual(0, self.nova('keypair-delete', 'k1',
                                      token=fakes.USER_TOKEN)[0])
        self.assertEqual([], self.names())
        code, _out, err = self.nova('keypair-delete', 'k1',
                                    token=fakes.USER_TOKEN)
        self.assertEqual(1, code)
        self.assertIn('not found', err)

    def test_user_for_administrators(self):
        self.nova('keypair-add', '--pub-key', self.pub_key_file(), 'bobs',
                  token='bob:demo')
        code, out, _err = self.nova('keypair-list', '--user', 'bob')
        self.assertEqual(0, code)
        self.assertIn('bobs', out)
        code, _out, err = self.nova('keypair-delete', '--user', 'bob',
                                    'bobs', token=fakes.USER_TOKEN)
        self.assertEqual(1, code)
        self.assertIn('403', err)
        self.assertEqual(['bobs'], self.names('bob'))
        code, _out, err = self.nova('keypair-delete', '--user', 'bob',
                                    'bobs', version='2.9')
        self.assertIn('2.10', err)
        self.assertEqual(['bobs'], self.names('bob'))
        self.assertEqual(0, self.nova('keypair-delete', '--user', 'bob',
                                      'bobs')[0])
        self.assertEqual([], self.names('bob'))

    def test_boot_with_a_key_name(self):
        self.nova('keypair-add', '--pub-key', self.pub_key_file(), 'k1',
                  token=fakes.USER_TOKEN)
        code, out, err = self.nova('boot', '--image', 'cirros', '--flavor',
                                   'm1.tiny', '--key-name', 'k1', 'vm',
                                   token=fakes.USER_TOKEN)
        self.assertEqual(0, code, err)
        self.assertIn('| key_name ', out)
        (instance,) = objects.Instance.get_all(self.ctx)
        self.assertEqual('k1', instance.key_name)
        code, _out, err = self.nova('boot', '--image', 'cirros', '--flavor',
                                    'm1.tiny', '--key-name', 'nope', 'vm2',
                                    token=fakes.USER_TOKEN)
        self.assertEqual(1, code)
        self.assertEqual(1, len(objects.Instance.get_all(self.ctx)))
