"""LibvirtDriver on libvirt's test driver: real domains, real files.

Each failure here is real (a host lacking a bridge, a corrupt image, a disk
too large for qcow2, a failed or missing network-vif-plugged event), never
a mock of the driver's own methods.
"""

import contextlib
import errno
import hashlib
import json
import os
import threading
from unittest import mock

from oslo_concurrency import processutils
from oslo_utils import uuidutils

from nova import context as nova_context
from nova import exception
from nova.image import qemu_img
from nova.model import external_event
from nova.model import network as network_model
from nova.model import power_state
from nova import objects
from nova.tests import base
from nova.tests.fixtures import driver_contract as contract
from nova.tests.fixtures import libvirt_host as fixtures
from nova.tests.unit.virt.libvirt import golden
from nova.virt import event as virtevent
from nova.virt.libvirt import binding
from nova.virt.libvirt import imagecache

GiB = 1024 ** 3
# 2**62 bytes: larger than any qcow2 (or raw file) qemu-img will make.
IMPOSSIBLE_GB = 2 ** 32


def host_state(host):
    """Everything of any instance on a simulated host: domains, VIFs and
    every file under instances_path except the shared image cache."""
    files = {}
    root = host.settings.instances_path
    for dirpath, dirnames, names in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel.split(os.sep)[0] in ('_base', 'locks'):
            continue
        if rel != '_journal':
            # Directories count too; the journals' directory is made by
            # the first attempt and stays, but a journal left in it shows.
            files[rel] = None
        for name in names:
            with open(os.path.join(dirpath, name), 'rb') as f:
                files[os.path.join(rel, name)] = hashlib.sha256(
                    f.read()).hexdigest()
    return host.domain_uuids(), host.plugged_vifs(), files


class LibvirtTestCase(base.TestCase):
    """One simulated host with an image store holding a qcow2 image."""

    def setUp(self):
        super().setUp()
        self.context = nova_context.get_admin_context()
        self.store = fixtures.make_image_store(self.tmp)
        self.image = fixtures.add_disk_image(self.store, self.tmp)
        self.host = self.make_host('compute1')
        self.driver = self.host.driver

    def make_host(self, name, **kwargs):
        kwargs.setdefault('image_store_path', self.store.path)
        host = fixtures.make_host(self.tmp, name, **kwargs)
        self.addCleanup(host.close)
        return host

    def make_instance(self, image=None, **flavor):
        values = dict(flavorid='1', name='m1.tiny', memory_mb=64, vcpus=1,
                      root_gb=1)
        values.update(flavor)
        return objects.Instance(
            self.context, display_name='vm', host=self.host.name,
            image_ref=(image or self.image).id,
            flavor=objects.Flavor(**values))

    def spawn(self, instance, network_info=None, image=None, host=None):
        host = host or self.host
        if network_info is None:
            # A port of its own, so two instances never share a VIF.
            network_info = fixtures.make_network_info(
                port_ids=[uuidutils.generate_uuid()])
        host.driver.spawn(self.context, instance, image or self.image,
                          network_info=network_info)
        return network_info

    def booted(self, **kwargs):
        instance = self.make_instance(**kwargs)
        return instance, self.spawn(instance)

    def disk_files(self, instance, host=None):
        return contract.files_of((host or self.host).instance_dir(
            instance.uuid))

    def assertLeftAsBefore(self, before, host=None):
        host = host or self.host
        self.assertEqual(before, host_state(host))
        base_dir = os.path.join(host.settings.instances_path, '_base')
        if os.path.isdir(base_dir):
            self.assertEqual([], [n for n in os.listdir(base_dir)
                                  if '.part' in n])


