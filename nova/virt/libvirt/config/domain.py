"""``<domain>``: the whole guest definition."""

import dataclasses
from xml.etree import ElementTree as ET

from nova.virt.libvirt.config import base
from nova.virt.libvirt.config import disk
from nova.virt.libvirt.config import features as features_mod
from nova.virt.libvirt.config import guest_os
from nova.virt.libvirt.config import interface
from nova.virt.libvirt.config import serial

# Device elements we know how to read back, by tag.
DEVICE_TYPES = {cls.root_name: cls
                for cls in (disk.Disk, interface.Interface, serial.Serial)}


@dataclasses.dataclass
class Domain(base.ConfigObject):
    root_name = 'domain'

    virt_type: str = 'kvm'
    name: str = ''
    uuid: str = ''
    memory_kib: int = 0
    vcpus: int = 1
    os: guest_os.GuestOS = dataclasses.field(default_factory=guest_os.GuestOS)
    features: features_mod.Features = dataclasses.field(
        default_factory=features_mod.Features)
    devices: list = dataclasses.field(default_factory=list)
    clock_offset: str = 'utc'
    on_poweroff: str = 'destroy'
    on_reboot: str = 'restart'
    on_crash: str = 'destroy'

    def devices_of(self, cls) -> list:
        return [d for d in self.devices if isinstance(d, cls)]

    def format_dom(self) -> ET.Element:
        root = ET.Element(self.root_name, type=self.virt_type)
        base.sub(root, 'name', self.name)
        base.sub(root, 'uuid', self.uuid)
        base.sub(root, 'memory', self.memory_kib, unit='KiB')
        base.sub(root, 'vcpu', self.vcpus)
        root.append(self.os.format_dom())
        root.append(self.features.format_dom())
        base.sub(root, 'clock', offset=self.clock_offset)
        base.sub(root, 'on_poweroff', self.on_poweroff)
        base.sub(root, 'on_reboot', self.on_reboot)
        base.sub(root, 'on_crash', self.on_crash)
        devices = base.sub(root, 'devices')
        for device in self.devices:
            devices.append(device.format_dom())
        return root

    @classmethod
    def parse_dom(cls, element: ET.Element) -> 'Domain':
        memory = element.find('memory')
        memory_kib = int(memory.text or 0) if memory is not None else 0
        if memory is not None and memory.get('unit', 'KiB') != 'KiB':
            raise ValueError('memory unit %s not supported'
                             % memory.get('unit'))
        os_el = element.find('os')
        features_el = element.find('features')
        clock = element.find('clock')
        devices = []
        devices_el = element.find('devices')
        for child in (devices_el if devices_el is not None else ()):
            device_cls = DEVICE_TYPES.get(child.tag)
            if device_cls is not None:
                devices.append(device_cls.parse_dom(child))
        return cls(
            virt_type=element.get('type', 'kvm'),
            name=base.text_of(element, 'name', ''),
            uuid=base.text_of(element, 'uuid', ''),
            memory_kib=memory_kib,
            vcpus=int(base.text_of(element, 'vcpu', '1')),
            os=(guest_os.GuestOS.parse_dom(os_el) if os_el is not None
                else guest_os.GuestOS()),
            features=(features_mod.Features.parse_dom(features_el)
                      if features_el is not None
                      else features_mod.Features(acpi=False, apic=False)),
            devices=devices,
            clock_offset=clock.get('offset', 'utc') if clock is not None
            else 'utc',
            on_poweroff=base.text_of(element, 'on_poweroff', 'destroy'),
            on_reboot=base.text_of(element, 'on_reboot', 'restart'),
            on_crash=base.text_of(element, 'on_crash', 'destroy'))
