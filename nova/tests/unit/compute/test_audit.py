"""The orphan audit against real test-driver domains, real directories
under instances_path and a real SQLite database.

One simulated host, compute1, holds guests of instances the database
places elsewhere (or nowhere); compute2 has storage of its own, compute3
shares compute1's, compute4 never recorded a storage identity.
"""

import hashlib
import os

from oslo_utils import uuidutils

from nova.compute import audit
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import libvirt_host as fixtures
from nova.virt import instancedir
from nova.virt import ownership
from nova.virt import storage_identity

HOST = 'compute1'


def tree(path):
    """{relative path: sha256 or '->target' or '/'} of everything under
    path, symlinks not followed."""
    found = {}
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if os.path.islink(full):
                found[rel] = '->' + os.readlink(full)
            elif os.path.isdir(full):
                found[rel] = '/'
            else:
                with open(full, 'rb') as f:
                    found[rel] = hashlib.sha256(f.read()).hexdigest()
    return found


def port_of(instance):
    return instance.network_info[0].id


class AuditTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.images = fixtures.make_image_store(self.tmp)
        self.image = fixtures.add_disk_image(self.images, self.tmp)
        self.host = fixtures.make_host(self.tmp, HOST,
                                       image_store_path=self.images.path)
        self.addCleanup(self.host.close)
        self.settings = self.host.settings
        self.driver = self.host.driver
        self.path = self.settings.instances_path
        self.identity = self.driver.get_storage_identity()
        dbf.make_service(self.ctx, HOST, identity=self.identity)
        other = os.path.join(self.tmp, 'compute2-instances')
        dbf.make_service(self.ctx, 'compute2',
                         identity=storage_identity.create(other))
        dbf.make_service(self.ctx, 'compute3', identity=self.identity)
        dbf.make_service(self.ctx, 'compute4', identity=None)

    # -- building the scene ---------------------------------------------

    def guest(self, db_host=HOST, in_database=True, **fields):
        """An instance whose guest, VIF and directory are on compute1; the
        database then places it on ``db_host``."""
        port = uuidutils.generate_uuid()
        network_info = fixtures.make_network_info(port_ids=[port])
        values = dict(display_name='vm', host=HOST, node=HOST,
                      vm_state=vm_states.ACTIVE,
                      flavor=dbf.make_flavor(self.ctx),
                      image_ref=self.image.id, user_id='u', project_id='p')
        instance = objects.Instance(self.ctx, **values)
        instance.network_info = network_info
        if in_database:
            instance.create()
        self.driver.spawn(self.ctx, instance, self.image,
                          network_info=network_info)
        if in_database:
            instance.host = db_host
            instance.node = db_host
            for name, value in fields.items():
                setattr(instance, name, value)
            instance.save()
        return instance

    def deleted_guest(self):
        instance = self.guest()
        instance.destroy()
        return instance

    def migration(self, instance, source, dest, status):
        return objects.Migration(
            self.ctx, instance_uuid=instance.uuid, source_compute=source,
            dest_compute=dest, source_node=source, dest_node=dest,
            migration_type=migration_obj.EVACUATION, status=status).create()

    def strays(self):
        """instances_path entries no audit may touch, and one outside."""
        outside = os.path.join(self.tmp, 'outside')
        os.makedirs(outside)
        with open(os.path.join(outside, 'precious'), 'w') as f:
            f.write('not nova\'s')
        os.makedirs(os.path.join(self.path, instancedir.LOCKS_DIR),
                    exist_ok=True)
        os.makedirs(os.path.join(self.path, 'notes'))
        upper = uuidutils.generate_uuid().upper()
        os.makedirs(os.path.join(self.path, upper))
        with open(os.path.join(self.path, upper, 'disk'), 'w') as f:
            f.write('data')
        link = uuidutils.generate_uuid()
        os.symlink(outside, os.path.join(self.path, link))
        return outside, upper, link

    # -- looking at the result ------------------------------------------

    def actions(self, report):
        return {(o.kind, o.instance_uuid or os.path.basename(o.name)):
                o.action for o in report.orphans}

    def orphan(self, report, kind, uuid):
        return next(o for o in report.orphans
                    if o.kind == kind and o.instance_uuid == uuid)

    def has_dir(self, instance):
        return os.path.isdir(os.path.join(self.path, instance.uuid))


