"""``<serial>``: the guest's first serial port, written to a file.

With ``append`` the file keeps what earlier boots wrote (``console.log``
survives a reboot). libvirt adds the matching ``<console>`` itself.
"""

import dataclasses
from xml.etree import ElementTree as ET

from nova.virt.libvirt.config import base


@dataclasses.dataclass
class Serial(base.ConfigObject):
    root_name = 'serial'

    source_path: str = ''
    port: int = 0
    append: bool = True
    char_type: str = 'file'

    def format_dom(self) -> ET.Element:
        root = ET.Element(self.root_name, type=self.char_type)
        base.sub(root, 'source', path=self.source_path,
                 append='on' if self.append else None)
        base.sub(root, 'target', port=self.port)
        return root

    @classmethod
    def parse_dom(cls, element: ET.Element) -> 'Serial':
        source = element.find('source')
        target = element.find('target')
        return cls(
            char_type=element.get('type', 'file'),
            source_path=source.get('path', '') if source is not None else '',
            append=(source is not None and source.get('append') == 'on'),
            port=int(target.get('port', 0)) if target is not None else 0)
