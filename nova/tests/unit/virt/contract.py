"""The driver contract, as tests every virt driver runs.

``nova/virt/driver.py`` says what each driver method leaves on the host
when it succeeds and when it fails (doc/source/cleanup.rst).
``DriverContractTests`` checks it against a driver's real state: its
domains, its VIFs and the files under its ``instances_path``. One subclass
per driver mixes it into ``nova.tests.base.TestCase``::

    class TestFakeDriverContract(contract.DriverContractTests,
                                 base.TestCase):
        def make_driver(self, instances_path=None): ...
        def break_vif_plugging(self, driver=None): ...
        def fix_vif_plugging(self, driver=None): ...
        def artefacts(self, instance, driver=None): ...

Hooks a driver test provides
----------------------------

``make_driver(instances_path=None) -> (driver, HostSettings)``
    A new driver for a new simulated host, built with ``self.virtapi`` (a
    ``NetworkBackendVirtAPI`` the mixin creates in ``setUp``). With
    ``instances_path`` the host uses that directory (two hosts sharing
    storage); otherwise a fresh one under ``self.tmp``. The host must
    offer the bridge ``BRIDGE`` and ``vif_plugging_timeout`` must be
    positive. ``setUp`` calls it once for ``self.driver``/``self.settings``.

``artefacts(instance, driver=None) -> Artefacts``
    What ``driver`` (default ``self.driver``) has of ``instance`` on its
    host right now. ``files_of(path)`` builds the ``files`` mapping.

``break_vif_plugging(driver=None)`` / ``fix_vif_plugging(driver=None)``
    Make plugging a VIF on ``BRIDGE`` fail for real on that host, and
    undo it. The fake driver drops the bridge from ``driver.bridges``; the
    libvirt driver removes the bridge from the host.

Hooks with a default
--------------------

``make_instance(**fields)``: an ``objects.Instance`` not saved anywhere
(the driver never touches the database). ``make_network_info(active=True)``:
one VIF on ``BRIDGE``; with ``active=False`` the driver must wait for its
``network-vif-plugged`` event.
"""

import contextlib
import dataclasses
import hashlib
import os

from nova.compute import instance_events
from nova.model import power_state
from nova import context as nova_context
from nova import exception
from nova.model import network as network_model
from nova import objects
from nova.virt import driver as driver_base
from nova.model import external_event

BRIDGE = 'br-contract'
PORT_ID = '7c1e5a2e-6f0b-4d0c-9a59-0d3a3c4f5b61'


@dataclasses.dataclass(frozen=True)
class Artefacts:
    """One instance's artefacts on one host."""
    domain_defined: bool
    running: bool
    vifs: frozenset           # port ids plugged on the host
    instance_dir_exists: bool
    files: dict               # path relative to the instance dir -> sha256

    @property
    def nothing(self):
        return not (self.domain_defined or self.running or self.vifs
                    or self.instance_dir_exists)


def files_of(path):
    """``{relative path: sha256}`` of every file below ``path``."""
    found = {}
    for root, _dirs, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            with open(full, 'rb') as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            found[os.path.relpath(full, path)] = digest
    return found


class NetworkBackendVirtAPI(instance_events.ComputeVirtAPI):
    """The manager's VirtAPI, with a network backend answering plugs.

    The real network backend sends ``network-vif-plugged`` when a port is
    bound; here it is sent right after the driver's plugging (the body of
    ``wait_for_instance_event``), with ``event_status``, or not at all
    when ``deliver`` is false. ``waited_for`` records every event a driver
    asked to wait for.
    """

    def __init__(self):
        super().__init__()
        self.event_status = external_event.STATUS_COMPLETED
        self.deliver = True
        self.waited_for = []

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        self.waited_for.extend(event_names)
        with super().wait_for_instance_event(
                instance, event_names, deadline=deadline,
                error_callback=error_callback):
            yield
            if self.deliver:
                for name, tag in event_names:
                    self.events.deliver(external_event.InstanceExternalEvent(
                        instance.uuid, name, tag, self.event_status))


