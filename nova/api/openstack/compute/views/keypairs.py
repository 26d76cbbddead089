"""How a key pair looks in the API, by microversion: ``type`` from 2.2.

The list shows name, public key and fingerprint (each wrapped in its own
``{"keypair": ...}``, as the reference does); create adds the owner and,
for a generated pair, the private key; show adds the row's id and times
(``deleted`` is always false: a deleted pair is gone).
"""

from nova.api.openstack import common


def _with_type(req, keypair, view: dict) -> dict:
    if req.is_version('2.2'):
        view['type'] = keypair.type
    return view


def listed(req, keypair) -> dict:
    return {'keypair': _with_type(req, keypair, {
        'name': keypair.name,
        'public_key': keypair.public_key,
        'fingerprint': keypair.fingerprint,
    })}


def created(req, keypair, private_key: str | None) -> dict:
    view = {'name': keypair.name, 'public_key': keypair.public_key,
            'fingerprint': keypair.fingerprint, 'user_id': keypair.user_id}
    if private_key is not None:
        view['private_key'] = private_key
    return {'keypair': _with_type(req, keypair, view)}


def shown(req, keypair) -> dict:
    return {'keypair': _with_type(req, keypair, {
        'name': keypair.name,
        'public_key': keypair.public_key,
        'fingerprint': keypair.fingerprint,
        'user_id': keypair.user_id,
        'id': keypair.id,
        'created_at': common.dbtime(keypair.created_at),
        'updated_at': common.dbtime(keypair.updated_at),
        'deleted': False,
        'deleted_at': None,
    })}
