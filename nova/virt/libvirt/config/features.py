"""``<features>``: ACPI (clean shutdown, hot-plug on ``pc``) and APIC."""

import dataclasses
from xml.etree import ElementTree as ET

from nova.virt.libvirt.config import base


@dataclasses.dataclass
class Features(base.ConfigObject):
    root_name = 'features'

    acpi: bool = True
    apic: bool = True

    def format_dom(self) -> ET.Element:
        root = ET.Element(self.root_name)
        if self.acpi:
            base.sub(root, 'acpi')
        if self.apic:
            base.sub(root, 'apic')
        return root

    @classmethod
    def parse_dom(cls, element: ET.Element) -> 'Features':
        return cls(acpi=element.find('acpi') is not None,
                   apic=element.find('apic') is not None)
