"""createImage and createBackup on the host (``compute/snapshot.py``) with
the fake driver and a real local image store: the image's data, its
status, the instance's states and files."""

import dataclasses
import os

from oslo_utils import uuidutils

from nova.compute import delete
from nova.compute import manager as compute_manager
from nova.compute import operation
from nova.compute import snapshot
from nova import exception
from nova.image import new_image
from nova.image import qemu_img
from nova.image import store as image_store
from nova.model import power_state
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.tests.fixtures import compute as fixtures
from nova.tests.fixtures import driver_contract as contract
from nova.tests.fixtures import libvirt_host as libvirt_fixtures


class SnapshotTestCase(fixtures.ComputeTestCase):

    def setUp(self):
        super().setUp()
        self.settings = dataclasses.replace(
            self.settings, image_store_path=os.path.join(self.tmp, 'images'))
        self.driver.settings = self.settings
        self.compute = dataclasses.replace(self.compute,
                                           settings=self.settings)
        self.runner = operation.Runner(self.compute, self.runner.locks)
        self.store = image_store.ImageStore(self.settings.image_store_path)

    def queue(self, instance, image_type=new_image.SNAPSHOT,
              backup_type=None, task_state=task_states.IMAGE_SNAPSHOT):
        """What the API does: the queued image, the task state."""
        image_id = self.store.create_queued(new_image.for_server(
            instance, 'snap', image_type, None, {'k': 'v'}, backup_type))
        instance.task_state = task_state
        instance.save()
        return image_id

    def snapshot(self, instance, image_id, rotation=None):
        snapshot.run(self.runner, self.compute, self.context, instance,
                     image_id, rotation)

    def temp_files(self, instance):
        return [name for name in self.files(instance) if '.part-' in name]


