"""Key pairs: a user's public keys, by name.

A key pair belongs to a user (not a project): its name is unique among
that user's key pairs. Only the public half is ever stored; the private
key of a pair the API generates is returned once and forgotten
(``nova/compute/keypairs.py``).

Example::

    pair = KeyPair(name='deploy', user_id='alice', public_key='ssh-rsa ..',
                   fingerprint='a1:..', type='ssh').create()
    KeyPair.get_by_name(ctx, 'alice', 'deploy')
    KeyPair.destroy_by_name(ctx, 'alice', 'deploy')
"""

import dataclasses
import datetime

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import base

SSH = 'ssh'
X509 = 'x509'
TYPES = (SSH, X509)


@dataclasses.dataclass
class KeyPair:
    name: str
    user_id: str
    fingerprint: str
    public_key: str
    type: str = SSH
    id: int | None = None
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None

    @classmethod
    def _from_db_object(cls, db_obj) -> 'KeyPair':
        return cls(**{f.name: getattr(db_obj, f.name)
                      for f in dataclasses.fields(cls)})

    def create(self) -> 'KeyPair':
        """Insert the pair; ``KeyPairExists`` when the user has one of
        that name (the unique constraint decides, so two racing creates
        cannot both win)."""
        if self.type not in TYPES:
            raise exception.InvalidKeypair(
                reason='unknown type %r' % (self.type,))
        now = base.utcnow()
        values = {'name': self.name, 'user_id': self.user_id,
                  'fingerprint': self.fingerprint,
                  'public_key': self.public_key, 'type': self.type,
                  'created_at': now, 'updated_at': None}
        try:
            with db_api.session() as session:
                result = session.execute(
                    sa.insert(control_models.KeyPair).values(**values))
        except sa_exc.IntegrityError:
            raise exception.KeyPairExists(key_name=self.name)
        self.id = result.inserted_primary_key[0]
        self.created_at = now
        self.updated_at = None
        return self

    @classmethod
    def get_by_name(cls, context, user_id: str, name: str) -> 'KeyPair':
        with db_api.session(read_only=True) as session:
            db_obj = session.scalars(sa.select(control_models.KeyPair).where(
                control_models.KeyPair.user_id == user_id,
                control_models.KeyPair.name == name)).first()
        if db_obj is None:
            raise exception.KeypairNotFound(name=name, user_id=user_id)
        return cls._from_db_object(db_obj)

    @classmethod
    def get_by_user(cls, context, user_id: str) -> list['KeyPair']:
        """The user's key pairs, oldest first (the order pages follow)."""
        with db_api.session(read_only=True) as session:
            rows = session.scalars(sa.select(control_models.KeyPair).where(
                control_models.KeyPair.user_id == user_id).order_by(
                    control_models.KeyPair.id)).all()
        return [cls._from_db_object(r) for r in rows]

    @classmethod
    def destroy_by_name(cls, context, user_id: str, name: str) -> None:
        with db_api.session() as session:
            deleted = session.execute(sa.delete(control_models.KeyPair).where(
                control_models.KeyPair.user_id == user_id,
                control_models.KeyPair.name == name)).rowcount
        if deleted != 1:
            raise exception.KeypairNotFound(name=name, user_id=user_id)
