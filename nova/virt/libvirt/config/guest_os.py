"""``<os>``: how the guest boots (from a disk, or a kernel and initrd)."""

import dataclasses
from xml.etree import ElementTree as ET

from nova.virt.libvirt.config import base


@dataclasses.dataclass
class GuestOS(base.ConfigObject):
    root_name = 'os'

    os_type: str = 'hvm'
    arch: str | None = None
    machine: str | None = None
    kernel: str | None = None
    initrd: str | None = None
    cmdline: str | None = None
    boot_devs: list[str] = dataclasses.field(default_factory=list)

    def format_dom(self) -> ET.Element:
        root = ET.Element(self.root_name)
        base.sub(root, 'type', self.os_type, arch=self.arch,
                 machine=self.machine)
        if self.kernel:
            base.sub(root, 'kernel', self.kernel)
        if self.initrd:
            base.sub(root, 'initrd', self.initrd)
        if self.cmdline:
            base.sub(root, 'cmdline', self.cmdline)
        for dev in self.boot_devs:
            base.sub(root, 'boot', dev=dev)
        return root

    @classmethod
    def parse_dom(cls, element: ET.Element) -> 'GuestOS':
        type_el = element.find('type')
        return cls(
            os_type=(type_el.text or '').strip() or 'hvm'
            if type_el is not None else 'hvm',
            arch=type_el.get('arch') if type_el is not None else None,
            machine=type_el.get('machine') if type_el is not None else None,
            kernel=base.text_of(element, 'kernel'),
            initrd=base.text_of(element, 'initrd'),
            cmdline=base.text_of(element, 'cmdline'),
            boot_devs=[b.get('dev', '') for b in element.findall('boot')])
