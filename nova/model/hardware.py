"""Typed values the virt drivers return to the compute manager."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class InstanceInfo:
    """What the hypervisor says about one guest."""
    state: int
    internal_id: str | None = None


@dataclasses.dataclass(frozen=True)
class HostResources:
    """Capacity of one compute node, for target choice and the API."""
    hypervisor_hostname: str
    vcpus: int
    memory_mb: int
    local_gb: int
    vcpus_used: int = 0
    memory_mb_used: int = 0
    local_gb_used: int = 0
    hypervisor_type: str = ''