class TestSpawn(LibvirtTestCase):

    def test_spawn_creates_overlay_metadata_and_running_domain(self):
        instance = self.make_instance()
        network_info = self.spawn(instance, fixtures.make_network_info())
        idir = self.host.instance_dir(instance.uuid)
        self.assertEqual({'console.log', 'disk', 'disk.info',
                          'libvirt.xml', '.nova-owner'}, set(os.listdir(idir)))
        disk = os.path.join(idir, 'disk')
        info = qemu_img.info(disk, 'qcow2')
        cache = imagecache.ImageCache(self.host.settings.instances_path)
        self.assertEqual(cache.path_for(self.image.id), info.backing_file)
        self.assertEqual(1 * GiB, info.virtual_size)
        with open(os.path.join(idir, 'disk.info')) as f:
            self.assertEqual({'disk': 'qcow2'}, json.load(f))
        self.assertTrue(self.host.is_running(instance.uuid))
        self.assertEqual({instance.uuid}, self.host.domain_uuids())
        self.assertEqual({network_info[0].id}, self.host.plugged_vifs())
        with open(os.path.join(idir, 'libvirt.xml')) as f:
            xml = f.read()
        golden.assert_golden(
            self, 'spawned_qcow2',
            xml.replace(self.tmp, '@TMP@').replace(instance.uuid, '@UUID@'))

    def test_spawn_of_uec_image_copies_kernel_and_ramdisk(self):
        uec = fixtures.add_uec_image(self.store, self.tmp)
        instance = self.make_instance(image=uec)
        self.spawn(instance, image=uec)
        idir = self.host.instance_dir(instance.uuid)
        self.assertEqual({'console.log', 'disk', 'disk.info', 'kernel',
                          'ramdisk', 'libvirt.xml', '.nova-owner'},
                         set(os.listdir(idir)))
        with open(os.path.join(idir, 'kernel'), 'rb') as f:
            self.assertEqual(b'fake kernel\n', f.read())
        xml = self.driver.host.get_guest(instance.uuid).get_xml()
        self.assertIn('<kernel>%s/kernel</kernel>' % idir, xml)
        self.assertIn('<initrd>%s/ramdisk</initrd>' % idir, xml)
        self.assertIn('<cmdline>root=/dev/vda', xml)

    def test_spawn_raw_disks_with_ephemeral_and_swap(self):
        host = self.make_host('rawhost', images_type='raw')
        instance = self.make_instance(ephemeral_gb=1, swap=32)
        self.spawn(instance, host=host)
        idir = host.instance_dir(instance.uuid)
        for name, size in (('disk', 1 * GiB), ('disk.eph0', 1 * GiB),
                           ('disk.swap', 32 * 1024 ** 2)):
            info = qemu_img.info(os.path.join(idir, name), 'raw')
            self.assertEqual(('raw', size, None),
                             (info.format, info.virtual_size,
                              info.backing_file), name)

    def test_spawn_powered_off_defines_without_starting(self):
        instance = self.make_instance()
        self.driver.spawn(self.context, instance, self.image,
                          network_info=fixtures.make_network_info(),
                          power_on=False)
        self.assertEqual(power_state.SHUTDOWN,
                         self.host.power_state(instance.uuid))

    def test_spawn_refuses_instance_that_already_has_a_domain(self):
        instance, _ = self.booted()
        before = host_state(self.host)
        self.assertRaises(exception.InstanceExists, self.spawn, instance)
        self.assertLeftAsBefore(before)

    def test_spawn_waits_for_inactive_vifs_then_runs(self):
        instance = self.make_instance()
        self.spawn(instance, fixtures.make_network_info(active=False,
                                                        count=2))
        self.assertEqual(2, len(self.host.virtapi.waited_for))
        self.assertTrue(self.host.is_running(instance.uuid))

    def test_spawn_non_fatal_vif_timeout_still_runs(self):
        host = self.make_host('lenient', vif_plugging_is_fatal=False,
                              vif_plugging_timeout=0.01)
        host.virtapi.deliver = False
        instance = self.make_instance()
        self.spawn(instance, fixtures.make_network_info(active=False),
                   host=host)
        self.assertTrue(host.is_running(instance.uuid))

    def test_spawn_with_timeout_zero_does_not_wait(self):
        host = self.make_host('nowait', vif_plugging_timeout=0)
        host.virtapi.deliver = False
        instance = self.make_instance()
        self.spawn(instance, fixtures.make_network_info(active=False),
                   host=host)
        self.assertEqual([], host.virtapi.waited_for)
        self.assertTrue(host.is_running(instance.uuid))

    def test_spawn_reuses_disks_found_on_shared_storage(self):
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        with open(os.path.join(self.host.instance_dir(instance.uuid),
                               'disk'), 'ab') as f:
            f.write(b'written by the guest')
        files = self.disk_files(instance)
        other = self.make_host(
            'compute2', instances_path=self.host.settings.instances_path)
        self.spawn(instance, network_info, host=other)
        self.assertTrue(other.is_running(instance.uuid))
        # Every file as it was but the ownership stamp: the directory is
        # compute2's now.
        stamp = files.pop('.nova-owner')
        after = self.disk_files(instance, other)
        self.assertNotEqual(stamp, after.pop('.nova-owner'))
        self.assertEqual(files, after)
        self.assertEqual('compute2', other.driver.read_ownership_stamp(
            instance).host)

    def _left_on_shared_storage(self, image=None):
        """An instance booted on this host, whose host then failed: its
        directory (disk, disk.info, ...) stays on the shared storage."""
        instance = self.make_instance(image=image)
        network_info = self.spawn(instance, image=image)
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        with open(os.path.join(self.host.instance_dir(instance.uuid),
                               'disk'), 'ab') as f:
            f.write(b'written by the guest')
        other = self.make_host(
            'compute2', instances_path=self.host.settings.instances_path)
        return instance, network_info, other

    def test_spawn_without_image_boots_the_disks_on_shared_storage(self):
        # The image was deleted: evacuation passes image_meta=None.
        instance, network_info, other = self._left_on_shared_storage()
        files = self.disk_files(instance)
        self.assertIn('disk.info', files)
        other.driver.spawn(self.context, instance, None,
                           network_info=network_info)
        self.assertTrue(other.is_running(instance.uuid))
        after = self.disk_files(instance, other)
        self.assertEqual(files['disk'], after['disk'])
        self.assertEqual(files['disk.info'], after['disk.info'])

    def test_spawn_without_image_uses_kernel_and_ramdisk_found(self):
        uec = fixtures.add_uec_image(self.store, self.tmp)
        instance, network_info, other = self._left_on_shared_storage(uec)
        files = self.disk_files(instance)
        other.driver.spawn(self.context, instance, None,
                           network_info=network_info)
        idir = other.instance_dir(instance.uuid)
        xml = other.driver.host.get_guest(instance.uuid).get_xml()
        self.assertIn('<kernel>%s/kernel</kernel>' % idir, xml)
        self.assertIn('<initrd>%s/ramdisk</initrd>' % idir, xml)
        after = self.disk_files(instance, other)
        for name in ('disk', 'disk.info', 'kernel', 'ramdisk'):
            self.assertEqual(files[name], after[name], name)

    def test_spawn_without_image_or_root_disk_changes_nothing(self):
        fresh = self.make_instance()
        kept = self.make_instance()
        idir = self.host.instance_dir(kept.uuid)
        os.makedirs(idir)
        with open(os.path.join(idir, 'disk.info'), 'w') as f:
            f.write('{}')
        before = host_state(self.host)
        for instance in (fresh, kept):
            self.assertRaises(exception.ImageNotFound, self.driver.spawn,
                              self.context, instance, None,
                              network_info=fixtures.make_network_info())
        self.assertLeftAsBefore(before)
        self.assertFalse(os.path.exists(self.host.instance_dir(fresh.uuid)))


