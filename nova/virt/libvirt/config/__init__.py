"""Domain XML, one small module per element.

These objects only convert to and from libvirt's XML; they hold no policy.
Which devices an instance gets is decided in ``nova.virt.libvirt.designer``
and ``blockinfo``.

Example::

    domain = Domain(virt_type='qemu', name='instance-...', uuid='...',
                    memory_kib=65536, vcpus=1, os=GuestOS(),
                    devices=[Disk(source_path='/i/u/disk', target_dev='vda',
                                  driver_format='qcow2')])
    xml = domain.to_xml()
    same = Domain.from_xml(xml)
"""

from nova.virt.libvirt.config.base import ConfigObject  # noqa: F401
from nova.virt.libvirt.config.disk import Disk  # noqa: F401
from nova.virt.libvirt.config.domain import Domain  # noqa: F401
from nova.virt.libvirt.config.features import Features  # noqa: F401
from nova.virt.libvirt.config.guest_os import GuestOS  # noqa: F401
from nova.virt.libvirt.config.interface import Interface  # noqa: F401
from nova.virt.libvirt.config.serial import Serial  # noqa: F401