class TestAudit(AuditTestCase):

    def test_classifies_every_orphan_and_changes_nothing(self):
        own = self.guest()
        deleted = self.deleted_guest()
        moved = self.guest('compute2')
        shared = self.guest('compute3')
        unknown = self.guest(in_database=False)
        no_identity = self.guest('compute4')
        outside, upper, link = self.strays()
        domains = self.host.domain_uuids()
        ports = self.host.plugged_vifs()
        before = tree(self.path)

        report = audit.audit(self.ctx, self.settings, self.driver)

        R, K = audit.REMOVE, audit.KEEP
        self.assertEqual({
            ('domain', deleted.uuid): R, ('vif', deleted.uuid): R,
            ('directory', deleted.uuid): R,
            ('domain', moved.uuid): R, ('vif', moved.uuid): R,
            ('directory', moved.uuid): R,
            ('domain', shared.uuid): R, ('vif', shared.uuid): R,
            ('directory', shared.uuid): K,
            # Not known to be ours (maybe an operator's own guest): kept.
            ('domain', unknown.uuid): K, ('vif', unknown.uuid): K,
            ('directory', unknown.uuid): K,
            ('domain', no_identity.uuid): R, ('vif', no_identity.uuid): R,
            ('directory', no_identity.uuid): K,
            ('entry', 'notes'): K, ('entry', upper): K, ('entry', link): K,
        }, self.actions(report))
        self.assertNotIn(own.uuid, {o.instance_uuid for o in report.orphans})
        self.assertEqual(
            (audit.DELETED, audit.ELSEWHERE, audit.ELSEWHERE, audit.UNKNOWN),
            tuple(self.orphan(report, 'domain', i.uuid).status
                  for i in (deleted, moved, shared, unknown)))
        self.assertEqual('compute2',
                         self.orphan(report, 'domain', moved.uuid).owner)
        self.assertEqual(port_of(moved),
                         self.orphan(report, 'vif', moved.uuid).name)
        self.assertIn('shared, keep', self.orphan(
            report, 'directory', shared.uuid).reason)
        self.assertIn('compute4 recorded no storage identity', self.orphan(
            report, 'directory', no_identity.uuid).reason)
        # An audit only looks.
        self.assertEqual(domains, self.host.domain_uuids())
        self.assertEqual(ports, self.host.plugged_vifs())
        self.assertEqual(before, tree(self.path))

    def test_an_evacuation_in_progress_keeps_everything(self):
        # compute1 is the target of an evacuation that is still running,
        # and the source of another one.
        incoming = self.guest('compute2', task_state=task_states.REBUILDING)
        self.migration(incoming, 'compute2', HOST, migration_obj.ACCEPTED)
        outgoing = self.guest('compute2')
        self.migration(outgoing, HOST, 'compute2',
                       migration_obj.PRE_MIGRATING)
        report = audit.audit(self.ctx, self.settings, self.driver)
        for instance in (incoming, outgoing):
            for kind in ('domain', 'vif', 'directory'):
                orphan = self.orphan(report, kind, instance.uuid)
                self.assertEqual(audit.KEEP, orphan.action)
                self.assertIn('in progress', orphan.reason)
        self.assertEqual('evacuation compute1 -> compute2: pre-migrating',
                         self.orphan(report, 'domain',
                                     outgoing.uuid).migration)

    def test_an_operation_in_progress_keeps_everything(self):
        unplaced = self.guest(None, task_state=task_states.SPAWNING)
        report = audit.audit(self.ctx, self.settings, self.driver)
        self.assertEqual({audit.KEEP}, {
            o.action for o in report.orphans
            if o.instance_uuid == unplaced.uuid})

    def test_a_finished_evacuation_away_is_cleaned_like_the_source(self):
        evacuated = self.guest('compute2')
        self.migration(evacuated, HOST, 'compute2', migration_obj.DONE)
        report = audit.audit(self.ctx, self.settings, self.driver)
        orphan = self.orphan(report, 'directory', evacuated.uuid)
        self.assertEqual((audit.REMOVE,
                          'storage not shared with compute2: to quarantine',
                          'evacuation compute1 -> compute2: done'),
                         (orphan.action, orphan.reason, orphan.migration))

    def test_unknown_own_identity_keeps_disks_of_instances_elsewhere(self):
        moved = self.guest('compute2')
        os.unlink(os.path.join(self.path, instancedir.STORAGE_IDENTITY_FILE))
        report = audit.audit(self.ctx, self.settings, self.driver)
        self.assertEqual(audit.KEEP, self.orphan(report, 'directory',
                                                 moved.uuid).action)
        self.assertEqual(audit.REMOVE, self.orphan(report, 'domain',
                                                   moved.uuid).action)
        # The audit does not make a marker up.
        self.assertFalse(os.path.exists(os.path.join(
            self.path, instancedir.STORAGE_IDENTITY_FILE)))

    def test_a_remounted_instances_path_keeps_disks(self):
        # The marker no longer matches what this host recorded.
        moved = self.guest('compute2')
        row = objects.Service.get_by_host_and_binary(self.ctx, HOST,
                                                     'nova-compute')
        row.storage_identity = uuidutils.generate_uuid()
        row.save()
        report = audit.audit(self.ctx, self.settings, self.driver)
        self.assertEqual(audit.KEEP, self.orphan(report, 'directory',
                                                 moved.uuid).action)

    def test_the_quarantine_is_listed_and_kept(self):
        moved = self.guest('compute2')
        idir = instancedir.InstanceDir(self.path, moved.uuid)
        dest = idir.quarantine('an earlier cleanup')
        stray = os.path.join(instancedir.quarantine_dir(self.path), 'notes')
        os.makedirs(stray)
        before = tree(self.path)
        report = audit.audit(self.ctx, self.settings, self.driver)
        listed = [o for o in report.orphans if o.kind == audit.QUARANTINED]
        self.assertEqual([(dest, moved.uuid, 'quarantined', audit.KEEP)],
                         [(o.name, o.instance_uuid, o.status, o.action)
                          for o in listed])
        self.assertIn('bytes since', listed[0].reason)
        self.assertIn('an earlier cleanup', listed[0].reason)
        self.assertEqual([(audit.ENTRY, audit.KEEP)],
                         [(o.kind, o.action) for o in report.orphans
                          if o.name == stray])
        # Listing and cleaning up leave the quarantine as it was.
        audit.cleanup(self.ctx, self.settings, self.driver, report)
        self.assertEqual(
            {k: v for k, v in before.items() if k.startswith('_quarantine')},
            {k: v for k, v in tree(self.path).items()
             if k.startswith('_quarantine')})

    def test_table(self):
        moved = self.guest('compute2')
        text = audit.format_table(
            audit.audit(self.ctx, self.settings, self.driver).orphans)
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith('KIND'))
        self.assertEqual(4, len(lines))
        self.assertIn(moved.uuid, lines[1])
        self.assertIn('compute2', lines[1])


