"""``<interface>``: one network interface of the guest.

``type='ethernet'`` with ``<target dev=... managed='no'/>`` means the tap
device already exists (the VIF driver made it) and libvirt must neither
create nor delete it; ``type='bridge'`` lets libvirt make the tap itself.
"""

import dataclasses
from xml.etree import ElementTree as ET

from nova.virt.libvirt.config import base


@dataclasses.dataclass
class Interface(base.ConfigObject):
    root_name = 'interface'

    mac_address: str = ''
    target_dev: str | None = None
    net_type: str = 'ethernet'
    model: str | None = 'virtio'
    source_bridge: str | None = None
    managed: bool | None = False
    mtu: int | None = None

    def format_dom(self) -> ET.Element:
        root = ET.Element(self.root_name, type=self.net_type)
        base.sub(root, 'mac', address=self.mac_address)
        if self.source_bridge:
            base.sub(root, 'source', bridge=self.source_bridge)
        if self.target_dev:
            managed = None
            if self.managed is not None:
                managed = 'yes' if self.managed else 'no'
            base.sub(root, 'target', dev=self.target_dev, managed=managed)
        if self.model:
            base.sub(root, 'model', type=self.model)
        if self.mtu:
            base.sub(root, 'mtu', size=self.mtu)
        return root

    @classmethod
    def parse_dom(cls, element: ET.Element) -> 'Interface':
        mac = element.find('mac')
        source = element.find('source')
        target = element.find('target')
        model = element.find('model')
        mtu = element.find('mtu')
        managed = target.get('managed') if target is not None else None
        return cls(
            net_type=element.get('type', 'ethernet'),
            mac_address=mac.get('address', '') if mac is not None else '',
            source_bridge=source.get('bridge') if source is not None
            else None,
            target_dev=target.get('dev') if target is not None else None,
            managed=None if managed is None else managed == 'yes',
            model=model.get('type') if model is not None else None,
            mtu=int(mtu.get('size', '')) if mtu is not None else None)
