"""Per-instance locks of one compute host.

Every operation on an instance runs under its lock, so two requests for the
same instance on one host run one after the other (the compare-and-swap on
``task_state`` already refuses the second when they conflict). Locks are
in-process (``oslo_concurrency.lockutils`` with the host's own semaphores):
several hosts in one process (``nova-all``, functional tests) do not block
each other, just as separate ``nova-compute`` processes would not.

Example::

    locks = InstanceLocks()
    with locks.lock(instance.uuid):
        ...
"""

import contextlib

from oslo_concurrency import lockutils

_PREFIX = 'instance-'


class InstanceLocks:

    def __init__(self):
        self._semaphores = lockutils.Semaphores()

    def lock(self, instance_uuid):
        """Context manager holding the lock named after the instance."""
        return lockutils.lock(_PREFIX + instance_uuid,
                              semaphores=self._semaphores)

    @contextlib.contextmanager
    def lock_if_free(self, instance_uuid):
        """Hold the instance's lock if nobody does; yield whether it is held.

        For callers that must not wait behind an operation (a lifecycle
        event handler runs on the hypervisor's event thread, and a build
        can hold the lock for ``vif_plugging_timeout``)::

            with locks.lock_if_free(uuid) as held:
                if not held:
                    return  # the operation in progress owns the instance
        """
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(lockutils.lock(
                    _PREFIX + instance_uuid, semaphores=self._semaphores,
                    blocking=False))
                held = True
            except lockutils.AcquireLockFailedException:
                held = False
            yield held
