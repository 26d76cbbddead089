"""Ports no instance will use again: list them, release them.

A boot's ports are allocated before its instance row exists, so that a
full network refuses the request before anything else is made
(``compute.api.API.create``). When placing fails, they are deallocated
again; a delete deallocates them as well. If the process dies between
those steps, the ports are left behind. Each still holds a MAC and a fixed
IP, forever. They are bound to no host, or to a host that no longer has
the instance, so the per-host audit (``nova.compute.audit``) never sees
them. This one looks at the database alone (``nova-manage network
audit`` / ``network cleanup``).

A port is orphaned when it names an instance and that instance's row
does not exist, or is deleted. It must also be older than ``min_age``
seconds: a younger port may belong to a boot between its two steps, whose
row is about to be written. Ports that name no instance are not ours
(``device_owner`` other than a compute's) and are never touched.

Example::

    orphans = audit.orphaned_ports(ctx, min_age=600)
    released = audit.release(ctx, orphans, min_age=600)
"""

import dataclasses
import datetime

from oslo_log import log as logging

from nova import exception
from nova import objects
from nova.objects import fields

LOG = logging.getLogger(__name__)

DEFAULT_MIN_AGE = 600

NO_INSTANCE = 'no such instance'
INSTANCE_DELETED = 'instance deleted'

COLUMNS = (('PORT', 'port_id'), ('MAC', 'mac_address'),
           ('IP', 'ip_address'), ('INSTANCE', 'instance_uuid'),
           ('BOUND TO', 'binding_host'), ('CREATED', 'created_at'),
           ('REASON', 'reason'))


@dataclasses.dataclass(frozen=True)
class OrphanPort:
    port_id: str
    mac_address: str
    ip_address: str | None
    instance_uuid: str
    binding_host: str | None
    created_at: datetime.datetime | None
    reason: str                 # NO_INSTANCE or INSTANCE_DELETED


def _why_orphaned(context, port) -> str | None:
    try:
        instance = objects.Instance.get_by_uuid(
            context, port.instance_uuid, read_deleted='yes')
    except exception.InstanceNotFound:
        return NO_INSTANCE
    return INSTANCE_DELETED if instance.deleted else None


def _old_enough(port, cutoff) -> bool:
    # A port without a creation time predates the column: old enough.
    return port.created_at is None or port.created_at <= cutoff


def orphaned_ports(context, min_age: float = DEFAULT_MIN_AGE
                   ) -> list[OrphanPort]:
    """Every port whose instance is gone, older than ``min_age`` seconds."""
    if min_age < 0:
        raise exception.InvalidInput(
            reason='min_age must not be negative, got %s' % min_age)
    cutoff = fields.utcnow() - datetime.timedelta(seconds=min_age)
    orphans = []
    for port in objects.Port.get_all(context):
        if not port.instance_uuid or not _old_enough(port, cutoff):
            continue
        reason = _why_orphaned(context, port)
        if reason is not None:
            orphans.append(OrphanPort(
                port_id=port.uuid, mac_address=port.mac_address,
                ip_address=port.ip_address,
                instance_uuid=port.instance_uuid,
                binding_host=port.binding_host,
                created_at=port.created_at, reason=reason))
    return orphans


def release(context, orphans: list[OrphanPort],
            min_age: float = DEFAULT_MIN_AGE) -> list[OrphanPort]:
    """Delete the ports of ``orphans`` that are still orphaned; the
    released ones are returned.

    Each port is read and judged again first: an instance that was
    written since the audit keeps its port.
    """
    cutoff = fields.utcnow() - datetime.timedelta(seconds=min_age)
    released = []
    for orphan in orphans:
        try:
            port = objects.Port.get_by_uuid(context, orphan.port_id)
        except exception.PortNotFound:
            continue
        if (port.instance_uuid != orphan.instance_uuid
                or not _old_enough(port, cutoff)
                or _why_orphaned(context, port) is None):
            LOG.info('Port %s is in use again; kept', port.uuid)
            continue
        port.destroy()
        LOG.info('Released orphaned port %(port)s (%(mac)s, %(ip)s): '
                 '%(reason)s', {'port': port.uuid, 'mac': port.mac_address,
                                'ip': port.ip_address,
                                'reason': orphan.reason},
                 instance_uuid=port.instance_uuid)
        released.append(orphan)
    return released
