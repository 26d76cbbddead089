"""What may happen to an instance directory, from the token, its stamp
and the storage evidence: every row of the decision, as the module lists
it (the pure part), then the evidence as read from a real database and
a real directory (the gathering part)."""

import os
from unittest import mock

from oslo_utils import uuidutils

from nova.compute import attempts
from nova.compute import disk_ownership as do
from nova import context
from nova import exception
from nova.model import task_states
from nova import objects
from nova.tests import base
from nova.tests.fixtures import compute as compute_fixtures
from nova.tests.fixtures import database as dbf
from nova.virt import journal
from nova.virt import ownership

X = '11111111-1111-4111-8111-111111111111'
Y = '22222222-2222-4222-8222-222222222222'
UUID = '33333333-3333-4333-8333-333333333333'
PATH = '/srv/instances/' + UUID


def stamp(host, identity=X, migration=None):
    return ownership.OwnerStamp.new(UUID, host, identity, 'build',
                                    '44444444-4444-4444-8444-444444444444',
                                    migration=migration)


def facts(stamped, exists=True, status=None, forced_down=False,
          leases=False, error=None):
    owner = None
    if status is not None:
        owner = do.StampAttempt(status, forced_down, leases)
    return do.DirectoryFacts(PATH, exists, stamped, stamp_error=error,
                             stamp_attempt=owner)


def target(shared, stamped, exists=True, disks=True, identity=X, **kw):
    return do.on_target(facts(stamped, exists, **kw),
                        do.LiveStorage(identity), source='a', host='b',
                        shared=shared, instance_has_disks=disks)


class TestOnTarget(base.TestCase):

    def test_not_shared_nothing_there_builds(self):
        self.assertEqual(do.BUILD, target(False, None, exists=False).action)

    def test_not_shared_own_leftover_is_quarantined(self):
        self.assertEqual(do.QUARANTINE, target(False, stamp('b')).action)

    def test_not_shared_anything_else_is_refused(self):
        for stamped in (None, stamp('a', Y), stamp('b', Y), stamp('c', Y)):
            verdict = target(False, stamped)
            self.assertEqual(do.REFUSE, verdict.action, stamped)
            self.assertIn('nothing touched', verdict.reason)
            self.assertIn('Move it away', verdict.unblock)

    def test_not_shared_but_the_source_wrote_it_on_this_storage(self):
        # The boot-order race: a's recorded identity is stale, but a
        # stamped the directory on b's very storage.
        verdict = target(False, stamp('a', X))
        self.assertEqual(do.REFUSE, verdict.action)
        self.assertIn('evidently shared', verdict.reason)
        self.assertIn('record-storage-identity a --from /srv/instances',
                      verdict.message)

    def test_shared_stamped_by_the_source_is_reused(self):
        self.assertEqual(do.REUSE, target(True, stamp('a')).action)
        self.assertEqual(do.REUSE, target(True, stamp('a', None)).action)
        self.assertEqual(do.REUSE, target(True, None).action)

    def test_shared_old_copies_are_refused(self):
        # A stamp written on other storage, or by an attempt that landed
        # elsewhere: a copy restored from a backup, or markers cloned.
        for stamped, status in ((stamp('a', Y), do.STALE),
                                (stamp('c'), do.LANDED),
                                (stamp('c', Y), do.STALE),
                                (stamp('b'), do.LANDED)):
            verdict = target(True, stamped, status=status)
            self.assertEqual(do.REFUSE, verdict.action, stamped)
            self.assertIn('old copy', verdict.reason)

    def test_shared_missing_directory_decided_by_the_recorded_fact(self):
        self.assertEqual(do.BUILD, target(True, None, exists=False,
                                          disks=False).action)
        verdict = target(True, None, exists=False, disks=True)
        self.assertEqual(do.REFUSE, verdict.action)
        self.assertIn('cloned', verdict.reason)

    def test_a_stamp_that_cannot_be_read_is_refused(self):
        verdict = target(True, None, error='not a stamp: garbage')
        self.assertEqual(do.REFUSE, verdict.action)
        self.assertIn('garbage', verdict.reason)


class TestStampOfAStaleAttempt(base.TestCase):
    """A third host's stamp on shared storage: case 5 of the token rule.
    The attempt that wrote it no longer holds the instance; whether its
    host may still run the guest decides."""

    def stale(self, **kw):
        return target(True, stamp('c', migration=Y), status=do.STALE, **kw)

    def test_refused_with_what_unblocks_it(self):
        verdict = self.stale()
        self.assertEqual(do.REFUSE, verdict.action)
        self.assertIn('c may still run the guest', verdict.reason)
        self.assertIn('nova service-force-down c nova-compute',
                      verdict.unblock)
        self.assertIn('disk leases', verdict.unblock)

    def test_reused_once_its_host_is_forced_down(self):
        verdict = self.stale(forced_down=True)
        self.assertEqual(do.REUSE, verdict.action)
        self.assertIn('forced down', verdict.reason)

    def test_reused_when_both_hosts_take_disk_leases(self):
        verdict = self.stale(leases=True)
        self.assertEqual(do.REUSE, verdict.action)
        self.assertIn('disk leases', verdict.reason)

    def test_an_attempt_holding_the_token_is_never_passed(self):
        verdict = target(True, stamp('c', migration=Y), status=do.CURRENT,
                         forced_down=True, leases=True)
        self.assertEqual(do.REFUSE, verdict.action)
        self.assertIn('Retry once that attempt has ended', verdict.unblock)

    def test_a_stamp_of_no_recorded_attempt_needs_the_fence(self):
        # Written before attempts were recorded: the same rule.
        self.assertEqual(do.REFUSE, target(
            True, stamp('c', migration=Y), status=do.UNKNOWN).action)
        self.assertEqual(do.REUSE, target(
            True, stamp('c', migration=Y), status=do.UNKNOWN,
            forced_down=True).action)

    def test_this_hosts_own_stale_attempt_is_reused(self):
        self.assertEqual(do.REUSE, target(True, stamp('b', migration=Y),
                                          status=do.STALE).action)