class TestSnapshot(SnapshotTestCase):

    def test_running_guest_gives_an_active_qcow2_image(self):
        instance = self.active_instance()
        disks = self.files(instance)
        image_id = self.queue(instance)
        self.assertEqual('queued', self.store.get(image_id).status)
        self.snapshot(instance, image_id)
        image = self.store.get(image_id)
        self.assertEqual('active', image.status)
        self.assertEqual('qcow2',
                         qemu_img.info(self.store.data_path(image_id)).format)
        self.assertEqual(os.path.getsize(self.store.data_path(image_id)),
                         image.size)
        self.assertEqual({'image_type': 'snapshot',
                          'instance_uuid': instance.uuid, 'user_id': 'u',
                          'base_image_ref': 'img', 'k': 'v'},
                         image.properties)
        # The vm_state is kept, the guest runs, the disks are as they were
        # and no temporary file is left.
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual(disks, self.files(instance))
        self.assertEqual(('createImage', 'compute_snapshot_instance',
                          'Success'), self.events(instance)[-1])

    def test_stopped_guest(self):
        instance = self.active_instance()
        self.driver.power_off(instance)
        instance.vm_state = vm_states.STOPPED
        instance.power_state = power_state.SHUTDOWN
        instance.save()
        image_id = self.queue(instance)
        self.snapshot(instance, image_id)
        self.assertEqual('active', self.store.get(image_id).status)
        self.assertEqual((vm_states.STOPPED, None, power_state.SHUTDOWN),
                         self.states(instance))

    def test_failure_keeps_the_vm_state_and_deletes_the_image(self):
        instance = self.active_instance()
        disks = self.files(instance)
        image_id = self.queue(instance)
        self.driver.fail_at('snapshot')
        self.assertRaises(exception.InjectedFailure, self.snapshot,
                          instance, image_id)
        self.assertRaises(exception.ImageNotFound, self.store.get, image_id)
        self.assertEqual([], os.listdir(self.store.path))
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual(disks, self.files(instance))
        self.assertEqual(1, len(self.faults(instance)))

    def test_deleted_before_the_host_began(self):
        # The API's delete took the instance between createImage's cast
        # and its run here: the snapshot changes nothing, its image goes,
        # and the delete then finishes.
        instance = self.active_instance()
        image_id = self.queue(instance)
        instance.task_state = task_states.DELETING
        instance.save()
        self.assertRaises(exception.InstanceInvalidState, self.snapshot,
                          instance, image_id)
        self.assertRaises(exception.ImageNotFound, self.store.get, image_id)
        delete.terminate(self.runner, self.compute, self.context, instance)
        self.assertIsNone(self.driver.domain(instance.uuid))
        self.assertFalse(os.path.exists(os.path.join(
            self.settings.instances_path, instance.uuid)))

    def test_deleted_while_the_disk_is_copied(self):
        # The API's delete lands while the driver copies the disk (a
        # concurrent request cannot be timed here: it is made right
        # after the real copy). The snapshot stops before the upload,
        # its copy and image go, and the delete then finishes.
        instance = self.active_instance()
        image_id = self.queue(instance)
        copy = self.driver._flatten_root_disk

        def copy_then_delete(inst, dest):
            copy(inst, dest)
            self.assertTrue(os.path.exists(dest))
            row = self.reload(instance)
            row.task_state = task_states.DELETING
            row.save()
        self.driver._flatten_root_disk = copy_then_delete
        self.assertRaises(exception.UnexpectedDeletingTaskStateError,
                          self.snapshot, instance, image_id)
        self.assertRaises(exception.ImageNotFound, self.store.get, image_id)
        self.assertEqual([], self.temp_files(instance))
        self.assertEqual([], self.faults(instance))
        self.assertEqual(task_states.DELETING, self.states(instance)[1])
        delete.terminate(self.runner, self.compute, self.context,
                         self.reload(instance))
        self.assertIsNone(self.driver.domain(instance.uuid))
        self.assertFalse(os.path.exists(os.path.join(
            self.settings.instances_path, instance.uuid)))
        self.assertEqual([], os.listdir(self.store.path))

    def test_task_updates_check_the_host_and_a_delete(self):
        instance = self.active_instance()
        self.queue(instance)
        update = snapshot._task_updater(self.compute, instance,
                                        task_states.IMAGE_SNAPSHOT)
        update(task_states.IMAGE_PENDING_UPLOAD)
        self.assertEqual(task_states.IMAGE_PENDING_UPLOAD,
                         self.states(instance)[1])
        row = self.reload(instance)
        row.task_state = task_states.DELETING
        row.save()
        self.assertRaises(exception.UnexpectedDeletingTaskStateError,
                          update, task_states.IMAGE_UPLOADING,
                          expected_state=task_states.IMAGE_PENDING_UPLOAD)
        row.task_state = task_states.IMAGE_PENDING_UPLOAD
        row.host = 'elsewhere'
        row.save()
        self.assertRaises(exception.InstanceNotOnThisHost, update,
                          task_states.IMAGE_UPLOADING,
                          expected_state=task_states.IMAGE_PENDING_UPLOAD)

    def test_a_deleted_image_is_not_brought_back(self):
        instance = self.active_instance()
        image_id = self.queue(instance)
        self.store.delete(image_id)
        self.assertRaises(exception.ImageNotFound, self.snapshot, instance,
                          image_id)
        self.assertEqual([], os.listdir(self.store.path))
        self.assertEqual([], self.temp_files(instance))
        self.assertEqual(vm_states.ACTIVE, self.states(instance)[0])


