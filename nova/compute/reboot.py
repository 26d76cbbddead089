"""Reboot: soft (the guest restarts itself) or hard (stop, start again).

The driver falls back from soft to hard when a soft reboot does not
complete. A failure leaves the instance ERROR with a fault and its disks
untouched; a later hard reboot or start can succeed.
"""

from nova.compute import operation
from nova import exception

SOFT = 'SOFT'
HARD = 'HARD'

OPERATIONS = {
    SOFT: operation.Operation('reboot_soft', 'reboot',
                              'compute_reboot_instance'),
    HARD: operation.Operation('reboot_hard', 'reboot',
                              'compute_reboot_instance'),
}


def operation_for(reboot_type):
    try:
        return OPERATIONS[reboot_type]
    except KeyError:
        raise exception.InvalidInput(
            reason='reboot_type must be SOFT or HARD, not %r' % reboot_type)


def reboot(compute, context, instance, reboot_type):
    compute.driver.reboot(context, instance, instance.network_info,
                          reboot_type)
