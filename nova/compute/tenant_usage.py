"""What each project's servers used over a period, from the instance
rows (``GET /os-simple-tenant-usage``).

A server counts from ``launched_at`` (it became active) to
``terminated_at`` (it was deleted; deleted rows are soft-deleted and stay,
so a deleted server still counts for the time it lived), clipped to the
period; one that never launched counts nothing. Usage is the flavor's
size times those hours.

Example::

    for usage in tenant_usage.by_project(ctx, start, stop):
        print(usage.project_id, usage.total_hours)
"""

import dataclasses
import datetime

from nova import objects
from nova.objects import base as obj_base

_HOUR = 3600.0


@dataclasses.dataclass(frozen=True)
class ServerUsage:
    instance_id: str
    project_id: str
    name: str
    flavor: str
    vcpus: int
    memory_mb: int
    local_gb: int
    started_at: datetime.datetime
    ended_at: datetime.datetime | None
    # The vm_state, or "terminated" once deleted.
    state: str
    hours: float
    # Seconds from launch to termination, or to now while it lives.
    uptime: int


@dataclasses.dataclass(frozen=True)
class TenantUsage:
    project_id: str
    servers: tuple[ServerUsage, ...]

    @property
    def total_hours(self) -> float:
        return sum(s.hours for s in self.servers)

    @property
    def total_vcpus_usage(self) -> float:
        return sum(s.vcpus * s.hours for s in self.servers)

    @property
    def total_memory_mb_usage(self) -> float:
        return sum(s.memory_mb * s.hours for s in self.servers)

    @property
    def total_local_gb_usage(self) -> float:
        return sum(s.local_gb * s.hours for s in self.servers)


def _naive(value: datetime.datetime) -> datetime.datetime:
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def _server_usage(instance, start, stop, now) -> ServerUsage | None:
    if instance.launched_at is None:
        return None
    launched = _naive(instance.launched_at)
    ended = (None if instance.terminated_at is None
             else _naive(instance.terminated_at))
    if launched >= stop or (ended is not None and ended <= start):
        return None
    seconds = (min(ended or stop, stop) - max(launched, start)
               ).total_seconds()
    lived = (ended or now) - launched
    flavor = instance.flavor
    return ServerUsage(
        instance_id=instance.uuid, project_id=instance.project_id or '',
        name=instance.display_name or '',
        flavor=flavor.name if flavor is not None else '',
        vcpus=flavor.vcpus if flavor is not None else 0,
        memory_mb=flavor.memory_mb if flavor is not None else 0,
        local_gb=(flavor.root_gb + (flavor.ephemeral_gb or 0)
                  if flavor is not None else 0),
        started_at=launched, ended_at=ended,
        state='terminated' if ended is not None else instance.vm_state,
        hours=max(seconds, 0.0) / _HOUR,
        uptime=int(lived.total_seconds()))


def by_project(context, start: datetime.datetime, stop: datetime.datetime,
               project_id: str | None = None) -> list[TenantUsage]:
    """The usage of each project with a server alive in [start, stop)
    (of ``project_id`` only, when given), by project id; each project's
    servers in the order they were created."""
    start, stop = _naive(start), _naive(stop)
    now = _naive(obj_base.utcnow())
    servers: dict[str, list[ServerUsage]] = {}
    for instance in objects.Instance.get_all(context, include_deleted=True):
        if project_id is not None and instance.project_id != project_id:
            continue
        usage = _server_usage(instance, start, stop, now)
        if usage is not None:
            servers.setdefault(usage.project_id, []).append(usage)
    return [TenantUsage(project_id=p, servers=tuple(servers[p]))
            for p in sorted(servers)]
