"""``<disk>``: one file-backed disk of the guest."""

import dataclasses
from xml.etree import ElementTree as ET

from nova.virt.libvirt.config import base


@dataclasses.dataclass
class Disk(base.ConfigObject):
    root_name = 'disk'

    source_path: str = ''
    target_dev: str = ''
    target_bus: str = 'virtio'
    driver_format: str = 'qcow2'
    driver_name: str = 'qemu'
    driver_cache: str | None = None
    source_type: str = 'file'
    device: str = 'disk'
    readonly: bool = False

    def format_dom(self) -> ET.Element:
        root = ET.Element(self.root_name, type=self.source_type,
                          device=self.device)
        base.sub(root, 'driver', name=self.driver_name,
                 type=self.driver_format, cache=self.driver_cache)
        base.sub(root, 'source', file=self.source_path)
        base.sub(root, 'target', dev=self.target_dev, bus=self.target_bus)
        if self.readonly:
            base.sub(root, 'readonly')
        return root

    @classmethod
    def parse_dom(cls, element: ET.Element) -> 'Disk':
        driver = element.find('driver')
        source = element.find('source')
        target = element.find('target')
        return cls(
            source_type=element.get('type', 'file'),
            device=element.get('device', 'disk'),
            driver_name=driver.get('name', 'qemu') if driver is not None
            else 'qemu',
            driver_format=driver.get('type', 'raw') if driver is not None
            else 'raw',
            driver_cache=driver.get('cache') if driver is not None else None,
            source_path=source.get('file', '') if source is not None else '',
            target_dev=target.get('dev', '') if target is not None else '',
            target_bus=target.get('bus', 'virtio') if target is not None
            else 'virtio',
            readonly=element.find('readonly') is not None)
