"""Which domain an instance gets (policy); config/ only writes the XML.

The domain is named ``instance-<uuid>``: unique on a host and across
hosts without a database id, and readable in ``virsh list``. Its libvirt
UUID is the instance UUID, which is how every lookup finds it.

Every guest gets: ``<features><acpi/><apic/>`` (clean shutdown, hot-plug on
``pc``), its disks on virtio, one ethernet interface per VIF as the VIF
driver describes it, and its first serial port written to ``console.log``.
No ``<graphics>``. Images with a kernel boot it directly with ``<kernel>``,
``<initrd>`` and a command line; others boot from the first disk.

Example::

    domain = build_domain(instance, 'qemu', 'x86_64', disks, interfaces,
                          console_path=idir.file('console.log'))
    xml = domain.to_xml()
"""

import dataclasses

from nova import exception
from nova.virt.libvirt import blockinfo
from nova.virt.libvirt import config

DOMAIN_NAME_PREFIX = 'instance-'
# What a cirros-*-uec style image needs to find its root and its console.
DEFAULT_CMDLINE = 'root=/dev/vda console=tty0 console=ttyS0'
VIRT_TYPES = ('kvm', 'qemu')


def domain_name(instance_uuid: str) -> str:
    return DOMAIN_NAME_PREFIX + instance_uuid


@dataclasses.dataclass(frozen=True)
class GuestDisk:
    """A disk file of the instance and where the guest sees it."""
    spec: blockinfo.DiskSpec
    path: str
    format: str


@dataclasses.dataclass(frozen=True)
class KernelBoot:
    kernel: str
    ramdisk: str | None = None
    cmdline: str = DEFAULT_CMDLINE


def build_domain(instance, virt_type: str, arch: str | None,
                 disks: list[GuestDisk], interfaces: list[config.Interface],
                 console_path: str,
                 kernel_boot: KernelBoot | None = None) -> config.Domain:
    flavor = instance.flavor
    if virt_type not in VIRT_TYPES:
        raise exception.InvalidConfiguration(
            reason='virt_type %r is not one of %s'
                   % (virt_type, ', '.join(VIRT_TYPES)))
    if flavor.memory_mb <= 0 or flavor.vcpus <= 0:
        raise exception.InvalidInput(
            reason='flavor %s needs memory and vCPUs' % flavor.flavorid)
    if not disks:
        raise exception.InvalidInput(reason='an instance needs a disk')
    if kernel_boot is not None:
        guest_os = config.GuestOS(arch=arch, kernel=kernel_boot.kernel,
                                  initrd=kernel_boot.ramdisk,
                                  cmdline=kernel_boot.cmdline)
    else:
        guest_os = config.GuestOS(arch=arch, boot_devs=['hd'])
    devices: list[config.ConfigObject] = [
        config.Disk(source_path=d.path, target_dev=d.spec.target_dev,
                    target_bus=d.spec.bus, driver_format=d.format)
        for d in disks]
    devices.extend(interfaces)
    devices.append(config.Serial(source_path=console_path))
    return config.Domain(virt_type=virt_type,
                         name=domain_name(instance.uuid),
                         uuid=instance.uuid,
                         memory_kib=flavor.memory_mb * 1024,
                         vcpus=flavor.vcpus,
                         os=guest_os,
                         features=config.Features(acpi=True, apic=True),
                         devices=devices)