class TestOnSource(base.TestCase):

    def source(self, shared, stamped, exists=True, identity=X):
        return do.on_source(facts(stamped, exists), do.LiveStorage(identity),
                            host='a', shared=shared, owner='b')

    def test_own_copy_not_shared_is_quarantined(self):
        self.assertEqual(do.QUARANTINE,
                         self.source(False, stamp('a')).action)

    def test_everything_else_is_kept(self):
        for shared, stamped, identity in (
                (False, stamp('b'), X),       # the new owner's (mirror)
                (False, None, X),             # no stamp
                (False, stamp('a', Y), X),    # other storage
                (False, stamp('a'), None),    # own identity unknown
                (True, stamp('a'), X),        # identities say shared
                (None, stamp('a'), X)):       # unknown
            self.assertEqual(do.KEEP, self.source(shared, stamped,
                                                  identity=identity).action,
                             (shared, stamped, identity))
        self.assertEqual(do.KEEP, self.source(False, None,
                                              exists=False).action)


class TestOnOrphan(base.TestCase):

    def orphan(self, stamped=None, deleted=False, owner='b',
               owner_identity=Y, identity=X, problem=None, error=None):
        return do.on_orphan(facts(stamped, error=error),
                            do.LiveStorage(identity, problem), host='a',
                            deleted=deleted, owner=owner,
                            owner_identity=owner_identity,
                            unplaced='instance placed on no host')

    def test_deleted_goes_unless_its_stamp_cannot_be_read(self):
        self.assertEqual(do.REMOVE, self.orphan(deleted=True).action)
        self.assertEqual(do.KEEP, self.orphan(deleted=True,
                                              error='a symlink').action)

    def test_elsewhere_goes_only_not_shared_and_stamped_here(self):
        self.assertEqual(do.REMOVE, self.orphan(stamp('a')).action)
        for kw in (dict(), dict(stamped=stamp('b')),
                   dict(stamped=stamp('a'), owner_identity=X),
                   dict(stamped=stamp('a'), owner_identity=None),
                   dict(stamped=stamp('a'), identity=None),
                   dict(stamped=stamp('a'), problem='not mounted')):
            self.assertEqual(do.KEEP, self.orphan(**kw).action, kw)

    def test_unplaced_keeps_its_disks(self):
        verdict = self.orphan(stamp('a'), owner=None)
        self.assertEqual(do.KEEP, verdict.action)
        self.assertIn('placed on no host', verdict.reason)


class TestEvidence(compute_fixtures.ComputeTestCase):
    """The evidence as read: the stamp's attempt from the database."""

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()

    def stamped_by(self, instance, host, attempt_id):
        idir = self.driver._instance_dir(instance)
        os.makedirs(idir.path, exist_ok=True)
        ownership.write(idir, ownership.OwnerStamp.new(
            instance.uuid, host, None, 'evacuation', attempt_id,
            migration=uuidutils.generate_uuid()))

    def test_the_stamps_attempt_as_the_database_says(self):
        instance = self.new_instance(task_state=task_states.REBUILDING)
        dbf.make_service(self.ctx, 'c', forced_down=True)
        token = attempts.Claim.new(self.ctx, instance, 'c',
                                   journal.EVACUATION)
        instance.save(**token.take(instance))
        self.stamped_by(instance, 'c', token.id)
        read = do.read_directory(self.ctx, 'b', self.driver, instance)
        self.assertEqual(do.StampAttempt(do.CURRENT, True, False),
                         read.stamp_attempt)
        instance.attempt_id = None          # reset-state
        instance.save()
        read = do.read_directory(self.ctx, 'b', self.driver, instance)
        self.assertEqual(do.STALE, read.stamp_attempt.status)
        self.stamped_by(instance, 'c', uuidutils.generate_uuid())
        read = do.read_directory(self.ctx, 'b', self.driver, instance)
        self.assertEqual(do.UNKNOWN, read.stamp_attempt.status)

    def test_live_storage_reads_the_storage_and_the_record_once(self):
        # The identity, its problem and its staleness come from one
        # reading of each: no second look that could see another state.
        identity = self.driver.get_storage_status().identity
        dbf.make_service(self.ctx, 'b', identity=identity)
        status = mock.patch.object(self.driver, 'get_storage_status',
                                   wraps=self.driver.get_storage_status)
        service = mock.patch.object(
            objects.Service, 'get_by_host_and_binary',
            wraps=objects.Service.get_by_host_and_binary)
        with status as read_status, service as read_service:
            live = do.live_storage(self.ctx, 'b', self.driver)
        self.assertEqual(do.LiveStorage(identity), live)
        self.assertEqual((1, 1), (read_status.call_count,
                                  read_service.call_count))

    def test_live_storage_that_differs_from_the_record_is_stale(self):
        dbf.make_service(self.ctx, 'b', identity=X)
        live = do.live_storage(self.ctx, 'b', self.driver)
        self.assertIsNone(live.identity)
        self.assertIsInstance(live.stale, exception.StorageEvidenceStale)

    def test_no_directory(self):
        instance = self.new_instance()
        read = do.read_directory(self.ctx, 'b', self.driver,
                                 objects.Instance(uuid=instance.uuid))
        self.assertFalse(read.exists)
        self.assertIsNone(read.stamp_attempt)