class EventHookVirtAPI(contract.NetworkBackendVirtAPI):
    """Runs ``hook(instance)`` after the driver plugged and started the
    guest paused, before the network answers: something happening on the
    host while the driver waits."""

    hook = None

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        with super().wait_for_instance_event(
                instance, event_names, deadline, error_callback):
            yield
            if self.hook is not None:
                self.hook(instance)


class TestSpawnFailureLeavesHostAsBefore(LibvirtTestCase):
    """Failure anywhere in spawn: the host is as it was.

    doc/source/cleanup.rst, "Operation by operation", spawn row.
    """

    def assertSpawnFails(self, exc, instance, network_info=None,
                         image=None, host=None):
        host = host or self.host
        before = host_state(host)
        self.assertRaises(exc, self.spawn, instance, network_info,
                          image=image, host=host)
        self.assertLeftAsBefore(before, host)

    def assertRetryWorks(self, instance, host=None, image=None):
        self.spawn(instance, image=image, host=host)
        self.assertTrue((host or self.host).is_running(instance.uuid))

    def test_image_data_missing_from_the_store(self):
        broken = fixtures.add_disk_image(self.store, self.tmp, name='gone')
        os.unlink(self.store.data_path(broken.id))
        self.assertSpawnFails(exception.ImageNotFound,
                              self.make_instance(image=broken),
                              image=broken)

    def test_corrupt_image_data_fails_the_fetch(self):
        bad = fixtures.add_disk_image(self.store, self.tmp, name='bad')
        with open(self.store.data_path(bad.id), 'r+b') as f:
            f.write(b'not what was stored')
        self.assertSpawnFails(exception.ImageUnacceptable,
                              self.make_instance(image=bad), image=bad)
        cache = imagecache.ImageCache(self.host.settings.instances_path)
        self.assertFalse(os.path.exists(cache.path_for(bad.id)))

    def test_overlay_creation_fails(self):
        instance = self.make_instance(root_gb=IMPOSSIBLE_GB)
        self.assertSpawnFails(exception.DiskCreationFailed, instance)
        instance.flavor.root_gb = 1
        self.assertRetryWorks(instance)

    def test_flavor_smaller_than_image(self):
        big = fixtures.add_disk_image(self.store, self.tmp, name='big',
                                      size_mb=2048)
        self.assertSpawnFails(exception.FlavorDiskSmallerThanImage,
                              self.make_instance(image=big), image=big)

    def test_ephemeral_disk_fails_after_root_disk_was_made(self):
        instance = self.make_instance(ephemeral_gb=IMPOSSIBLE_GB)
        self.assertSpawnFails(exception.DiskCreationFailed, instance)

    def test_disk_info_cannot_be_read_keeps_what_was_there(self):
        # A directory that existed before, with a directory in the way of
        # disk.info: reading it fails before any disk is made; the attempt
        # removes the console.log it created, nothing else.
        instance = self.make_instance()
        idir = self.host.instance_dir(instance.uuid)
        os.makedirs(os.path.join(idir, 'disk.info'))
        with open(os.path.join(idir, 'disk.info', 'operator-notes'),
                  'w') as f:
            f.write('keep me')
        self.assertSpawnFails(IsADirectoryError, instance)
        self.assertEqual({'disk.info'}, set(os.listdir(idir)))

    def _disk_full_when_writing_disk_info(self, instance):
        """The file system fills up as disk.info is written; returns, per
        write, whether the root disk existed by then.

        Mocked: os.fsync, for disk.info's temporary file only, since a
        full file system cannot be made here without mounting one.
        """
        real_fsync = os.fsync
        disk = os.path.join(self.host.instance_dir(instance.uuid), 'disk')
        root_disk_there = []

        def fsync(fd):
            if '/disk.info.part-' in os.readlink('/proc/self/fd/%d' % fd):
                root_disk_there.append(os.path.exists(disk))
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_fsync(fd)

        patcher = mock.patch('os.fsync', side_effect=fsync)
        patcher.start()
        self.addCleanup(patcher.stop)
        return root_disk_there

    def test_disk_info_write_fails_after_root_disk_in_fresh_dir(self):
        instance = self.make_instance()
        root_disk_there = self._disk_full_when_writing_disk_info(instance)
        self.assertSpawnFails(OSError, instance)
        self.assertEqual([True], root_disk_there)
        self.assertFalse(os.path.exists(
            self.host.instance_dir(instance.uuid)))

    def test_disk_info_write_fails_after_root_disk_in_existing_dir(self):
        instance = self.make_instance()
        idir = self.host.instance_dir(instance.uuid)
        os.makedirs(idir)
        with open(os.path.join(idir, 'disk.info'), 'w') as f:
            f.write('{"/elsewhere/disk": "raw"}')
        root_disk_there = self._disk_full_when_writing_disk_info(instance)
        self.assertSpawnFails(OSError, instance)  # byte for byte
        self.assertEqual([True], root_disk_there)

    def test_immutable_disk_info_fails_after_root_disk_was_made(self):
        # Real: an immutable disk.info (chattr +i) can be read, but not
        # replaced, even by root; the root disk is made before that.
        instance = self.make_instance()
        idir = self.host.instance_dir(instance.uuid)
        os.makedirs(idir)
        disk_info = os.path.join(idir, 'disk.info')
        with open(disk_info, 'w') as f:
            f.write('{}')
        try:
            processutils.execute('chattr', '+i', disk_info)
        except (OSError, processutils.ProcessExecutionError) as e:
            self.skipTest('chattr +i is not possible here: %s' % e)
        self.addCleanup(processutils.execute, 'chattr', '-i', disk_info)
        self.assertSpawnFails(PermissionError, instance)
        cache = imagecache.ImageCache(self.host.settings.instances_path)
        self.assertTrue(os.path.exists(cache.path_for(self.image.id)))

    def test_libvirt_xml_cannot_be_written_keeps_what_was_there(self):
        # A directory in the way of libvirt.xml, which is written last:
        # the guest was defined and running by then.
        instance = self.make_instance()
        idir = self.host.instance_dir(instance.uuid)
        os.makedirs(os.path.join(idir, 'libvirt.xml'))
        with open(os.path.join(idir, 'libvirt.xml', 'operator-notes'),
                  'w') as f:
            f.write('keep me')
        self.assertSpawnFails(IsADirectoryError, instance)
        self.assertEqual({'libvirt.xml'}, set(os.listdir(idir)))

    def test_rewritten_disk_info_is_put_back_on_failure(self):
        # Shared storage mounted at another path on the first host: this
        # host rewrites disk.info for its own paths, then plugging fails.
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        disk_info = os.path.join(self.host.instance_dir(instance.uuid),
                                 'disk.info')
        with open(disk_info, 'w') as f:
            json.dump({'/mnt/other/%s/disk' % instance.uuid: 'qcow2'}, f)
        other = self.make_host(
            'compute2', instances_path=self.host.settings.instances_path,
            bridges=())
        self.assertSpawnFails(exception.VirtualInterfacePlugException,
                              instance, network_info, host=other)

    def test_xml_cannot_be_built(self):
        self.assertSpawnFails(exception.InvalidInput,
                              self.make_instance(vcpus=0))

    def test_libvirt_refuses_the_definition_after_vifs_were_plugged(self):
        network_info = fixtures.make_network_info()
        bad_mac = network_info[0].__class__(
            id=network_info[0].id, address='not-a-mac',
            network=network_info[0].network)
        self.assertSpawnFails(exception.InternalError, self.make_instance(),
                              network_model.NetworkInfo([bad_mac]))

    def test_vif_plug_fails(self):
        instance = self.make_instance()
        self.host.remove_bridge()
        self.assertSpawnFails(exception.VirtualInterfacePlugException,
                              instance)
        self.host.add_bridge()
        self.assertRetryWorks(instance)

    def test_network_vif_plugged_failed(self):
        self.host.virtapi.event_status = external_event.STATUS_FAILED
        self.assertSpawnFails(exception.VirtualInterfaceCreateException,
                              self.make_instance(),
                              fixtures.make_network_info(active=False))

    def test_network_vif_plugged_never_arrives(self):
        host = self.make_host('slow', vif_plugging_timeout=0.01)
        host.virtapi.deliver = False
        self.assertSpawnFails(exception.VirtualInterfaceCreateException,
                              self.make_instance(),
                              fixtures.make_network_info(active=False),
                              host=host)

    def test_guest_dies_while_waiting_for_the_network(self):
        virtapi = EventHookVirtAPI()
        host = self.make_host('flaky', virtapi=virtapi)
        virtapi.hook = lambda inst: host.driver.host.get_guest(
            inst.uuid).poweroff()
        instance = self.make_instance()
        self.assertSpawnFails(exception.InstanceResumeFailure, instance,
                              fixtures.make_network_info(active=False),
                              host=host)
        virtapi.hook = None
        self.assertRetryWorks(instance, host=host)

    def test_failure_on_shared_storage_keeps_the_disks(self):
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        other = self.make_host(
            'compute2', instances_path=self.host.settings.instances_path,
            bridges=())
        self.assertSpawnFails(exception.VirtualInterfacePlugException,
                              instance, network_info, host=other)
        self.assertTrue(other.driver.instance_on_disk(instance))


