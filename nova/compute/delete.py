"""Delete: destroy the guest and its disks, then the database row.

This is one of the three things allowed to delete disks
(doc/source/cleanup.rst, "Who may delete disks"): ``driver.destroy(...,
destroy_disks=True)``. The row is soft-deleted only after the host is
clean; a failure leaves the instance ERROR with a fault and the row in
place, so the delete can be retried.
"""

from nova.compute import operation
from nova.network import api as network_api

DELETE = operation.Operation('delete', 'delete',
                             'compute_terminate_instance')


def destroy_guest(compute, context, instance):
    compute.driver.destroy(context, instance, instance.network_info,
                           destroy_disks=True)


def remove_record(context, instance):
    # The ports (and their fixed IPs) go with the instance; they are
    # released only once the host is clean, so a failed delete keeps them.
    network_api.API().deallocate_for_instance(context, instance)
    instance.destroy()


def terminate(runner, compute, context, instance):
    """Run the delete of ``instance`` (the manager and init_host use it)."""
    # Wake a build of this instance waiting for VIF events, so the delete
    # does not wait for its timeout behind the instance lock.
    events = getattr(compute.virtapi, 'events', None)
    if events is not None:
        events.cancel_all(instance.uuid)
    runner.run(context, instance, DELETE,
               lambda: destroy_guest(compute, context, instance),
               after_success=lambda: remove_record(context, instance))
