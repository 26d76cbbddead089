"""The region's monitor lease on a real database."""

import datetime

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.ha import lease as lease_mod
from nova.objects import base as obj_base
from nova.objects import ha_lease
from nova.tests import base


def expire(region):
    with db_api.session() as session:
        session.execute(sa.update(control_models.HaMonitorLease).where(
            control_models.HaMonitorLease.region == region).values(
            expires_at=obj_base.utcnow() - datetime.timedelta(seconds=1)))


class TestMonitorLease(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.one = lease_mod.MonitorLease('r1', 'one', 30)
        self.two = lease_mod.MonitorLease('r1', 'two', 30)

    def test_one_holder_at_a_time_and_it_renews(self):
        self.assertTrue(self.one.renew())
        self.assertFalse(self.two.renew())
        self.assertTrue(self.one.renew())
        self.one.check('acting')
        self.assertRaises(exception.HaLeaseLost, self.two.check, 'acting')

    def test_regions_are_independent(self):
        self.assertTrue(self.one.renew())
        self.assertTrue(lease_mod.MonitorLease('r2', 'two', 30).renew())

    def test_an_expired_lease_is_taken_over_and_the_old_holder_stops(self):
        self.assertTrue(self.one.renew())
        expire('r1')
        self.assertRaises(exception.HaLeaseLost, self.one.check, 'acting')
        self.assertTrue(self.two.renew())
        # The stalled holder's renewal finds it taken: compare-and-swap.
        self.assertFalse(self.one.renew())
        self.assertEqual('two', ha_lease.holder_of('r1'))

    def test_given_back_it_is_free_at_once(self):
        self.assertTrue(self.one.renew())
        self.one.give_back()
        self.assertTrue(self.two.renew())
