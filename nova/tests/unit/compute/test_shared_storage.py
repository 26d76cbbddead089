import os

from nova.compute import instance_events
from nova.compute import shared_storage
from nova.conf import host_settings
from nova import exception
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.unit.virt import test_storage_identity
from nova.virt import fake
from nova.virt import storage_identity

ID_A = '11111111-1111-4111-8111-111111111111'
ID_B = '22222222-2222-4222-8222-222222222222'


def _evidence(source, target):
    return shared_storage.StorageEvidence('a', 'b', source, target)


class TestDecide(base.TestCase):

    def refused(self, evidence, requested, instance_dir=None):
        with self.assertRaises(exception.InvalidSharedStorage) as cm:
            shared_storage.decide(evidence, requested,
                                  instance_dir=instance_dir)
        return str(cm.exception)

    def test_detects_shared_and_not_shared(self):
        self.assertTrue(shared_storage.decide(_evidence(ID_A, ID_A), None))
        self.assertFalse(shared_storage.decide(_evidence(ID_A, ID_B), None))

    def test_explicit_value_agreeing_with_evidence_is_taken(self):
        self.assertTrue(shared_storage.decide(_evidence(ID_A, ID_A), True))
        self.assertFalse(shared_storage.decide(_evidence(ID_A, ID_B),
                                               False))

    def test_explicit_true_contradicting_evidence_is_refused(self):
        e = self.refused(_evidence(ID_A, ID_B), True)
        self.assertIn('on_shared_storage=True contradicts', e)
        self.assertIn(ID_A, e)
        self.assertIn(ID_B, e)
        self.assertIn('not shared', e)

    def test_explicit_false_contradicting_evidence_is_refused(self):
        e = self.refused(_evidence(ID_A, ID_A), False)
        self.assertIn('storage is shared', e)

    def test_missing_evidence_needs_an_explicit_answer(self):
        e = self.refused(_evidence(None, ID_B), None)
        self.assertIn('no storage identity recorded', e)
        self.assertTrue(shared_storage.decide(_evidence(None, ID_B), True))
        self.assertFalse(shared_storage.decide(_evidence(None, ID_B),
                                               False))

    def test_unverifiable_answer_with_an_instance_directory_is_refused(self):
        # It cannot tell a leftover from the instance's shared disks.
        path = '/srv/instances/' + ID_A
        for requested in (False, True):
            e = self.refused(_evidence(None, ID_B), requested, path)
            self.assertIn('on_shared_storage=%s' % requested, e)
            self.assertIn('source host a has no storage identity', e)
            self.assertNotIn('target host b has no', e)
            self.assertIn('instance directory exists at %s' % path, e)

            e = self.refused(_evidence(ID_A, None), requested, path)
            self.assertIn('target host b has no storage identity', e)
        # Complete evidence decides; the directory is no evidence.
        self.assertFalse(shared_storage.decide(_evidence(ID_A, ID_B), False,
                                               instance_dir=path))
        self.assertTrue(shared_storage.decide(_evidence(ID_A, ID_A), True,
                                              instance_dir=path))


class TestEvidenceFromServiceRows(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()

    def test_gather_reads_the_source_row_even_when_it_is_down(self):
        dbf.make_service(self.ctx, 'a', up=False, identity=ID_A)
        evidence = shared_storage.gather(self.ctx, 'a', 'b', ID_A)
        self.assertTrue(evidence.shared)
        evidence = shared_storage.gather(self.ctx, 'a', 'b', ID_B)
        self.assertFalse(evidence.shared)

    def test_unknown_source_has_no_identity(self):
        evidence = shared_storage.gather(self.ctx, 'nowhere', 'b', ID_B)
        self.assertIsNone(evidence.source_identity)
        self.assertIsNone(evidence.shared)

    def test_marker_files_of_two_paths_decide_sharing(self):
        # Two hosts mounting one directory read the same marker; separate
        # directories get different ones. An instance directory that
        # exists in the target's path changes nothing.
        shared = os.path.join(self.tmp, 'shared')
        private = os.path.join(self.tmp, 'private')
        os.makedirs(os.path.join(private, ID_A))
        a = storage_identity.create(shared)
        self.assertEqual(a, storage_identity.create(shared))
        self.assertNotEqual(a, storage_identity.create(private))

    def _driver(self, path):
        settings = host_settings.HostSettings(host='b', instances_path=path)
        return fake.FakeDriver(instance_events.ComputeVirtAPI(), settings)

    def _own_identity(self, driver):
        """``identity_of`` from the evidence as read now (what
        ``disk_ownership.live_storage`` reads)."""
        return shared_storage.identity_of(
            'b', driver.get_storage_status(),
            *shared_storage.recorded_storage(self.ctx, 'b'))

    def test_own_identity_is_read_live(self):
        path = os.path.join(self.tmp, 'b')
        driver = self._driver(path)
        identity = storage_identity.create(path)
        dbf.make_service(self.ctx, 'b', identity=identity)
        self.assertEqual(identity, self._own_identity(driver))
        # The marker goes (the mount went away): unknown at once, with
        # nothing made up in its place.
        os.unlink(storage_identity.marker_path(path))
        self.assertIsNone(self._own_identity(driver))
        self.assertFalse(os.path.exists(storage_identity.marker_path(path)))

    def test_a_live_identity_that_differs_from_the_record_is_refused(self):
        # Remounted since the last heartbeat: others compared with the
        # old one, so no decision that may delete rests on either.
        path = os.path.join(self.tmp, 'b')
        driver = self._driver(path)
        storage_identity.create(path)
        dbf.make_service(self.ctx, 'b', identity=ID_B)
        with self.assertRaises(exception.StorageEvidenceStale) as cm:
            self._own_identity(driver)
        self.assertIn(ID_B, str(cm.exception))
        self.assertIn(path, str(cm.exception))

    def test_a_copy_of_a_marker_recorded_as_a_mount_point(self):
        # b recorded its storage as mounted at its instances_path; what b
        # reads there now is the same identity, but not on a mount point
        # (a copy of the marker, without the flag): unknown.
        path = os.path.join(self.tmp, 'b')
        driver = self._driver(path)
        identity = storage_identity.create(path)
        row = dbf.make_service(self.ctx, 'b', identity=identity)
        row.storage_must_be_mounted = True
        row.save()
        self.assertIsNone(self._own_identity(driver))
        test_storage_identity.MountTable(self).mount(path)
        self.assertEqual(identity, self._own_identity(driver))