class TestCleanup(AuditTestCase):

    def test_removes_what_may_go_and_keeps_the_rest(self):
        own = self.guest()
        deleted = self.deleted_guest()
        moved = self.guest('compute2')
        shared = self.guest('compute3')
        unknown = self.guest(in_database=False)
        no_identity = self.guest('compute4')
        evacuating = self.guest('compute2')
        self.migration(evacuating, HOST, 'compute2', migration_obj.ACCEPTED)
        outside, upper, link = self.strays()
        kept = {name: digest for name, digest in tree(self.path).items()
                if name.split(os.sep)[0] in (
                    own.uuid, shared.uuid, unknown.uuid, no_identity.uuid,
                    evacuating.uuid, '_base', 'locks', 'notes', upper, link,
                    instancedir.STORAGE_IDENTITY_FILE)}
        outside_before = tree(outside)

        report = audit.audit(self.ctx, self.settings, self.driver)
        result = audit.cleanup(self.ctx, self.settings, self.driver, report)

        self.assertEqual([], result.errors)
        self.assertEqual({own.uuid, evacuating.uuid, unknown.uuid},
                         self.host.domain_uuids())
        self.assertEqual({port_of(own), port_of(evacuating),
                          port_of(unknown)},
                         set(self.host.plugged_vifs()))
        for gone in (deleted, moved):
            self.assertFalse(self.has_dir(gone))
        # Moved aside, not deleted.
        self.assertEqual({deleted.uuid, moved.uuid}, {
            q.instance_uuid for q in instancedir.list_quarantine(
                self.path)[0]})
        # Every file that must stay is byte for byte as it was.
        self.assertEqual(kept, {
            name: digest for name, digest in tree(self.path).items()
            if name.split(os.sep)[0] not in ('_quarantine', '_journal')})
        self.assertEqual(outside_before, tree(outside))
        self.assertEqual(len(report.removable), len(result.removed))
        # A second audit finds only what was kept on purpose.
        again = audit.audit(self.ctx, self.settings, self.driver)
        self.assertEqual([], again.removable)

    def test_decides_again_before_removing(self):
        moved = self.guest('compute2')
        report = audit.audit(self.ctx, self.settings, self.driver)
        self.assertEqual(3, len(report.removable))
        # Meanwhile an evacuation of it back to this host begins.
        self.migration(moved, 'compute2', HOST, migration_obj.ACCEPTED)
        result = audit.cleanup(self.ctx, self.settings, self.driver, report)
        self.assertEqual([], result.removed)
        self.assertEqual({moved.uuid}, self.host.domain_uuids())
        self.assertTrue(self.has_dir(moved))

    def test_an_instance_directory_that_escapes_is_refused(self):
        # The directory of a deleted instance was replaced by a symlink
        # after the audit: removal must refuse and say so.
        deleted = self.deleted_guest()
        report = audit.audit(self.ctx, self.settings, self.driver)
        idir = os.path.join(self.path, deleted.uuid)
        outside = os.path.join(self.tmp, 'elsewhere')
        os.rename(idir, outside)
        os.symlink(outside, idir)
        before = tree(outside)
        result = audit.cleanup(self.ctx, self.settings, self.driver, report)
        self.assertEqual(['directory'],
                         [o.kind for o, _msg in result.errors])
        self.assertEqual(before, tree(outside))
        self.assertEqual(set(), self.host.domain_uuids())


