"""VIF drivers: noop accounting, and Linux bridge taps made for real."""

import dataclasses
import os
import shutil
import unittest
from unittest import mock

from oslo_concurrency import processutils
from oslo_utils import uuidutils

from nova.conf import host_settings
from nova import exception
from nova.model import network as network_model
from nova.tests import base
from nova.virt.libvirt import vif as libvirt_vif


@dataclasses.dataclass
class _Instance:
    uuid: str


INSTANCE = _Instance(uuidutils.generate_uuid())
OTHER_UUID = uuidutils.generate_uuid()
# <linux/if.h>
IFF_UP = 0x1


def _vif(bridge, port_id=None):
    network = network_model.Network(id='n1', label='private', bridge=bridge)
    return network_model.VIF(id=port_id or uuidutils.generate_uuid(),
                             address='fa:16:3e:00:00:01', network=network)


def _settings(**kwargs):
    values = dict(host='h1', instances_path='/nonexistent')
    values.update(kwargs)
    return host_settings.HostSettings(**values)


class TestSelection(base.TestCase):

    def test_auto_is_noop_on_the_test_driver_only(self):
        self.assertIsInstance(
            libvirt_vif.get_vif_driver(_settings(
                connection_uri='test:///x/node.xml')),
            libvirt_vif.NoopVIFDriver)
        self.assertIsInstance(
            libvirt_vif.get_vif_driver(_settings(
                connection_uri='qemu:///system')),
            libvirt_vif.LinuxBridgeVIFDriver)
        self.assertIsInstance(
            libvirt_vif.get_vif_driver(_settings(
                connection_uri='test:///x', vif_driver='linuxbridge')),
            libvirt_vif.LinuxBridgeVIFDriver)

    def test_unknown_driver_is_refused(self):
        self.assertRaises(exception.InvalidConfiguration,
                          libvirt_vif.get_vif_driver,
                          _settings(vif_driver='ovs'))


class TestNoop(base.TestCase):

    def test_plug_needs_the_bridge_on_this_host(self):
        driver = libvirt_vif.NoopVIFDriver(_settings(bridges=('br-a',)))
        ok, missing = _vif('br-a'), _vif('br-b')
        driver.plug(INSTANCE, ok)
        with self.assertRaises(exception.VirtualInterfacePlugException) as e:
            driver.plug(INSTANCE, missing)
        self.assertIn('br-b', str(e.exception))
        self.assertIn('h1', str(e.exception))
        self.assertEqual({ok.id}, driver.plugged_vif_ids())
        self.assertEqual({ok.id}, driver.plugged_vif_ids(INSTANCE.uuid))
        self.assertEqual(set(), driver.plugged_vif_ids(OTHER_UUID))
        self.assertEqual({INSTANCE.uuid: {ok.id}},
                         driver.plugged_vifs_by_instance())
        driver.unplug(INSTANCE, ok)
        driver.unplug(INSTANCE, ok)
        self.assertEqual(set(), driver.plugged_vif_ids())
        self.assertEqual({}, driver.plugged_vifs_by_instance())
        # A restarted host's taps, counted again.
        driver.restore([(OTHER_UUID, ok.id)])
        self.assertEqual({OTHER_UUID: {ok.id}},
                         driver.plugged_vifs_by_instance())

    def test_interface_config_is_an_unmanaged_tap(self):
        vif = _vif('br-a')
        conf = libvirt_vif.NoopVIFDriver(_settings()).get_config(None, vif)
        self.assertEqual(('ethernet', vif.devname, False, vif.address),
                         (conf.net_type, conf.target_dev, conf.managed,
                          conf.mac_address))


@unittest.skipUnless(os.geteuid() == 0 and shutil.which('ip'),
                     'needs root and iproute2')
