"""Key material of key pairs: checking public keys, fingerprints, and
generating a pair.

An SSH public key is checked by reading it, field by field, in the wire
form its base64 holds (RFC 4253, 5656 and 8709): the type named before
the base64 must be the one inside it, every field must be there and
nothing may follow. Its fingerprint is the MD5 of that blob, as colon
separated hex (what the Compute API shows). An X.509 certificate is read
by ``openssl``; its fingerprint is its SHA-1.

A generated pair is made by ``openssl`` (an RSA key) and ``ssh-keygen``
(its public half) through pipes only: the private key never touches a
disk, so nothing has to be removed afterwards, and it is returned to the
caller once and never stored.

Example::

    fingerprint = ssh_fingerprint('ssh-ed25519 AAAAC3... me@host')
    generated = generate(SSH)          # GeneratedKey(public_key, private_key)
"""

import base64
import binascii
import dataclasses
import hashlib
import struct

from oslo_concurrency import processutils

from nova import exception

SSH = 'ssh'
X509 = 'x509'
RSA_BITS = 2048
# The comment of a generated public key (Nova writes the same).
GENERATED_COMMENT = 'Generated-by-Nova'
# Certificates generated for x509 key pairs.
_X509_SUBJECT = '/O=OpenStack/OU=Nova/CN=keypair'
_X509_DAYS = '3650'

_ECDSA_POINT_LENGTHS = {'nistp256': 65, 'nistp384': 97, 'nistp521': 133}
_ED25519_KEY_LENGTH = 32


@dataclasses.dataclass(frozen=True)
class GeneratedKey:
    public_key: str
    private_key: str


def _invalid(reason: str) -> exception.InvalidKeypair:
    return exception.InvalidKeypair(reason=reason)


class _Reader:
    """The fields of an SSH wire-format blob, read in order."""

    def __init__(self, blob: bytes):
        self.blob = blob
        self.offset = 0

    def string(self) -> bytes:
        if self.offset + 4 > len(self.blob):
            raise _invalid('the public key is truncated')
        (length,) = struct.unpack_from('>I', self.blob, self.offset)
        start = self.offset + 4
        if start + length > len(self.blob):
            raise _invalid('the public key is truncated')
        self.offset = start + length
        return self.blob[start:self.offset]

    def positive_mpint(self) -> None:
        value = self.string()
        if not value or value[0] & 0x80 or not any(value):
            raise _invalid('the public key has a malformed number')

    def end(self) -> None:
        if self.offset != len(self.blob):
            raise _invalid('the public key has trailing data')


def _check_blob(key_type: str, blob: bytes) -> None:
    reader = _Reader(blob)
    if reader.string() != key_type.encode('ascii'):
        raise _invalid('the key type does not match the key')
    if key_type == 'ssh-rsa':
        for _number in ('e', 'n'):
            reader.positive_mpint()
    elif key_type == 'ssh-dss':
        for _number in ('p', 'q', 'g', 'y'):
            reader.positive_mpint()
    elif key_type == 'ssh-ed25519':
        if len(reader.string()) != _ED25519_KEY_LENGTH:
            raise _invalid('an ed25519 key is 32 bytes')
    else:
        curve = key_type[len('ecdsa-sha2-'):]
        if reader.string() != curve.encode('ascii'):
            raise _invalid('the curve does not match the key type')
        point = reader.string()
        if len(point) != _ECDSA_POINT_LENGTHS[curve] or point[0] != 4:
            raise _invalid('the public key has a malformed point')
    reader.end()


SSH_KEY_TYPES = frozenset({'ssh-rsa', 'ssh-dss', 'ssh-ed25519',
                           *('ecdsa-sha2-%s' % c
                             for c in _ECDSA_POINT_LENGTHS)})


def ssh_blob(public_key: str) -> bytes:
    """The wire-format blob of an OpenSSH public key line (``type base64
    [comment]``); ``InvalidKeypair`` unless it is a well-formed key of a
    known type."""
    fields = public_key.strip().split(None, 2)
    if len(fields) < 2 or '\n' in public_key.strip():
        raise _invalid('a public key is one line: its type, its base64 '
                       'data and an optional comment')
    key_type, data = fields[0], fields[1]
    if key_type not in SSH_KEY_TYPES:
        raise _invalid('unknown key type %s (expected one of %s)'
                       % (key_type[:50], ', '.join(sorted(SSH_KEY_TYPES))))
    try:
        blob = base64.b64decode(data.encode('ascii'), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise _invalid('the key data is not base64')
    _check_blob(key_type, blob)
    return blob


def _colon_hex(digest: bytes) -> str:
    return ':'.join('%02x' % byte for byte in digest)


def ssh_fingerprint(public_key: str) -> str:
    """The MD5 fingerprint of a valid OpenSSH public key (or raise)."""
    return _colon_hex(hashlib.md5(ssh_blob(public_key),
                                  usedforsecurity=False).digest())


def _openssl(*args, process_input: str) -> str:
    stdout, _stderr = processutils.execute(
        'openssl', *args, process_input=process_input)
    return stdout


def x509_fingerprint(certificate: str) -> str:
    """The SHA-1 fingerprint of a PEM certificate (``InvalidKeypair`` if
    ``openssl`` cannot read one)."""
    if not certificate.lstrip().startswith('-----BEGIN CERTIFICATE-----'):
        raise _invalid('an x509 key pair takes a PEM certificate')
    try:
        out = _openssl('x509', '-noout', '-fingerprint', '-sha1',
                       process_input=certificate)
    except processutils.ProcessExecutionError:
        raise _invalid('the certificate cannot be read')
    hex_digits = out.strip().split('=', 1)[-1].replace(':', '')
    try:
        return _colon_hex(bytes.fromhex(hex_digits))
    except ValueError:
        raise _invalid('the certificate cannot be read')


def fingerprint(key_type: str, public_key: str) -> str:
    if key_type == X509:
        return x509_fingerprint(public_key)
    return ssh_fingerprint(public_key)


def generate(key_type: str) -> GeneratedKey:
    """A new RSA key: its private key (PEM) and, for ``ssh``, its OpenSSH
    public key, for ``x509`` a self-signed certificate of it."""
    private_key = _openssl('genrsa', '-traditional', str(RSA_BITS),
                           process_input='')
    if key_type == X509:
        public_key = _openssl('req', '-new', '-x509', '-key', '/dev/stdin',
                              '-subj', _X509_SUBJECT, '-days', _X509_DAYS,
                              process_input=private_key)
    else:
        stdout, _stderr = processutils.execute(
            'ssh-keygen', '-y', '-f', '/dev/stdin',
            process_input=private_key)
        public_key = '%s %s\n' % (stdout.strip(), GENERATED_COMMENT)
    return GeneratedKey(public_key=public_key, private_key=private_key)
