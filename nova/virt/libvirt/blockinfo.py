"""Which disks an instance gets, and where the guest sees them (policy).

Example::

    [d.name for d in disks_for(flavor)]
    # ['disk', 'disk.eph0', 'disk.swap'] for a flavor with all three
"""

import dataclasses

from nova.virt import instancedir

GiB = 1024 ** 3
MiB = 1024 ** 2

ROOT = 'root'
EPHEMERAL = 'ephemeral'
SWAP = 'swap'

_TARGETS = ('vda', 'vdb', 'vdc', 'vdd')


@dataclasses.dataclass(frozen=True)
class DiskSpec:
    name: str              # file name in the instance directory
    kind: str              # ROOT, EPHEMERAL or SWAP
    size: int | None       # bytes; None: as large as the image
    target_dev: str
    bus: str = 'virtio'


def disks_for(flavor) -> list[DiskSpec]:
    """The disks of an instance of ``flavor``, in guest order."""
    wanted = [(instancedir.DISK, ROOT,
               flavor.root_gb * GiB if flavor.root_gb else None)]
    if flavor.ephemeral_gb:
        wanted.append((instancedir.EPHEMERAL0, EPHEMERAL,
                       flavor.ephemeral_gb * GiB))
    if flavor.swap:
        wanted.append((instancedir.SWAP, SWAP, flavor.swap * MiB))
    return [DiskSpec(name, kind, size, target)
            for (name, kind, size), target in zip(wanted, _TARGETS)]
