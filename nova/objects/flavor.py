"""Flavors: the size of an instance.

A flavor is a plain dataclass; an instance keeps a copy of the one it was
built with (``instance.flavor``, extra specs included), so later changes
to the flavors table (a new description, other extra specs, the flavor's
deletion) do not change existing instances.

This module is the value only: nova-compute, which gets its instances'
flavors with the instances, imports it and neither the flavors table nor
its queries. Those are ``nova.objects.flavor_catalog``'s (create, look
up, list, delete), with ``flavor_access`` and ``flavor_extra_specs``.
"""

import dataclasses

from nova.objects import base


@base.register
@dataclasses.dataclass
class Flavor:
    flavorid: str
    name: str
    memory_mb: int
    vcpus: int
    root_gb: int
    ephemeral_gb: int = 0
    swap: int = 0
    rxtx_factor: float = 1.0
    is_public: bool = True
    description: str | None = None
    extra_specs: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def disk_gb(self) -> int:
        """The disk the flavor takes on a host: root, ephemeral and swap
        (MiB, rounded up to a GiB)."""
        swap_gb = -(-int(self.swap or 0) // 1024)
        return self.root_gb + (self.ephemeral_gb or 0) + swap_gb

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> 'Flavor':
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})
