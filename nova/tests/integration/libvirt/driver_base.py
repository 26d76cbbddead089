"""What the tests of LibvirtDriver on a real host share.

``DriverTestCase`` gives each test class a real host (``cls.host``), a
Linux bridge made for the class (``cls.bridge``, removed afterwards) and
an image store with a blank qcow2 image; each test gets a
``LibvirtDriver`` on that host with the linuxbridge VIF driver (real tap
devices) and a ``NetworkBackendVirtAPI`` whose network-vif-plugged events
the test controls (``deliver``, ``event_status``). After each test every
domain left on the host and every tap of the test's ports is removed, so
tests never see each other's leftovers.

``observe`` returns an ``Observation`` of one instance (domain state,
QEMU process, its taps and the bridge each is on, the files of its
directory with their SHA-256) and prints it; tests observe before and
after each operation so a failure is diagnosable from the log.
"""

import dataclasses
import os
import struct
import time

from nova.virt.libvirt.binding import libvirt
from oslo_concurrency import processutils
from oslo_utils import uuidutils

from nova.conf import host_settings
from nova import context as nova_context
from nova.model import network as network_model
from nova import objects
from nova.testing import netdev
from nova.tests.fixtures import driver_contract as contract
from nova.tests.fixtures import libvirt_host as fixtures
from nova.tests.integration.libvirt import base
from nova.virt.libvirt import designer
from nova.virt.libvirt import driver as libvirt_driver

# A flavor QEMU cannot allocate on this host (no swap, a few GiB free):
# QEMU exits with "cannot set up guest memory 'pc.ram'".
TOO_MUCH_MEMORY_MB = 1024 * 1024
# Larger than any disk qemu-img will create.
IMPOSSIBLE_GB = 2 ** 32


GUEST_BANNER = b'nova test guest up\n'


def multiboot_kernel(banner=GUEST_BANNER):
    """The smallest kernel QEMU really boots: a multiboot image that
    writes ``banner`` to the first serial port (console.log) and halts.
    (A made-up kernel file makes QEMU exit at once: "linux kernel too old
    to load a ram disk".)"""
    magic, flags, load = 0x1BADB002, 0x00010000, 0x100000
    checksum = -(magic + flags) & 0xffffffff
    header = struct.pack('<8I', magic, flags, checksum, load, load, 0, 0,
                         load + 32)
    code = bytes([0x66, 0xBA, 0xF8, 0x03])          # mov dx, 0x3f8
    for char in banner:
        code += bytes([0xB0, char, 0xEE])           # mov al, c; out dx, al
    return header + code + bytes([0xFA, 0xF4, 0xEB, 0xFD])  # cli; hlt


def add_bootable_uec_image(store, scratch_dir, name='uec'):
    """A kernel + ramdisk + raw root disk image set QEMU can boot."""
    parts = {}
    for part, fmt, content in (('kernel', 'aki', multiboot_kernel()),
                               ('ramdisk', 'ari', b'ramdisk\n' * 64)):
        source = os.path.join(scratch_dir, '%s-%s' % (name, part))
        with open(source, 'wb') as f:
            f.write(content)
        parts[part] = store.add_from_file(
            source, name='%s-%s' % (name, part), disk_format=fmt)
        os.unlink(source)
    source = os.path.join(scratch_dir, '%s-root.raw' % name)
    processutils.execute('qemu-img', 'create', '-f', 'raw', source, '1M')
    try:
        return store.add_from_file(source, name=name, disk_format='raw',
                                   kernel_id=parts['kernel'].id,
                                   ramdisk_id=parts['ramdisk'].id)
    finally:
        os.unlink(source)


STATE_NAMES = {libvirt.VIR_DOMAIN_RUNNING: 'running',
               libvirt.VIR_DOMAIN_PAUSED: 'paused',
               libvirt.VIR_DOMAIN_SHUTOFF: 'shut off',
               libvirt.VIR_DOMAIN_CRASHED: 'crashed'}


@dataclasses.dataclass(frozen=True)
class Observation:
    """One instance's artefacts on one real host."""
    domain: str | None          # 'running', 'shut off', ... or None
    managed_save: bool
    taps: dict                  # tap name -> bridge it is attached to
    instance_dir: bool
    files: dict                 # name in the instance dir -> sha256
    qemu_pid: int | None        # of this instance's domain

    @property
    def running(self):
        return self.domain == 'running'

    @property
    def nothing(self):
        return (self.domain is None and not self.taps
                and not self.instance_dir)


