"""Key pairs in the database."""

import sqlalchemy as sa

from nova import context
from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import keypair as keypair_obj
from nova.tests import base


def _pair(name='k1', user_id='alice', **fields):
    values = dict(name=name, user_id=user_id, fingerprint='aa:bb',
                  public_key='ssh-ed25519 AAAA k')
    values.update(fields)
    return keypair_obj.KeyPair(**values)


class KeyPairTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def _rows(self):
        with db_api.session(read_only=True) as session:
            return [(r.user_id, r.name, r.type) for r in session.scalars(
                sa.select(control_models.KeyPair).order_by(
                    control_models.KeyPair.id))]

    def test_create_and_get(self):
        created = _pair(type='x509').create()
        self.assertIsNotNone(created.id)
        self.assertIsNotNone(created.created_at)
        self.assertEqual(created, keypair_obj.KeyPair.get_by_name(
            self.ctx, 'alice', 'k1'))

    def test_names_are_per_user(self):
        _pair().create()
        _pair(user_id='bob').create()
        self.assertRaises(exception.KeyPairExists, _pair().create)
        self.assertEqual([('alice', 'k1', 'ssh'), ('bob', 'k1', 'ssh')],
                         self._rows())
        self.assertRaises(exception.KeypairNotFound,
                          keypair_obj.KeyPair.get_by_name, self.ctx, 'carol',
                          'k1')

    def test_unknown_type_is_refused_and_nothing_written(self):
        self.assertRaises(exception.InvalidKeypair,
                          _pair(type='pgp').create)
        self.assertEqual([], self._rows())

    def test_get_by_user_oldest_first(self):
        _pair('b').create()
        _pair('a').create()
        _pair('c', user_id='bob').create()
        self.assertEqual(['b', 'a'], [p.name for p in
                                      keypair_obj.KeyPair.get_by_user(
                                          self.ctx, 'alice')])

    def test_destroy_only_the_named_pair_of_the_user(self):
        _pair().create()
        _pair(user_id='bob').create()
        keypair_obj.KeyPair.destroy_by_name(self.ctx, 'alice', 'k1')
        self.assertEqual([('bob', 'k1', 'ssh')], self._rows())
        self.assertRaises(exception.KeypairNotFound,
                          keypair_obj.KeyPair.destroy_by_name, self.ctx,
                          'alice', 'k1')
        self.assertEqual([('bob', 'k1', 'ssh')], self._rows())