class DriverContractHelpers:
    """Hooks, their defaults and helpers, without the contract's tests.

    A driver's own tests can use these to build on the same hooks.
    """

    # -- hooks --

    def make_driver(self, instances_path=None):
        raise NotImplementedError()

    def artefacts(self, instance, driver=None):
        raise NotImplementedError()

    def break_vif_plugging(self, driver=None):
        raise NotImplementedError()

    def fix_vif_plugging(self, driver=None):
        raise NotImplementedError()

    def make_instance(self, **fields):
        values = dict(
            display_name='contract', user_id='u1', project_id='p1',
            host=self.settings.host, node=self.settings.host,
            vm_state='building', image_ref='cirros',
            flavor=objects.Flavor(flavorid='1', name='tiny', memory_mb=64,
                                  vcpus=1, root_gb=1))
        values.update(fields)
        return objects.Instance(self.context, **values)

    def make_network_info(self, active=True):
        network = network_model.Network(id='net-1', label='private',
                                        bridge=BRIDGE)
        return network_model.NetworkInfo([network_model.VIF(
            id=PORT_ID, address='fa:16:3e:00:00:01', network=network,
            active=active)])

    # -- helpers --

    def setUp(self):
        super().setUp()
        self.context = nova_context.get_admin_context()
        self.virtapi = NetworkBackendVirtAPI()
        self.driver, self.settings = self.make_driver()
        self.driver.init_host(self.settings.host)
        # A compute service's first start on an empty instances_path.
        self.driver.init_storage_identity()
        self.image_meta = {'id': 'cirros', 'disk_format': 'raw'}

    def spawn(self, instance, network_info=None, driver=None):
        driver = driver or self.driver
        if network_info is None:
            network_info = self.make_network_info()
        driver.spawn(self.context, instance, self.image_meta, [], None,
                     network_info=network_info)
        return network_info

    def booted(self):
        instance = self.make_instance()
        network_info = self.spawn(instance)
        return instance, network_info

    def assertRunning(self, instance, network_info, driver=None):
        found = self.artefacts(instance, driver)
        self.assertTrue(found.domain_defined)
        self.assertTrue(found.running)
        self.assertEqual({vif.id for vif in network_info}, found.vifs)
        self.assertTrue(found.instance_dir_exists)
        self.assertTrue(found.files, 'no disk in the instance directory')
        return found

    def assertNothingLeft(self, instance, driver=None):
        found = self.artefacts(instance, driver)
        self.assertTrue(found.nothing, found)