class TestLifecycleEvents(LibvirtTestCase):

    def test_power_changes_are_emitted_as_lifecycle_events(self):
        received = []
        arrived = threading.Condition()

        def listener(event):
            with arrived:
                received.append(event)
                arrived.notify_all()

        def wait_for(transition):
            with arrived:
                found = arrived.wait_for(
                    lambda: any(e.transition == transition
                                for e in received), timeout=10)
            self.assertTrue(found, 'no %s event' % transition)

        self.driver.register_event_listener(listener)
        instance, network_info = self.booted()
        wait_for(virtevent.EVENT_LIFECYCLE_STARTED)
        self.driver.power_off(instance)
        wait_for(virtevent.EVENT_LIFECYCLE_STOPPED)
        self.driver.power_on(self.context, instance, network_info)
        self.driver.suspend(self.context, instance)
        wait_for(virtevent.EVENT_LIFECYCLE_SUSPENDED)
        self.assertEqual({instance.uuid}, {e.uuid for e in received})


class TestDestroy(LibvirtTestCase):

    def test_destroy_running_guest_removes_everything_of_it_only(self):
        instance, network_info = self.booted()
        other, other_net = self.booted()
        self.driver.destroy(self.context, instance, network_info)
        self.assertEqual({other.uuid}, self.host.domain_uuids())
        self.assertEqual({other_net[0].id}, self.host.plugged_vifs())
        self.assertFalse(os.path.exists(
            self.host.instance_dir(instance.uuid)))
        self.assertTrue(self.host.is_running(other.uuid))
        cache = imagecache.ImageCache(self.host.settings.instances_path)
        self.assertTrue(os.path.exists(cache.path_for(self.image.id)))

    def test_destroy_suspended_guest_drops_its_managed_save(self):
        instance, network_info = self.booted()
        self.driver.suspend(self.context, instance)
        self.driver.destroy(self.context, instance, network_info)
        self.assertEqual(set(), self.host.domain_uuids())

    def test_a_paused_guest_is_forced_off_without_waiting(self):
        # Its OS cannot answer a shutdown request, so none is sent: the
        # domain is destroyed at once, whatever shutdown_timeout says
        # (libvirt records why a domain went off).
        instance, network_info = self.booted()
        files = self.disk_files(instance)
        self.driver.pause(instance)
        self.driver.power_off(instance, timeout=3600)
        domain = self.driver.host.get_guest(instance.uuid)._domain
        self.assertEqual([binding.DOMAIN_SHUTOFF,
                          binding.libvirt.VIR_DOMAIN_SHUTOFF_DESTROYED],
                         domain.state())
        self.assertEqual(files, self.disk_files(instance))

    def test_destroy_keeping_disks_then_destroy_again(self):
        instance, network_info = self.booted()
        files = self.disk_files(instance)
        for _ in range(2):
            self.driver.destroy(self.context, instance, network_info,
                                destroy_disks=False)
        self.assertEqual(files, self.disk_files(instance))
        self.assertEqual(set(), self.host.domain_uuids())
        self.assertEqual(frozenset(), self.host.plugged_vifs())

    def test_cleanup_refuses_a_bad_uuid_before_changing_anything(self):
        instance, network_info = self.booted()
        before = host_state(self.host)
        for bad in ('..', '../compute1', instance.uuid.upper(),
                    'urn:uuid:' + instance.uuid, ''):
            victim = self.make_instance()
            victim.uuid = bad
            self.assertRaises(exception.InvalidUUID, self.driver.destroy,
                              self.context, victim, None)
        self.assertLeftAsBefore(before)

    def test_destroy_refuses_directory_linked_to_another_instance(self):
        # <instances_path>/<victim uuid> -> <instances_path>/<other uuid>:
        # inside instances_path, but not the victim's own directory.
        other, _ = self.booted()
        victim = self.make_instance()
        os.symlink(self.host.instance_dir(other.uuid),
                   self.host.instance_dir(victim.uuid))
        files = self.disk_files(other)
        self.assertRaises(exception.InvalidInstancePath,
                          self.driver.destroy, self.context, victim, None)
        self.assertEqual(files, self.disk_files(other))
        self.assertTrue(self.host.is_running(other.uuid))

    def test_destroy_refuses_instances_path_entry_linked_outside(self):
        victim = self.make_instance()
        outside = os.path.join(self.tmp, 'elsewhere')
        os.makedirs(outside)
        with open(os.path.join(outside, 'disk'), 'w') as f:
            f.write('not yours')
        os.makedirs(self.host.settings.instances_path, exist_ok=True)
        os.symlink(outside, self.host.instance_dir(victim.uuid))
        self.assertRaises(exception.InvalidInstancePath,
                          self.driver.cleanup, self.context, victim, None)
        self.assertEqual(['disk'], os.listdir(outside))


