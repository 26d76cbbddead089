"""Suspend and resume: save a guest's memory and start it from it again.

A failed suspend leaves the vm_state as it was; a failed resume leaves the
instance SUSPENDED with its disks and saved memory, so it can be resumed
again.
"""

from nova.compute import operation

SUSPEND = operation.Operation('suspend', 'suspend',
                              'compute_suspend_instance')
RESUME = operation.Operation('resume', 'resume', 'compute_resume_instance')


def suspend(compute, context, instance):
    compute.driver.suspend(context, instance)


def resume(compute, context, instance):
    compute.driver.resume(context, instance, instance.network_info)
