"""Server locks (``lock``/``unlock`` actions): who may change a server.

A locked server refuses every change asked by anyone but an
administrator (``InstanceIsLocked``, a 409), its owner included: the lock
guards against mistakes, not against other users (policy does that).
``locked_by`` records whether the owner or an administrator locked it:
the owner may lift its own lock, while lifting an administrator's needs
the ``unlock_override`` policy (the API checks it).

Example::

    instance_lock.lock(ctx, instance, reason='maintenance')
    instance_lock.check(ctx, instance)      # InstanceIsLocked unless admin
    instance_lock.unlock(ctx, instance)
"""

from nova import exception

OWNER = 'owner'
ADMIN = 'admin'


def locker_of(context, instance) -> str:
    """``owner`` when the request comes from the server's project, else
    ``admin`` (only an administrator acts on another project's server)."""
    return OWNER if context.project_id == instance.project_id else ADMIN


def check(context, instance) -> None:
    """Refuse a change of a locked server unless an administrator asks."""
    if instance.locked_by is not None and not context.is_admin:
        raise exception.InstanceIsLocked(instance_uuid=instance.uuid)


def locked_by_requester(context, instance) -> bool:
    """Whether the lock is the requester's own kind: the owner's lock and
    the owner asks, or an administrator's and one asks."""
    return instance.locked_by in (None, locker_of(context, instance))


def lock(context, instance, reason: str | None = None) -> None:
    """Lock the server; locking a locked server changes nothing (the
    first lock, its owner and reason, stay)."""
    if instance.locked_by is not None:
        return
    instance.locked_by = locker_of(context, instance)
    instance.locked_reason = reason
    instance.save()


def unlock(context, instance) -> None:
    instance.locked_by = None
    instance.locked_reason = None
    instance.save()