class TestBackup(SnapshotTestCase):

    def backup(self, instance, backup_type, rotation):
        image_id = self.queue(instance, new_image.BACKUP, backup_type,
                              task_states.IMAGE_BACKUP)
        self.snapshot(instance, image_id,
                      snapshot.Rotation(backup_type, rotation))
        return image_id

    def test_rotation_keeps_the_newest_of_this_server_and_type(self):
        instance = self.active_instance()
        other = self.active_instance()
        others = [self.backup(other, 'daily', 5),
                  self.backup(instance, 'weekly', 5)]
        snap = self.queue(instance)
        self.snapshot(instance, snap)
        others.append(snap)
        # An image that claims the server but is no backup, and one whose
        # type is another.
        for properties in ({'instance_uuid': instance.uuid,
                            'backup_type': 'daily'},
                           {'instance_uuid': instance.uuid,
                            'image_type': 'backup'}):
            others.append(self.store.create_queued(new_image.NewImage(
                name='x', owner='p', properties=properties)))
        daily = [self.backup(instance, 'daily', 2) for _ in range(3)]
        kept = {m.id for m in self.store.list()}
        self.assertEqual(set(others), kept - set(daily))
        self.assertEqual(2, len(kept & set(daily)))
        # The one just made is never the one rotated away.
        self.assertIn(daily[-1], kept)
        self.assertEqual(('createBackup', 'compute_backup_instance',
                          'Success'), self.events(instance)[-1])

    def test_rotation_zero_keeps_none(self):
        instance = self.active_instance()
        self.backup(instance, 'daily', 0)
        self.assertEqual([], self.store.list())
        self.assertEqual(vm_states.ACTIVE, self.states(instance)[0])


class TestOnLibvirt(fixtures.ComputeTestCase):
    """The manager's endpoints with libvirt's test driver: real qcow2
    disks, a real domain paused and resumed, the database's rows."""

    def setUp(self):
        super().setUp()
        self.store = libvirt_fixtures.make_image_store(self.tmp)
        self.image = libvirt_fixtures.add_disk_image(self.store, self.tmp)
        self.host = libvirt_fixtures.make_host(
            self.tmp, 'lv1', image_store_path=self.store.path)
        self.addCleanup(self.host.close)
        self.manager = compute_manager.ComputeManager(
            self.host.settings, driver=self.host.driver)

    def booted(self):
        flavor = objects.Flavor(flavorid='1', name='m1.tiny', memory_mb=64,
                                vcpus=1, root_gb=1)
        instance = self.new_instance(host='lv1', node='lv1', flavor=flavor,
                                     image_ref=self.image.id)
        self.host.driver.spawn(
            self.context, instance, self.image,
            network_info=libvirt_fixtures.make_network_info(
                port_ids=[uuidutils.generate_uuid()]))
        instance.vm_state = vm_states.ACTIVE
        instance.power_state = power_state.RUNNING
        instance.save()
        return instance

    def queue(self, instance, image_type, task_state, backup_type=None):
        image_id = self.store.create_queued(new_image.for_server(
            instance, 'snap', image_type, self.image, None, backup_type))
        instance.task_state = task_state
        instance.save()
        return image_id

    def instance_files(self, instance):
        return contract.files_of(self.host.instance_dir(instance.uuid))

    def test_snapshot_of_a_running_guest(self):
        instance = self.booted()
        disks = self.instance_files(instance)
        image_id = self.queue(instance, new_image.SNAPSHOT,
                              task_states.IMAGE_SNAPSHOT)
        self.manager.snapshot_instance(self.context, instance, image_id)
        image = self.store.get(image_id)
        self.assertEqual(('active', 64, 1), (image.status, image.min_ram,
                                             image.min_disk))
        info = qemu_img.info(self.store.data_path(image_id))
        self.assertEqual(('qcow2', None), (info.format, info.backing_file))
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(disks, self.instance_files(instance))

    def test_backups_rotate(self):
        instance = self.booted()
        made = []
        for _ in range(3):
            image_id = self.queue(instance, new_image.BACKUP,
                                  task_states.IMAGE_BACKUP, 'daily')
            self.manager.backup_instance(self.context, instance, image_id,
                                         backup_type='daily', rotation=2)
            made.append(image_id)
        kept = {m.id for m in self.store.list()} - {self.image.id}
        self.assertEqual(2, len(kept))
        self.assertIn(made[-1], kept)
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))
        self.assertEqual([], [n for n in self.instance_files(instance)
                              if '.part' in n])
