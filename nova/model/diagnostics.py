"""What a driver reads about one running guest (``GET
/servers/{id}/diagnostics``), in the Compute API's standard format
(microversion 2.48).

A figure the hypervisor does not give is None, never a guess.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class CpuDetails:
    id: int | None = None
    # Nanoseconds of host CPU time the vCPU used.
    time: int | None = None
    # Percent; None when the driver does not sample it.
    utilisation: int | None = None


@dataclasses.dataclass(frozen=True)
class NicDetails:
    mac_address: str | None = None
    rx_octets: int | None = None
    rx_errors: int | None = None
    rx_drop: int | None = None
    rx_packets: int | None = None
    rx_rate: int | None = None
    tx_octets: int | None = None
    tx_errors: int | None = None
    tx_drop: int | None = None
    tx_packets: int | None = None
    tx_rate: int | None = None


@dataclasses.dataclass(frozen=True)
class DiskDetails:
    read_bytes: int | None = None
    read_requests: int | None = None
    write_bytes: int | None = None
    write_requests: int | None = None
    errors_count: int | None = None


@dataclasses.dataclass(frozen=True)
class Diagnostics:
    # A power state name of the reference: running, paused, shutdown...
    state: str
    driver: str
    hypervisor: str | None = None
    hypervisor_os: str | None = None
    uptime: int | None = None
    config_drive: bool = False
    # MiB.
    memory_maximum: int | None = None
    memory_used: int | None = None
    cpu_details: tuple[CpuDetails, ...] = ()
    nic_details: tuple[NicDetails, ...] = ()
    disk_details: tuple[DiskDetails, ...] = ()