class TestEvidenceBeforeCleanup(AuditTestCase):
    """What keeps a directory that the identities alone would let go."""

    def stamp_as(self, instance, host, identity):
        ownership.write(instancedir.InstanceDir(self.path, instance.uuid),
                        ownership.OwnerStamp.new(
                            instance.uuid, host=host,
                            storage_identity=identity,
                            operation='evacuation', attempt='attempt-1',
                            migration=uuidutils.generate_uuid()))

    def test_a_directory_the_owner_stamped_is_kept_on_stale_evidence(self):
        # compute2 recorded its old local identity, but now runs the
        # instance from compute1's (shared) storage, and re-stamped the
        # directory there when it adopted it: the identities say "not
        # shared", the stamp says the directory is compute2's.
        moved = self.guest('compute2')
        self.migration(moved, HOST, 'compute2', migration_obj.DONE)
        self.stamp_as(moved, 'compute2', self.identity)
        path = os.path.join(self.path, moved.uuid)
        before = tree(path)
        report = audit.audit(self.ctx, self.settings, self.driver)
        orphan = self.orphan(report, 'directory', moved.uuid)
        self.assertEqual(audit.KEEP, orphan.action)
        self.assertIn('storage not shared with compute2, but its stamp '
                      'says it was written by host compute2', orphan.reason)
        result = audit.cleanup(self.ctx, self.settings, self.driver, report)
        self.assertEqual([], result.errors)
        self.assertNotIn(orphan, result.removed)
        self.assertEqual(before, tree(path))
        self.assertEqual([], instancedir.list_quarantine(self.path)[0])

    def test_a_directory_without_a_stamp_is_kept(self):
        moved = self.guest('compute2')
        os.unlink(os.path.join(self.path, moved.uuid, ownership.STAMP))
        path = os.path.join(self.path, moved.uuid)
        before = tree(path)
        report = audit.audit(self.ctx, self.settings, self.driver)
        self.assertIn('no ownership stamp', self.orphan(
            report, 'directory', moved.uuid).reason)
        audit.cleanup(self.ctx, self.settings, self.driver, report)
        self.assertEqual(before, tree(path))

    def other_view(self, **settings):
        """The same instances_path, through a driver with other
        settings (compute1's name in the database)."""
        host = fixtures.make_host(self.tmp, 'compute1-again',
                                  instances_path=self.path,
                                  image_store_path=self.images.path,
                                  **settings)
        self.addCleanup(host.close)
        return host.settings.replace(host=HOST), host.driver

    def assertNothingMoves(self, settings, driver, *instances):
        before = tree(self.path)
        report = audit.audit(self.ctx, settings, driver)
        self.assertIsNone(report.storage_identity)
        for instance in instances:
            orphan = self.orphan(report, 'directory', instance.uuid)
            self.assertEqual(audit.KEEP, orphan.action)
            self.assertIn(report.storage_problem, orphan.reason)
        result = audit.cleanup(self.ctx, settings, driver, report)
        self.assertEqual([], result.errors)
        self.assertEqual(before, tree(self.path))
        self.assertEqual([], instancedir.list_quarantine(self.path)[0])
        return report

    def test_a_required_mount_that_is_missing_moves_no_directory(self):
        moved = self.guest('compute2')
        deleted = self.deleted_guest()
        settings, driver = self.other_view(
            instances_path_must_be_mounted=True)
        report = self.assertNothingMoves(settings, driver, moved, deleted)
        self.assertIn('not a mount point', report.storage_problem)

    def test_a_storage_recorded_as_a_mount_point_that_is_not(self):
        moved = self.guest('compute2')
        deleted = self.deleted_guest()
        row = objects.Service.get_by_host_and_binary(self.ctx, HOST,
                                                     'nova-compute')
        row.storage_must_be_mounted = True
        row.save()
        report = self.assertNothingMoves(self.settings, self.driver, moved,
                                         deleted)
        self.assertIn('instance storage not mounted',
                      report.storage_problem)
        self.assertIn(self.identity, report.storage_problem)
