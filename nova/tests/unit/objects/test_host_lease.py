"""Host claim leases on a real SQLite file (PostgreSQL: integration)."""

import datetime
import threading
import time
from unittest import mock

import sqlalchemy as sa

from nova import context
from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import fields
from nova.objects import host_lease
from nova.tests import base

HOLDER = '0f0e0d0c-0b0a-4909-8807-060504030201'


def race_for_the_lease(ctx, host, threads=4, rounds=5):
    """``threads`` threads each hold the lease ``rounds`` times.

    Returns the most holders seen inside at once (1 when the lease works)
    and the number of times a body ran.
    """
    lock = threading.Lock()
    inside = [0]
    most = [0]
    ran = [0]
    start = threading.Barrier(threads, timeout=10)

    def worker():
        start.wait()
        for _ in range(rounds):
            with host_lease.hold(ctx, host, wait=30):
                with lock:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                    ran[0] += 1
                # Long enough for another thread to (wrongly) get in.
                time.sleep(0.005)
                with lock:
                    inside[0] -= 1
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    return most[0], ran[0]


class HostLeaseTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def _rows(self):
        with db_api.session(read_only=True) as session:
            return [(r.host, r.holder) for r in session.scalars(
                sa.select(control_models.HostClaimLease))]

    def _leave_behind(self, host, holder, expires_in):
        # What a process that died while holding a lease leaves.
        with db_api.session() as session:
            session.execute(sa.insert(control_models.HostClaimLease).values(
                host=host, holder=holder, expires_at=fields.utcnow()
                + datetime.timedelta(seconds=expires_in)))

    def test_held_for_the_body_and_given_back(self):
        with host_lease.hold(self.ctx, 'h1') as lease:
            self.assertEqual([('h1', lease.holder)], self._rows())
            self.assertEqual(lease.holder,
                             host_lease.holder_of(self.ctx, 'h1'))
        self.assertEqual([], self._rows())
        self.assertIsNone(host_lease.holder_of(self.ctx, 'h1'))

    def test_given_back_when_the_body_raises(self):
        with self.assertRaises(ValueError):
            with host_lease.hold(self.ctx, 'h1'):
                raise ValueError('the claim failed')
        self.assertEqual([], self._rows())

    def test_one_holder_at_a_time_per_host(self):
        most, ran = race_for_the_lease(self.ctx, 'h1')
        self.assertEqual((1, 20), (most, ran))
        self.assertEqual([], self._rows())

    def test_hosts_do_not_block_each_other(self):
        with host_lease.hold(self.ctx, 'h1'):
            with host_lease.hold(self.ctx, 'h2', wait=0):
                self.assertEqual({'h1', 'h2'},
                                 {h for h, _ in self._rows()})

    def test_a_live_lease_makes_the_next_holder_wait_then_give_up(self):
        self._leave_behind('h1', HOLDER, expires_in=60)
        ran = []
        with self.assertRaises(exception.HostClaimBusy) as caught:
            with host_lease.hold(self.ctx, 'h1', wait=0.2):
                ran.append(True)
        self.assertEqual([], ran)
        self.assertIn('h1', str(caught.exception))
        # The live holder keeps it.
        self.assertEqual([('h1', HOLDER)], self._rows())

    def test_an_expired_lease_of_a_dead_holder_is_taken_over(self):
        self._leave_behind('h1', HOLDER, expires_in=-1)
        with host_lease.hold(self.ctx, 'h1', wait=0) as lease:
            self.assertNotEqual(HOLDER, lease.holder)
            self.assertEqual([('h1', lease.holder)], self._rows())
        self.assertEqual([], self._rows())

    def test_giving_back_leaves_a_lease_taken_over_meanwhile(self):
        # This holder overran its lease; another process holds it now.
        self._leave_behind('h1', HOLDER, expires_in=60)
        self.assertFalse(host_lease.give_back(
            self.ctx, 'h1', '11111111-2222-4333-8444-555555555555'))
        self.assertEqual([('h1', HOLDER)], self._rows())
        self.assertTrue(host_lease.give_back(self.ctx, 'h1', HOLDER))
        self.assertEqual([], self._rows())