class TestLinuxBridge(base.TestCase):
    """Real devices in this host's network namespace, removed after."""

    def setUp(self):
        super().setUp()
        self.driver = libvirt_vif.LinuxBridgeVIFDriver(_settings())
        self.addCleanup(self.driver.close)

    def make_bridge(self):
        name = 'nvt' + uuidutils.generate_uuid()[:8]
        processutils.execute('ip', 'link', 'add', name, 'type', 'bridge')
        self.addCleanup(processutils.execute, 'ip', 'link', 'delete', name)
        return name

    def test_plug_fails_naming_a_missing_bridge_and_makes_nothing(self):
        vif = _vif('nvt-missing')
        with self.assertRaises(exception.VirtualInterfacePlugException) as e:
            self.driver.plug(INSTANCE, vif)
        self.assertIn('nvt-missing', str(e.exception))
        self.assertFalse(libvirt_vif.device_exists(vif.devname))

    def test_plug_makes_a_tap_on_the_bridge_and_unplug_removes_it(self):
        bridge = self.make_bridge()
        vif = _vif(bridge)
        self.addCleanup(self.driver.unplug, INSTANCE, vif)
        self.driver.plug(INSTANCE, vif)
        self.driver.plug(INSTANCE, vif)  # again: one tap, same bridge
        master = os.readlink(os.path.join(libvirt_vif.SYS_CLASS_NET,
                                          vif.devname, 'master'))
        self.assertEqual(bridge, os.path.basename(master))
        self.assertIn(vif.id, self.driver.plugged_vif_ids())
        self.assertEqual({vif.id},
                         self.driver.plugged_vif_ids(INSTANCE.uuid))
        self.assertEqual({vif.id}, self.driver.plugged_vifs_by_instance()[
            INSTANCE.uuid])
        self.driver.unplug(INSTANCE, vif)
        self.assertFalse(libvirt_vif.device_exists(vif.devname))
        self.assertNotIn(vif.id, self.driver.plugged_vif_ids())
        self.driver.unplug(INSTANCE, vif)

    def test_a_plugged_tap_is_up_and_names_its_port(self):
        bridge = self.make_bridge()
        vif = _vif(bridge)
        self.addCleanup(self.driver.unplug, INSTANCE, vif)
        self.driver.plug(INSTANCE, vif)
        sysfs = os.path.join(libvirt_vif.SYS_CLASS_NET, vif.devname)
        with open(os.path.join(sysfs, 'flags')) as f:
            self.assertTrue(int(f.read(), 16) & IFF_UP)
        with open(os.path.join(sysfs, 'ifalias')) as f:
            self.assertEqual('nova:%s:%s' % (INSTANCE.uuid, vif.id),
                             f.read().strip())
        # A tap, as libvirt's <interface type='ethernet'> expects.
        self.assertTrue(os.path.exists(os.path.join(sysfs, 'tun_flags')))

    def test_a_tap_it_made_is_removed_when_the_plug_fails(self):
        bridge = self.make_bridge()
        vif = _vif(bridge)
        self.addCleanup(self.driver.unplug, INSTANCE, vif)
        # The kernel refuses an alias longer than 255 bytes: the tap was
        # made, then the plug failed.
        too_long = _Instance('x' * 300)
        with self.assertRaises(exception.VirtualInterfacePlugException) as e:
            self.driver.plug(too_long, vif)
        self.assertIn(bridge, str(e.exception))
        self.assertFalse(libvirt_vif.device_exists(vif.devname))

    def test_plugs_and_unplugs_share_one_netlink_socket(self):
        import pyroute2
        bridge = self.make_bridge()
        vifs = [_vif(bridge), _vif(bridge)]
        with mock.patch.object(pyroute2, 'IPRoute',
                               wraps=pyroute2.IPRoute) as opened:
            driver = libvirt_vif.LinuxBridgeVIFDriver(_settings())
            self.addCleanup(driver.close)
            for vif in vifs:
                self.addCleanup(driver.unplug, INSTANCE, vif)
                driver.plug(INSTANCE, vif)
            # Refused by the kernel (no such bridge): the socket stays.
            self.assertRaises(exception.VirtualInterfacePlugException,
                              driver.plug, INSTANCE, _vif('nvt-missing'))
            for vif in vifs:
                driver.unplug(INSTANCE, vif)
        self.assertEqual(1, opened.call_count)
        self.assertEqual(set(), driver.plugged_vif_ids(INSTANCE.uuid))
        self.assertFalse(any(libvirt_vif.device_exists(v.devname)
                             for v in vifs))

    def test_a_socket_that_broke_is_replaced_and_the_plug_made(self):
        bridge = self.make_bridge()
        vif = _vif(bridge)
        self.addCleanup(self.driver.unplug, INSTANCE, vif)
        self.driver.plug(INSTANCE, vif)
        self.driver.unplug(INSTANCE, vif)
        # The kept socket breaks (closed under the driver): the plug is
        # made on a new one.
        self.driver._netlink.call(lambda ipr: ipr.close())
        self.driver.plug(INSTANCE, vif)
        self.assertEqual({vif.id},
                         self.driver.plugged_vif_ids(INSTANCE.uuid))
        self.driver._netlink.call(lambda ipr: ipr.close())
        self.driver.unplug(INSTANCE, vif)
        self.assertFalse(libvirt_vif.device_exists(vif.devname))

    def test_a_device_it_did_not_make_is_kept_when_the_plug_fails(self):
        bridge = self.make_bridge()
        vif = _vif(bridge)
        # Something else holds the tap's name: a bridge, which cannot be
        # made a port of another bridge.
        processutils.execute('ip', 'link', 'add', vif.devname, 'type',
                             'bridge')
        self.addCleanup(processutils.execute, 'ip', 'link', 'delete',
                        vif.devname)
        with self.assertRaises(exception.VirtualInterfacePlugException):
            self.driver.plug(INSTANCE, vif)
        self.assertTrue(libvirt_vif.bridge_exists(vif.devname))
