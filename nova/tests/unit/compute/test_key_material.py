"""Checking, fingerprinting and generating key material (real openssl
and ssh-keygen)."""

import base64
import struct

from nova.compute import key_material
from nova import exception
from nova.tests import base
from nova.tests import sample_keys


def _line(key_type, *fields, name=None):
    blob = b''.join(struct.pack('>I', len(f)) + f
                    for f in ((name or key_type).encode(), *fields))
    return '%s %s' % (key_type, base64.b64encode(blob).decode())


class SSHKeyTestCase(base.TestCase):

    def test_fingerprints_are_those_ssh_keygen_prints(self):
        for key, expected in (
                (sample_keys.RSA, sample_keys.RSA_FINGERPRINT),
                (sample_keys.ED25519, sample_keys.ED25519_FINGERPRINT),
                (sample_keys.ECDSA, sample_keys.ECDSA_FINGERPRINT)):
            with self.subTest(key=key[:20]):
                self.assertEqual(expected,
                                 key_material.ssh_fingerprint(key))
                self.assertEqual(expected, key_material.fingerprint(
                    'ssh', '  %s\n' % key))

    def test_what_is_not_a_public_key_is_refused(self):
        rsa_data = sample_keys.RSA.split(' ')[1]
        bad = {
            'empty': '',
            'no data': 'ssh-rsa',
            'unknown type': 'ssh-foo ' + rsa_data,
            'not base64': 'ssh-rsa AAAA!!!!',
            'type mismatch': 'ssh-ed25519 ' + rsa_data,
            'truncated': 'ssh-rsa ' + rsa_data[:40],
            'two lines': sample_keys.RSA + '\n' + sample_keys.RSA,
            'trailing data': _line('ssh-ed25519', b'k' * 32, b'x'),
            'short ed25519': _line('ssh-ed25519', b'k' * 31),
            'negative rsa number': _line('ssh-rsa', b'\x01', b'\x80'),
            'zero rsa number': _line('ssh-rsa', b'\x01', b'\x00'),
            'wrong curve': _line('ecdsa-sha2-nistp256', b'nistp384',
                                 b'\x04' + b'p' * 64),
            'private key': '-----BEGIN RSA PRIVATE KEY-----',
        }
        for why, text in bad.items():
            with self.subTest(why=why):
                self.assertRaises(exception.InvalidKeypair,
                                  key_material.ssh_fingerprint, text)


class GenerateTestCase(base.TestCase):

    def test_ssh_pair(self):
        generated = key_material.generate('ssh')
        self.assertTrue(generated.private_key.startswith(
            '-----BEGIN RSA PRIVATE KEY-----'))
        self.assertTrue(generated.public_key.startswith('ssh-rsa '))
        self.assertTrue(generated.public_key.strip().endswith(
            ' Generated-by-Nova'))
        # The public key is one the check accepts.
        key_material.ssh_fingerprint(generated.public_key)

    def test_x509_pair(self):
        generated = key_material.generate('x509')
        self.assertTrue(generated.private_key.startswith(
            '-----BEGIN RSA PRIVATE KEY-----'))
        fingerprint = key_material.fingerprint('x509', generated.public_key)
        self.assertEqual(20, len(fingerprint.split(':')))

    def test_what_is_not_a_certificate_is_refused(self):
        certificate = key_material.generate('x509').public_key
        for text in (sample_keys.RSA, '-----BEGIN CERTIFICATE-----\nAAAA\n'
                     '-----END CERTIFICATE-----\n',
                     certificate.replace('M', 'N')):
            with self.subTest(text=text[:40]):
                self.assertRaises(exception.InvalidKeypair,
                                  key_material.x509_fingerprint, text)
