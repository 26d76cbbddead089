"""Domain XML an instance gets: golden files, and libvirt accepts each."""

from nova import context as nova_context
from nova import exception
from nova import objects
from nova.tests import base
from nova.tests.fixtures import libvirt_host as fixtures
from nova.tests.unit.virt.libvirt import golden
from nova.virt.libvirt import blockinfo
from nova.virt.libvirt import config
from nova.virt.libvirt import designer
from nova.virt.libvirt import vif as libvirt_vif

UUID = '4f6f0a2e-3c1b-4d3e-9a7c-2b1d0e5f6a70'
INSTANCES = '/srv/nova/instances'


def _instance(**flavor):
    values = dict(flavorid='1', name='m1', memory_mb=64, vcpus=1, root_gb=1)
    values.update(flavor)
    return objects.Instance(nova_context.get_admin_context(), uuid=UUID,
                            flavor=objects.Flavor(**values))


def _disks(instance, fmt='qcow2'):
    return [designer.GuestDisk(spec, '%s/%s/%s' % (INSTANCES, UUID,
                                                   spec.name), fmt)
            for spec in blockinfo.disks_for(instance.flavor)]


class TestDesigner(base.TestCase):

    def setUp(self):
        super().setUp()
        self.host = fixtures.make_host(self.tmp, 'designer')
        self.addCleanup(self.host.close)
        self.vif_driver = libvirt_vif.NoopVIFDriver(self.host.settings)

    def _interfaces(self, instance, count):
        return [self.vif_driver.get_config(instance, vif)
                for vif in fixtures.make_network_info(count=count)]

    def _check(self, name, domain):
        xml = domain.to_xml()
        golden.assert_golden(self, name, xml)
        # libvirt validates it against its schema, and reads it back.
        guest = self.host.driver.host.define_guest(xml)
        self.assertEqual(UUID, guest.uuid)
        self.assertEqual('instance-' + UUID, guest.name)
        self.addCleanup(guest.undefine)
        # What we wrote reads back into the same objects.
        self.assertEqual(domain, config.Domain.from_xml(xml))
        return xml

    def test_qcow2_disk_boot_with_one_vif(self):
        instance = _instance()
        domain = designer.build_domain(
            instance, 'qemu', 'x86_64', _disks(instance),
            self._interfaces(instance, 1),
            console_path='%s/%s/console.log' % (INSTANCES, UUID))
        xml = self._check('qcow2_one_vif', domain)
        self.assertNotIn('<graphics', xml)
        self.assertIn('<acpi />', xml)

    def test_kernel_boot_with_ephemeral_swap_and_two_vifs(self):
        instance = _instance(memory_mb=128, vcpus=2, ephemeral_gb=1,
                             swap=64)
        kernel_boot = designer.KernelBoot(
            kernel='%s/%s/kernel' % (INSTANCES, UUID),
            ramdisk='%s/%s/ramdisk' % (INSTANCES, UUID))
        domain = designer.build_domain(
            instance, 'kvm', 'x86_64', _disks(instance),
            self._interfaces(instance, 2),
            console_path='%s/%s/console.log' % (INSTANCES, UUID),
            kernel_boot=kernel_boot)
        xml = self._check('kernel_eph_swap_two_vifs', domain)
        self.assertIn("<domain type=\"kvm\">", xml)

    def test_raw_disk_no_network(self):
        instance = _instance(root_gb=0)
        domain = designer.build_domain(
            instance, 'qemu', 'x86_64', _disks(instance, 'raw'), [],
            console_path='%s/%s/console.log' % (INSTANCES, UUID))
        self._check('raw_no_network', domain)

    def test_refuses_flavor_without_memory_and_unknown_virt_type(self):
        instance = _instance(memory_mb=0)
        self.assertRaises(exception.InvalidInput, designer.build_domain,
                          instance, 'qemu', 'x86_64', _disks(instance), [],
                          console_path='/c')
        instance = _instance()
        self.assertRaises(exception.InvalidConfiguration,
                          designer.build_domain, instance, 'xen', 'x86_64',
                          _disks(instance), [], console_path='/c')