class TestInventory(LibvirtTestCase):

    def test_get_info_maps_libvirt_states(self):
        instance, network_info = self.booted()
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)
        self.driver.suspend(self.context, instance)
        self.assertEqual(power_state.SUSPENDED,
                         self.driver.get_info(instance).state)
        self.driver.resume(self.context, instance, network_info)
        self.driver.power_off(instance)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)
        self.assertEqual('instance-' + instance.uuid,
                         self.driver.get_info(instance).internal_id)

    def test_available_resource_counts_node_and_guests(self):
        empty = self.driver.get_available_resource(self.host.name)
        self.assertEqual((self.host.name, 4, 8192, 0, 0, 'TEST'),
                         (empty.hypervisor_hostname, empty.vcpus,
                          empty.memory_mb, empty.vcpus_used,
                          empty.memory_mb_used, empty.hypervisor_type))
        self.assertGreater(empty.local_gb, 0)
        self.booted(vcpus=2, memory_mb=128)
        used = self.driver.get_available_resource(self.host.name)
        self.assertEqual((2, 128), (used.vcpus_used, used.memory_mb_used))

    def test_instance_on_disk_needs_the_disk_not_just_a_directory(self):
        instance, network_info = self.booted()
        self.assertTrue(self.driver.instance_on_disk(instance))
        other = self.make_host('compute2')
        os.makedirs(other.instance_dir(instance.uuid))
        self.assertFalse(other.driver.instance_on_disk(instance))

    def test_storage_identity_marker_at_the_root(self):
        identity = self.driver.get_storage_identity()
        marker = os.path.join(self.host.settings.instances_path,
                              '.nova-storage-identity')
        with open(marker) as f:
            self.assertEqual(identity, f.read().strip())
        shared = self.make_host(
            'compute2', instances_path=self.host.settings.instances_path)
        self.assertEqual(identity, shared.driver.get_storage_identity())


class TestHostConnection(LibvirtTestCase):

    def test_init_host_raises_hypervisor_unavailable_when_down(self):
        host = self.make_host(
            'down', connect=False,
            connection_uri='qemu+unix:///system?socket=%s/no.sock'
                           % self.tmp)
        self.assertRaises(exception.HypervisorUnavailable,
                          host.driver.init_host, 'down')
        self.assertRaises(exception.HypervisorUnavailable,
                          host.driver.list_instance_uuids)

    def test_broken_connection_is_replaced_on_the_next_call(self):
        instance, _ = self.booted()
        # What libvirtd dying does to our end of the connection.
        self.driver.host.get_connection().close()
        # The test driver starts again from its node file: no domains.
        self.assertEqual([], self.driver.list_instance_uuids())
        self.booted()
        self.assertEqual(1, len(self.driver.list_instance_uuids()))