class DriverContractTests(DriverContractHelpers):
    """Every driver's promises about what it leaves behind."""

    # -- spawn --

    def test_spawn_leaves_domain_running_vifs_and_files(self):
        instance, network_info = self.booted()
        self.assertRunning(instance, network_info)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(instance).state)
        self.assertTrue(self.driver.instance_on_disk(instance))
        self.assertIn(instance.uuid, self.driver.list_instance_uuids())

    def test_spawn_waits_for_events_of_inactive_vifs_only(self):
        instance = self.make_instance()
        network_info = self.make_network_info(active=False)
        self.spawn(instance, network_info)
        self.assertEqual([('network-vif-plugged', PORT_ID)],
                         [tuple(e) for e in self.virtapi.waited_for])
        self.assertRunning(instance, network_info)

        other = self.make_instance()
        self.virtapi.waited_for.clear()
        self.spawn(other, self.make_network_info(active=True))
        self.assertEqual([], self.virtapi.waited_for)

    def test_spawn_failure_at_vif_plugging_leaves_nothing(self):
        instance = self.make_instance()
        self.break_vif_plugging()
        self.assertRaises(exception.NovaException, self.spawn, instance)
        self.assertNothingLeft(instance)
        self.assertNotIn(instance.uuid, self.driver.list_instance_uuids())

        # Nothing left behind blocks the next attempt.
        self.fix_vif_plugging()
        network_info = self.spawn(instance)
        self.assertRunning(instance, network_info)

    def test_spawn_failed_vif_event_leaves_nothing(self):
        instance = self.make_instance()
        self.virtapi.event_status = external_event.STATUS_FAILED
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.spawn, instance,
                          self.make_network_info(active=False))
        self.assertNothingLeft(instance)

    def test_spawn_failure_keeps_existing_directory_byte_for_byte(self):
        # Shared storage: host A made the instance's disks; host B, on
        # the same directory, fails to spawn it (an evacuation).
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        before = self.artefacts(instance).files
        host_b, _ = self.make_driver(
            instances_path=self.settings.instances_path)
        host_b.init_host('host-b')
        self.break_vif_plugging(host_b)

        self.assertRaises(exception.NovaException, self.spawn, instance,
                          network_info, host_b)

        on_b = self.artefacts(instance, host_b)
        self.assertFalse(on_b.domain_defined)
        self.assertEqual(frozenset(), on_b.vifs)
        self.assertTrue(on_b.instance_dir_exists)
        self.assertEqual(before, on_b.files)

        self.fix_vif_plugging(host_b)
        self.spawn(instance, network_info, host_b)
        self.assertRunning(instance, network_info, host_b)

    # -- power --

    def test_power_off_then_power_on(self):
        instance, network_info = self.booted()
        files = self.artefacts(instance).files

        self.driver.power_off(instance)
        stopped = self.artefacts(instance)
        self.assertTrue(stopped.domain_defined)
        self.assertFalse(stopped.running)
        self.assertEqual(files, stopped.files)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(instance).state)

        self.driver.power_on(self.context, instance, network_info)
        self.assertRunning(instance, network_info)

    def test_power_on_failure_keeps_every_file_and_next_power_on_works(self):
        # Nova bug 1660647, step by step.
        instance, network_info = self.booted()
        self.driver.power_off(instance)
        before = self.artefacts(instance).files
        self.break_vif_plugging()

        self.assertRaises(exception.NovaException, self.driver.power_on,
                          self.context, instance, network_info)

        after = self.artefacts(instance)
        self.assertFalse(after.running)
        self.assertEqual(frozenset(), after.vifs)
        self.assertTrue(after.instance_dir_exists)
        self.assertEqual(before, after.files)

        self.fix_vif_plugging()
        self.driver.power_on(self.context, instance, network_info)
        self.assertRunning(instance, network_info)

    # -- reboot --

    def test_soft_reboot_keeps_guest_running(self):
        instance, network_info = self.booted()
        files = self.artefacts(instance).files
        self.driver.reboot(self.context, instance, network_info, 'SOFT')
        self.assertEqual(files, self.assertRunning(instance,
                                                   network_info).files)

    def test_hard_reboot_failure_keeps_disks_and_next_reboot_works(self):
        instance, network_info = self.booted()
        before = self.artefacts(instance).files
        self.break_vif_plugging()

        self.assertRaises(exception.NovaException, self.driver.reboot,
                          self.context, instance, network_info, 'HARD')

        after = self.artefacts(instance)
        self.assertTrue(after.instance_dir_exists)
        self.assertEqual(before, after.files)

        self.fix_vif_plugging()
        self.driver.reboot(self.context, instance, network_info, 'HARD')
        self.assertRunning(instance, network_info)

    # -- suspend --

    def test_suspend_then_resume(self):
        instance, network_info = self.booted()
        self.driver.suspend(self.context, instance)
        suspended = self.artefacts(instance)
        self.assertTrue(suspended.domain_defined)
        self.assertFalse(suspended.running)
        self.assertEqual(power_state.SUSPENDED,
                         self.driver.get_info(instance).state)

        self.driver.resume(self.context, instance, network_info)
        self.assertRunning(instance, network_info)

    def test_resume_failure_keeps_files_and_next_resume_works(self):
        instance, network_info = self.booted()
        self.driver.suspend(self.context, instance)
        before = self.artefacts(instance).files
        self.break_vif_plugging()

        self.assertRaises(exception.NovaException, self.driver.resume,
                          self.context, instance, network_info)

        after = self.artefacts(instance)
        self.assertFalse(after.running)
        self.assertEqual(before, after.files)

        self.fix_vif_plugging()
        self.driver.resume(self.context, instance, network_info)
        self.assertRunning(instance, network_info)

    # -- destroy --

    def test_destroy_keeping_disks_keeps_the_directory(self):
        instance, network_info = self.booted()
        files = self.artefacts(instance).files
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=False)
        after = self.artefacts(instance)
        self.assertFalse(after.domain_defined)
        self.assertEqual(frozenset(), after.vifs)
        self.assertEqual(files, after.files)

    def test_destroy_with_disks_removes_the_directory(self):
        instance, network_info = self.booted()
        self.driver.destroy(self.context, instance, network_info,
                            destroy_disks=True)
        self.assertNothingLeft(instance)
        self.assertFalse(self.driver.instance_on_disk(instance))
        self.assertRaises(exception.InstanceNotFound, self.driver.get_info,
                          instance)

    def test_destroy_twice_succeeds(self):
        instance, network_info = self.booted()
        for _ in range(2):
            self.driver.destroy(self.context, instance, network_info)
        self.assertNothingLeft(instance)

    def test_destroy_refuses_a_directory_that_is_a_symlink(self):
        # A directory planted as a link must never let destroy reach
        # files outside the instance's own directory.
        instance = self.make_instance()
        outside = os.path.join(self.tmp, 'precious')
        os.makedirs(outside)
        with open(os.path.join(outside, 'disk'), 'wb') as f:
            f.write(b'user data')
        os.symlink(outside, os.path.join(self.settings.instances_path,
                                         instance.uuid))
        try:
            self.driver.destroy(self.context, instance, None,
                                destroy_disks=True)
        except exception.Invalid:
            pass
        self.assertEqual({'disk'}, set(files_of(outside)))

    def test_other_instances_are_untouched(self):
        first, first_net = self.booted()
        second, _ = self.booted()
        files = self.artefacts(first).files
        self.driver.destroy(self.context, second, network_model.NetworkInfo(),
                            destroy_disks=True)
        self.assertEqual(files, self.assertRunning(first, first_net).files)

    # -- inventory --

    def test_list_instance_uuids(self):
        self.assertEqual([], self.driver.list_instance_uuids())
        first, _ = self.booted()
        second, _ = self.booted()
        self.assertEqual(sorted([first.uuid, second.uuid]),
                         sorted(self.driver.list_instance_uuids()))

    def test_plugged_vif_ids_follow_plugging(self):
        # The host's network agent polls this to report ports plugged.
        if (type(self.driver).plugged_vif_ids
                is driver_base.ComputeDriver.plugged_vif_ids):
            self.skipTest('the driver cannot tell its plugged VIFs (allowed '
                          'by the contract); the network agent will never '
                          'report its ports plugged')
        first, network_info = self.booted()
        second = self.make_instance()
        self.assertEqual({PORT_ID}, set(self.driver.plugged_vif_ids()))
        self.assertEqual({PORT_ID},
                         set(self.driver.plugged_vif_ids(first.uuid)))
        self.assertEqual(set(), set(self.driver.plugged_vif_ids(
            second.uuid)))
        self.driver.destroy(self.context, first, network_info)
        self.assertEqual(set(), set(self.driver.plugged_vif_ids()))

    def test_get_info_of_unknown_instance_raises_instance_not_found(self):
        self.assertRaises(exception.InstanceNotFound, self.driver.get_info,
                          self.make_instance())

    # -- storage identity --

    def test_storage_identity_is_stable(self):
        identity = self.driver.get_storage_identity()
        self.assertTrue(identity)
        self.assertEqual(identity, self.driver.get_storage_identity())

    def test_storage_identity_shared_by_hosts_on_one_directory(self):
        same, _ = self.make_driver(
            instances_path=self.settings.instances_path)
        other, _ = self.make_driver()
        other.init_storage_identity()
        identity = self.driver.get_storage_identity()
        self.assertEqual(identity, same.get_storage_identity())
        self.assertNotEqual(identity, other.get_storage_identity())

    def test_reading_the_storage_identity_never_creates_it(self):
        other, other_settings = self.make_driver()
        self.assertIsNone(other.get_storage_identity())
        status = other.get_storage_status()
        self.assertIn('no storage identity marker', status.unknown_reason)
        self.assertFalse(os.path.lexists(os.path.join(
            other_settings.instances_path, '.nova-storage-identity')))

    def test_instance_directory_is_not_storage_identity(self):
        # A leftover instance directory on a private host is not evidence
        # of shared storage (the evacuation-leftovers bug).
        instance, network_info = self.booted()
        other, other_settings = self.make_driver()
        os.makedirs(os.path.join(other_settings.instances_path,
                                 instance.uuid))
        # Nor is a host with instances given an identity on the fly: its
        # storage is unknown until an operator says what it is.
        self.assertIsNone(other.init_storage_identity())
        self.assertIsNone(other.get_storage_identity())
        self.assertTrue(self.driver.get_storage_identity())