class DriverTestCase(base.RealHostTestCase):
    """LibvirtDriver on a real host, a real bridge and real tap devices."""

    vif_plugging_timeout = 1

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bridge = netdev.LinuxBridge(netdev.unique_name('nvbr'))
        cls.addClassCleanup(cls.bridge.remove)
        cls.bridge.create()
        cls.store = fixtures.make_image_store(cls.class_tmp)
        cls.image = fixtures.add_disk_image(cls.store, cls.class_tmp)

    def setUp(self):
        super().setUp()
        self.context = nova_context.get_admin_context()
        self.virtapi = contract.NetworkBackendVirtAPI()
        self.driver = self.make_driver()
        self._taps = set()
        self.addCleanup(self._remove_leftovers)

    def make_driver(self, **overrides):
        values = dict(
            host=self.host.name, instances_path=self.host.instances_path,
            connection_uri=self.host.uri, virt_type='qemu',
            vif_driver='linuxbridge',
            vif_plugging_timeout=self.vif_plugging_timeout,
            vif_plugging_is_fatal=True, shutdown_timeout=0,
            wait_running_timeout=10, image_store_path=self.store.path)
        values.update(overrides)
        driver = libvirt_driver.LibvirtDriver(
            self.virtapi, host_settings.HostSettings(**values))
        driver.init_host(self.host.name)
        self.addCleanup(driver.cleanup_host, self.host.name)
        return driver

    def _remove_leftovers(self):
        # Whatever a failing test left must not reach the next test.
        base.wipe_domains(self.host)
        for tap in self._taps:
            if netdev.link_exists(tap):
                netdev.delete_link(tap)

    def make_instance(self, image=None, **flavor):
        values = dict(flavorid='1', name='m1.tiny', memory_mb=64, vcpus=1,
                      root_gb=1)
        values.update(flavor)
        return objects.Instance(
            self.context, display_name='vm', host=self.host.name,
            image_ref=(image or self.image).id,
            flavor=objects.Flavor(**values))

    def own_bridge(self):
        """A bridge for this test alone (it may remove and restore it)."""
        bridge = netdev.LinuxBridge(netdev.unique_name('nvbr'))
        self.addCleanup(bridge.remove)
        return bridge.create()

    def make_network_info(self, bridge=None, active=False):
        """One port on the class bridge (or ``bridge``), with a fresh id so
        its tap name is this test's own; inactive by default, so the
        driver waits for its network-vif-plugged event."""
        bridge = bridge or self.bridge.name
        network = network_model.Network(id='net-' + bridge, label=bridge,
                                        bridge=bridge)
        vif = network_model.VIF(id=uuidutils.generate_uuid(),
                                address='fa:16:3e:%02x:%02x:%02x'
                                        % tuple(os.urandom(3)),
                                network=network, active=active)
        self._taps.add(vif.devname)
        return network_model.NetworkInfo([vif])

    def spawn(self, instance, network_info, image=None):
        self.driver.spawn(self.context, instance, image or self.image,
                          network_info=network_info)

    def booted(self, image=None, bridge=None, **flavor):
        instance = self.make_instance(image=image, **flavor)
        network_info = self.make_network_info(bridge=bridge)
        self.spawn(instance, network_info, image=image)
        seen = self.observe('booted', instance, network_info)
        self.assertRunningWithTap(seen, network_info)
        return instance, network_info

    def stopped(self, image=None, bridge=None, **flavor):
        """Booted, then powered off: the start of Nova bug 1660647."""
        instance, network_info = self.booted(image=image, bridge=bridge,
                                             **flavor)
        self.driver.power_off(instance)
        seen = self.observe('powered off', instance, network_info)
        self.assertEqual('shut off', seen.domain)
        return instance, network_info, seen

    def wait_for_console(self, instance, banners=1, timeout=30):
        """The guest's console.log once it holds ``banners`` whole
        banners (``GUEST_BANNER``, line end included): the guest writes
        it a byte at a time, so a read may catch half a line."""
        path = os.path.join(self.instance_dir(instance), 'console.log')
        deadline = time.monotonic() + timeout
        while True:
            with open(path, 'rb') as f:
                content = f.read()
            if content.count(GUEST_BANNER) >= banners:
                return content
            if time.monotonic() > deadline:
                self.fail('console.log of %s shows %d whole banner(s), not '
                          '%d: %r' % (instance.uuid,
                                      content.count(GUEST_BANNER), banners,
                                      content))
            time.sleep(0.05)

    def instance_dir(self, instance):
        return os.path.join(self.host.instances_path, instance.uuid)

    def observe(self, label, instance, network_info):
        domains = base.host_domains(self.host)
        domain = domains.get(instance.uuid)
        taps = {vif.devname: netdev.master(vif.devname)
                for vif in network_info if netdev.link_exists(vif.devname)}
        idir = self.instance_dir(instance)
        seen = Observation(
            domain=None if domain is None else STATE_NAMES.get(
                domain[0], str(domain[0])),
            managed_save=bool(domain and domain[1]),
            taps=taps, instance_dir=os.path.isdir(idir),
            files=contract.files_of(idir),
            qemu_pid=self.host.qemu_pid(designer.domain_name(instance.uuid)))
        print('--- %s: instance %s ---\n  all domains on %s: %s\n'
              '  domain: %s%s\n  qemu: %s\n'
              '  taps: %s\n  dir %s: %s\n  files: %s' % (
                  label, instance.uuid, self.host.name,
                  {u: STATE_NAMES.get(st, st) for u, (st, _ms)
                   in domains.items()},
                  seen.domain,
                  ' (managed save)' if seen.managed_save else '',
                  seen.qemu_pid, seen.taps, idir,
                  'present' if seen.instance_dir else 'absent',
                  {n: h[:12] for n, h in sorted(seen.files.items())}))
        return seen

    # -- assertions on what a host holds --------------------------------

    def assertRunningWithTap(self, seen, network_info):
        self.assertEqual('running', seen.domain)
        self.assertEqual({vif.devname: vif.network.bridge
                          for vif in network_info}, seen.taps)
        self.assertIsNotNone(seen.qemu_pid)

    def assertNothingLeft(self, seen):
        self.assertIsNone(seen.domain)
        self.assertEqual({}, seen.taps)
        self.assertFalse(seen.instance_dir)

    def assertStoppedWithFilesIntact(self, seen, before):
        """After a failed start: no guest, no tap, every file as it was."""
        self.assertNotEqual('running', seen.domain)
        self.assertNotEqual('paused', seen.domain)
        self.assertEqual({}, seen.taps)
        self.assertTrue(seen.instance_dir)
        self.assertEqual(before.files, seen.files)
