"""Start and stop: power a guest on or off, keeping its disks.

A failed start leaves the instance STOPPED with every disk untouched (the
driver's ``power_on`` contract, Nova bug 1660647) so the next start can
work; a failed stop leaves the vm_state as it was.
"""

from nova.compute import operation

START = operation.Operation('start', 'start', 'compute_start_instance')
STOP = operation.Operation('stop', 'stop', 'compute_stop_instance')

# Seconds between two clean-shutdown requests to the guest (Nova's
# shutdown_retry_interval).
SHUTDOWN_RETRY_INTERVAL = 10


def start(compute, context, instance):
    compute.driver.power_on(context, instance, instance.network_info)


def stop(compute, instance, clean_shutdown=True):
    timeout = compute.settings.shutdown_timeout if clean_shutdown else 0
    compute.driver.power_off(instance, timeout=timeout,
                             retry_interval=SHUTDOWN_RETRY_INTERVAL)
