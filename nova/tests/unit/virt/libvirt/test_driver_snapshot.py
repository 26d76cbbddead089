"""LibvirtDriver.snapshot on libvirt's test driver: the root disk copied
(flattened, qcow2) into the local store's queued image, the guest as it
was, its disks untouched, no temporary file left in any outcome."""

import os

from oslo_utils import uuidutils

from nova import exception
from nova.image import new_image
from nova.image import qemu_img
from nova.model import power_state
from nova.model import task_states
from nova.tests.unit.virt.libvirt import test_driver

GiB = 1024 ** 3


class Stop(Exception):
    """What the instance's task update raises: deleted or moved away."""


class TestSnapshot(test_driver.LibvirtTestCase):

    def queued(self):
        return self.store.create_queued(new_image.NewImage(
            name='snap', owner='p', properties={'image_type': 'snapshot'}))

    def snapshot(self, instance, image_id, stop_at=None):
        """Snapshot; the task states the driver moved through (and
        whether the guest ran at each), raising ``Stop`` at ``stop_at``."""
        seen = []

        def update_task_state(task_state, expected_state=None):
            seen.append((task_state, expected_state,
                         self.host.power_state(instance.uuid)))
            if task_state == stop_at:
                raise Stop()
        self.driver.snapshot(self.context, instance, image_id,
                             update_task_state)
        return seen

    def assertNoTemporaryFile(self, instance):
        self.assertEqual([], [n for n in os.listdir(
            self.host.instance_dir(instance.uuid)) if '.part' in n])

    def test_running_guest(self):
        instance, _network_info = self.booted()
        disks = self.disk_files(instance)
        image_id = self.queued()
        seen = self.snapshot(instance, image_id)
        self.assertEqual(
            [(task_states.IMAGE_PENDING_UPLOAD, None, power_state.RUNNING),
             (task_states.IMAGE_UPLOADING, task_states.IMAGE_PENDING_UPLOAD,
              power_state.RUNNING)], seen)
        image = self.store.get(image_id)
        self.assertEqual('active', image.status)
        info = qemu_img.info(self.store.data_path(image_id))
        # Flattened: the store's copy has no backing file.
        self.assertEqual(('qcow2', None, 1 * GiB),
                         (info.format, info.backing_file, info.virtual_size))
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(disks, self.disk_files(instance))
        self.assertNoTemporaryFile(instance)
        self.assertNotIn(image_id, self.driver.live_attempts())

    def test_stopped_guest_stays_stopped(self):
        instance, _network_info = self.booted()
        self.driver.power_off(instance)
        disks = self.disk_files(instance)
        image_id = self.queued()
        self.snapshot(instance, image_id)
        self.assertEqual('active', self.store.get(image_id).status)
        self.assertEqual(power_state.SHUTDOWN,
                         self.host.power_state(instance.uuid))
        self.assertEqual(disks, self.disk_files(instance))

    def test_paused_guest_stays_paused(self):
        instance, _network_info = self.booted()
        self.driver.host.get_guest(instance.uuid).pause()
        self.snapshot(instance, self.queued())
        self.assertEqual(power_state.PAUSED,
                         self.host.power_state(instance.uuid))

    def test_stopped_before_the_upload_leaves_nothing(self):
        # Deleted (or moved away) while the disk was copied: the guest
        # runs on, the copy is removed, the image keeps no data.
        instance, _network_info = self.booted()
        disks = self.disk_files(instance)
        image_id = self.queued()
        self.assertRaises(Stop, self.snapshot, instance, image_id,
                          stop_at=task_states.IMAGE_UPLOADING)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(disks, self.disk_files(instance))
        self.assertNoTemporaryFile(instance)
        self.assertEqual('queued', self.store.get(image_id).status)
        self.assertNotIn(image_id, self.driver.live_attempts())

    def test_stopped_before_the_guest_is_touched(self):
        instance, _network_info = self.booted()
        disks = self.disk_files(instance)
        self.assertRaises(Stop, self.snapshot, instance, self.queued(),
                          stop_at=task_states.IMAGE_PENDING_UPLOAD)
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual(disks, self.disk_files(instance))
        self.assertNoTemporaryFile(instance)

    def test_an_image_id_that_is_no_uuid_is_refused_first(self):
        instance, _network_info = self.booted()
        for bad in ('../disk', uuidutils.generate_uuid().upper()):
            with self.subTest(image_id=bad):
                self.assertRaises(exception.InvalidUUID, self.snapshot,
                                  instance, bad)
        self.assertNoTemporaryFile(instance)
