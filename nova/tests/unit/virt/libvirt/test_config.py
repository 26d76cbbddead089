"""Element objects: each writes its XML and reads it back unchanged."""

from nova.tests import base
from nova.virt.libvirt import config


class TestElements(base.TestCase):

    def roundtrip(self, obj):
        xml = obj.to_xml()
        self.assertEqual(obj, type(obj).from_xml(xml))
        return xml

    def test_disk(self):
        xml = self.roundtrip(config.Disk(source_path='/i/u/disk',
                                         target_dev='vda',
                                         driver_format='raw'))
        self.assertEqual(
            '<disk type="file" device="disk">\n'
            '  <driver name="qemu" type="raw" />\n'
            '  <source file="/i/u/disk" />\n'
            '  <target dev="vda" bus="virtio" />\n'
            '</disk>\n', xml)

    def test_interface_ethernet_with_unmanaged_tap(self):
        xml = self.roundtrip(config.Interface(mac_address='fa:16:3e:0:0:1',
                                              target_dev='tap1'))
        self.assertIn('<target dev="tap1" managed="no" />', xml)
        self.assertIn('type="ethernet"', xml)

    def test_interface_bridge_with_mtu(self):
        xml = self.roundtrip(config.Interface(
            net_type='bridge', mac_address='fa:16:3e:0:0:2',
            source_bridge='br0', managed=None, mtu=1450))
        self.assertIn('<source bridge="br0" />', xml)
        self.assertIn('<mtu size="1450" />', xml)

    def test_serial_file_appends(self):
        xml = self.roundtrip(config.Serial(source_path='/i/u/console.log'))
        self.assertIn('append="on"', xml)

    def test_os_kernel_and_disk_boot(self):
        kernel = self.roundtrip(config.GuestOS(
            arch='x86_64', kernel='/k', initrd='/r', cmdline='root=/dev/vda'))
        self.assertNotIn('<boot', kernel)
        disk = self.roundtrip(config.GuestOS(boot_devs=['hd']))
        self.assertIn('<boot dev="hd" />', disk)

    def test_features(self):
        self.assertEqual('<features>\n  <acpi />\n</features>\n',
                         self.roundtrip(config.Features(apic=False)))

    def test_domain_reads_back_what_libvirt_adds_around_it(self):
        # libvirt's own XMLDesc has elements we do not model; they are
        # skipped, the ones we model are read.
        xml = ("<domain type='qemu'><name>n</name><uuid>u</uuid>"
               "<memory unit='KiB'>65536</memory>"
               "<currentMemory unit='KiB'>65536</currentMemory>"
               "<vcpu placement='static'>1</vcpu>"
               "<os><type arch='x86_64'>hvm</type><boot dev='hd'/></os>"
               "<devices><emulator>/usr/bin/qemu</emulator>"
               "<disk type='file' device='disk'><driver name='qemu' "
               "type='qcow2'/><source file='/d'/><target dev='vda' "
               "bus='virtio'/></disk></devices></domain>")
        domain = config.Domain.from_xml(xml)
        self.assertEqual((65536, 1, ['/d']),
                         (domain.memory_kib, domain.vcpus,
                          [d.source_path for d in
                           domain.devices_of(config.Disk)]))
        self.assertFalse(domain.features.acpi)

    def test_from_xml_refuses_another_element(self):
        self.assertRaises(ValueError, config.Disk.from_xml, '<serial/>')
