"""The key pair workflow: create (generate or import), find, delete.

A key pair is named per user. Importing checks that the public key is
one of its type (an OpenSSH public key, or a PEM certificate for
``x509``) before anything is written; generating returns the private key
to the caller once, in ``CreatedKeyPair``, and never stores it.

Example::

    created = keypairs.create(ctx, 'alice', 'deploy', public_key=line)
    keypairs.get(ctx, 'alice', 'deploy')
    keypairs.delete(ctx, 'alice', 'deploy')
"""

import dataclasses

from oslo_utils import excutils

from nova.compute import key_material
from nova.compute import quotas
from nova import exception
from nova.objects import keypair as keypair_obj


@dataclasses.dataclass(frozen=True)
class CreatedKeyPair:
    keypair: 'keypair_obj.KeyPair'
    # The private key of a generated pair (None for an imported one):
    # shown once, kept nowhere.
    private_key: str | None = None


def create(context, user_id: str, name: str,
           key_type: str = key_material.SSH,
           public_key: str | None = None) -> CreatedKeyPair:
    """Import ``public_key``, or generate a pair when it is None.

    ``InvalidKeypair`` (400) for a public key that is not one of
    ``key_type``, ``KeyPairExists`` (409) when the user has a pair of
    that name already, ``KeypairLimitExceeded`` (403) when the user has
    as many as the ``key_pairs`` quota allows; either way nothing is
    written.
    """
    quotas.check_key_pairs(context, user_id)
    private_key = None
    if public_key is None:
        generated = key_material.generate(key_type)
        public_key, private_key = generated.public_key, generated.private_key
    fingerprint = key_material.fingerprint(key_type, public_key)
    keypair = keypair_obj.KeyPair(
        name=name, user_id=user_id, fingerprint=fingerprint,
        public_key=public_key, type=key_type).create()
    try:
        quotas.check_key_pairs(context, user_id, recheck=True)
    except exception.KeypairLimitExceeded:
        # Raced past the first check with another create: this pair
        # goes.
        with excutils.save_and_reraise_exception():
            keypair_obj.KeyPair.destroy_by_name(context, user_id, name)
    return CreatedKeyPair(keypair, private_key)


def get(context, user_id: str, name: str) -> 'keypair_obj.KeyPair':
    return keypair_obj.KeyPair.get_by_name(context, user_id, name)


def get_all(context, user_id: str) -> list['keypair_obj.KeyPair']:
    return keypair_obj.KeyPair.get_by_user(context, user_id)


def delete(context, user_id: str, name: str) -> None:
    keypair_obj.KeyPair.destroy_by_name(context, user_id, name)
