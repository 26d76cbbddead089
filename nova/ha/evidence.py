"""What the monitor knows of one compute host, read at one check.

From the database: the compute service's row (its last heartbeat,
``forced_down``), the disk leases every compute service reports (the same
reading ``GET /os-disk-leases`` gives, ``nova.compute.disk_leases``) and
the host's newest recovery. From libvirtd, where a probe reaches it:
whether anything still runs there (``GuestProbe``; the default one reaches
nothing and answers None).
"""

from typing import Callable

from nova.compute import disk_leases
from nova.ha import decision
from nova import objects
from nova.objects import base as obj_base
from nova.objects import ha_recovery
from nova.objects import host_evacuation as run_obj

# host -> whether its libvirtd reports running guests; None: unreachable.
GuestProbe = Callable[[str], 'bool | None']


def no_probe(host: str) -> bool | None:
    """Reaches no libvirtd: the decision goes by the heartbeat alone."""
    return None


def disk_lease_report(service, services) -> decision.DiskLeaseReport:
    status = disk_leases.status_of(service, services)
    return decision.DiskLeaseReport(
        shared_storage=bool(disk_leases.sharing_peers(service, services)),
        leases_working=(disk_leases.protected(status.disk_leases)
                        and not status.unprotected_sharing),
        summary=status.summary)


def _lease_guarded(context, recovery: ha_recovery.HaHostRecovery) -> bool:
    """Whether ``recovery`` evacuated an unfenced host to the hosts
    sharing its storage (``nova.ha.recovery``: its run asked for shared
    storage)."""
    if (recovery.fenced or recovery.step != ha_recovery.STARTED
            or not recovery.evacuation_uuid):
        return False
    run = run_obj.HostEvacuation.get_by_uuid(context,
                                             recovery.evacuation_uuid)
    return bool(run.on_shared_storage)


def _left_behind(context, host: str) -> int:
    """Instances still on ``host`` once no host-evacuate run of it is
    under way (0 while one is: what it leaves is not known yet)."""
    if run_obj.HostEvacuation.get_unended(context, host):
        return 0
    return len(objects.Instance.get_by_host(context, host))


def prior_recovery(context, recovery: ha_recovery.HaHostRecovery | None,
                   service, now, looks_down: bool = True
                   ) -> decision.PriorRecovery | None:
    """What the decision needs of the host's newest recovery. Whether it
    left instances behind under the leases is read only for a host that
    looks down and did not come back (the only case that asks)."""
    if recovery is None:
        return None
    began = recovery.created_at
    back = (service.last_seen_up is not None and began is not None
            and service.last_seen_up > began and not service.forced_down)
    age = (now - began).total_seconds() if began is not None else 0.0
    guarded = (looks_down and not back
               and _lease_guarded(context, recovery))
    return decision.PriorRecovery(
        ended=recovery.ended, age=age, host_back_since=back,
        lease_guarded=guarded,
        left_behind=_left_behind(context, service.host) if guarded else 0)


def gather(context, service, services, *, service_down_time: float,
           flap_window: float, fence_agent: bool,
           lease_retry_interval: float = 60.0,
           probe: GuestProbe = no_probe) -> decision.HostEvidence:
    """The evidence about ``service``'s host; ``services``: every compute
    service (to find who shares its storage)."""
    now = obj_base.utcnow()
    # A service registers (its row) in its init_host, before its first
    # heartbeat: until then the time since it registered counts, so a
    # host that is starting is not taken for one that failed.
    seen = service.last_seen_up or service.created_at
    heartbeat_age = None if seen is None else (now - seen).total_seconds()
    recovery = ha_recovery.HaHostRecovery.latest(context, service.host)
    missed = heartbeat_age is None or heartbeat_age > service_down_time
    looks_down = missed or bool(service.forced_down)
    return decision.HostEvidence(
        host=service.host,
        heartbeat_age=heartbeat_age,
        never_reported=service.last_seen_up is None,
        forced_down=bool(service.forced_down),
        service_down_time=service_down_time,
        # Only a host that looks down is worth a call to its libvirtd.
        guests_running=probe(service.host) if missed else None,
        disk_leases=disk_lease_report(service, services),
        fence_agent=fence_agent,
        flap_window=flap_window,
        recovery=prior_recovery(context, recovery, service, now,
                                looks_down),
        lease_retry_interval=lease_retry_interval)