class GivenBackWithTheClaim:
    """The lease given back in the transaction that writes the claim (on
    SQLite below, on PostgreSQL in the integration tests)."""

    def _claims(self):
        with db_api.session(read_only=True) as session:
            return session.scalars(sa.select(
                control_models.HostClaimLease.host)).all()

    def _write_claim(self, lease):
        # A claim row of its own: a lease row of another key, written in
        # the same transaction as the give-back.
        def write(lease):
            with db_api.writing() as connection:
                connection.execute(sa.insert(
                    control_models.HostClaimLease.__table__).values(
                    host='claim-of-' + lease.holder, holder=lease.holder,
                    expires_at=fields.utcnow()))
                lease.give_back_in(connection)
        lease.end_with(write)

    def test_given_back_by_the_claims_commit_and_not_again(self):
        with mock.patch.object(host_lease, 'give_back',
                               side_effect=AssertionError('given back '
                                                          'twice')):
            with host_lease.hold(self.ctx, 'h1') as lease:
                self._write_claim(lease)
                self.assertTrue(lease.ended)
        self.assertEqual(['claim-of-' + lease.holder], self._claims())

    def test_a_claim_that_fails_keeps_the_lease_until_the_body_ends(self):
        def failing(lease):
            with db_api.writing() as connection:
                lease.give_back_in(connection)
                raise ValueError('the claim failed')
        with self.assertRaises(ValueError):
            with host_lease.hold(self.ctx, 'h1') as lease:
                try:
                    lease.end_with(failing)
                finally:
                    # Rolled back with the claim: still held.
                    self.assertEqual(['h1'], self._claims())
                    self.assertFalse(lease.ended)
        self.assertEqual([], self._claims())

    def test_a_lost_lease_rolls_the_claim_back(self):
        # This holder stalled past its lease; another claimer took it
        # over and holds it now.
        with host_lease.hold(self.ctx, 'h1') as lease:
            with db_api.writing() as connection:
                connection.execute(sa.update(
                    control_models.HostClaimLease.__table__).values(
                    holder=HOLDER))
            with self.assertRaises(exception.HostClaimLeaseLost) as caught:
                self._write_claim(lease)
            self.assertIn('h1', str(caught.exception))
            self.assertFalse(lease.ended)
        # No claim written; the new holder keeps its lease.
        self.assertEqual(['h1'], self._claims())
        self.assertEqual(HOLDER, host_lease.holder_of(self.ctx, 'h1'))

    def _write_claim_under(self, *leases):
        def write(given_back):
            with db_api.writing() as connection:
                connection.execute(sa.insert(
                    control_models.HostClaimLease.__table__).values(
                    host='claim', holder=HOLDER,
                    expires_at=fields.utcnow()))
                given_back.give_back_in(connection)
        host_lease.end_together(write, *leases)

    def test_two_leases_given_back_by_one_claims_commit(self):
        with host_lease.hold(self.ctx, 'h1') as host, \
                host_lease.hold(self.ctx, 'server-group:g') as group:
            self._write_claim_under(host, group)
            self.assertTrue(host.ended)
            self.assertTrue(group.ended)
        self.assertEqual(['claim'], self._claims())

    def test_one_of_two_leases_lost_rolls_the_claim_back(self):
        with host_lease.hold(self.ctx, 'h1') as host, \
                host_lease.hold(self.ctx, 'server-group:g') as group:
            with db_api.writing() as connection:
                connection.execute(sa.update(
                    control_models.HostClaimLease.__table__).where(
                    control_models.HostClaimLease.host == 'server-group:g'
                ).values(holder=HOLDER))
            with self.assertRaises(exception.HostClaimLeaseLost) as caught:
                self._write_claim_under(host, group)
            self.assertIn('server-group:g', str(caught.exception))
            self.assertFalse(host.ended)
            self.assertFalse(group.ended)
            # The host's give-back rolled back with the claim: held.
            self.assertEqual(host.holder,
                             host_lease.holder_of(self.ctx, 'h1'))
        # No claim; h1 given back at the body's end; the group's lease
        # is its new holder's.
        self.assertEqual(['server-group:g'], self._claims())
        self.assertEqual(HOLDER, host_lease.holder_of(self.ctx,
                                                      'server-group:g'))


class GivenBackWithTheClaimTestCase(GivenBackWithTheClaim, base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()
