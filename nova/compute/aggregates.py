"""The host aggregate workflow: create, rename, re-zone, add and remove
hosts, delete, each keeping every compute host in one availability zone.

A host's zone is that of its aggregates with an ``availability_zone``
(``nova.compute.availability_zones``). So a host may not join an aggregate
whose zone differs from another of its aggregates' (409), nor may an
aggregate take a zone its hosts' other aggregates contradict, or the
internal zone (400). Checks and writes run under one lock of this process,
so two requests of one API process cannot each pass the check the other
breaks.

Example::

    agg = aggregates.create(ctx, 'rack1', zone='az1')
    aggregates.add_host(ctx, agg.id, 'compute1')
    aggregates.set_metadata(ctx, agg.id, {'ssd': 'true'})
"""

from oslo_concurrency import lockutils

from nova.compute import availability_zones
from nova import exception
from nova.objects import aggregate as aggregate_obj
from nova.scheduler import target

ZONE_KEY = aggregate_obj.ZONE_KEY
_LOCK = 'aggregate-zones'
# The update of a zone the caller did not name (``update``'s default).
KEEP = object()


def _refuse_internal(aggregate_id, action: str, zone: str | None) -> None:
    if zone is not None and zone == availability_zones.internal_zone():
        raise exception.InvalidAggregateAction(
            action=action, aggregate_id=aggregate_id,
            reason='the availability zone %s is the internal services\' '
                   'zone, where no server may run' % zone)


def _other_zones(context, host: str, aggregate_id: int) -> set[str]:
    """The zones ``host`` is in through aggregates other than this one."""
    return {other.availability_zone
            for other in aggregate_obj.Aggregate.get_by_host(context, host)
            if other.id != aggregate_id and other.availability_zone}


def _check_zone_change(context, aggregate, zone: str | None,
                       action: str) -> None:
    """Refuse ``zone`` for ``aggregate`` if one of its hosts would then
    be in two zones."""
    _refuse_internal(aggregate.id, action, zone)
    if zone is None:
        return
    for host in aggregate.hosts:
        conflicting = _other_zones(context, host, aggregate.id) - {zone}
        if conflicting:
            raise exception.InvalidAggregateAction(
                action=action, aggregate_id=aggregate.id,
                reason='host %s is in availability zone %s through another '
                       'aggregate' % (host, ', '.join(sorted(conflicting))))


def create(context, name: str, zone: str | None = None):
    _refuse_internal(name, 'create', zone)
    return aggregate_obj.Aggregate.create(
        context, name, {ZONE_KEY: zone} if zone is not None else {})


def get(context, aggregate_id: int):
    return aggregate_obj.Aggregate.get_by_id(context, aggregate_id)


def get_all(context):
    return aggregate_obj.Aggregate.get_all(context)


@lockutils.synchronized(_LOCK)
def update(context, aggregate_id: int, name: str | None = None,
           zone=KEEP):
    """Rename and/or re-zone (``zone=None`` takes the zone away)."""
    aggregate = get(context, aggregate_id)
    if zone is not KEEP:
        _check_zone_change(context, aggregate, zone, 'update')
    if name is not None:
        aggregate_obj.Aggregate.rename(context, aggregate_id, name)
    if zone is not KEEP:
        aggregate_obj.Aggregate.update_metadata(context, aggregate_id,
                                                {ZONE_KEY: zone})
    return get(context, aggregate_id)


@lockutils.synchronized(_LOCK)
def set_metadata(context, aggregate_id: int,
                 changes: dict[str, str | None]):
    """Set the keys of ``changes``; a None value deletes its key."""
    aggregate = get(context, aggregate_id)
    if ZONE_KEY in changes:
        _check_zone_change(context, aggregate, changes[ZONE_KEY],
                           'update aggregate metadata of')
    aggregate_obj.Aggregate.update_metadata(context, aggregate_id, changes)
    return get(context, aggregate_id)


@lockutils.synchronized(_LOCK)
def add_host(context, aggregate_id: int, host: str):
    """Add compute host ``host`` (``ComputeHostNotFound`` without one);
    409 when it is in the aggregate, or in another zone already."""
    aggregate = get(context, aggregate_id)
    target.get_compute_service(context, host)
    if host in aggregate.hosts:
        raise exception.AggregateHostExists(aggregate_id=aggregate_id,
                                            host=host)
    zone = aggregate.availability_zone
    conflicting = (_other_zones(context, host, aggregate_id) - {zone}
                   if zone else set())
    if conflicting:
        raise exception.AggregateHostZoneConflict(
            host=host, aggregate_id=aggregate_id,
            reason='it is in availability zone %s already, and this '
                   'aggregate\'s is %s'
                   % (', '.join(sorted(conflicting)), zone))
    aggregate_obj.Aggregate.add_host(context, aggregate_id, host)
    return get(context, aggregate_id)


@lockutils.synchronized(_LOCK)
def remove_host(context, aggregate_id: int, host: str):
    get(context, aggregate_id)
    aggregate_obj.Aggregate.remove_host(context, aggregate_id, host)
    return get(context, aggregate_id)


def delete(context, aggregate_id: int) -> None:
    """Delete an empty aggregate (400 while it has hosts)."""
    aggregate_obj.Aggregate.destroy(context, aggregate_id)
