"""Pause and unpause: stop a guest's vCPUs and let them run again.

A paused guest is still a running QEMU: it keeps its memory, its disks
open and its ports bound, so everything that asks whether an instance's
guest runs on this host (the reaper, disk ownership, a delete) must count
it as running. A failed pause leaves the vm_state as it was; a failed
unpause leaves the instance PAUSED, its guest as the hypervisor shows it.

Not to be confused with the pause of a guest being started
(``nova.virt.guest_start``), whose vCPUs wait for the network: that one
belongs to a build or reboot and never shows as the PAUSED vm_state.
"""

from nova.compute import operation

PAUSE = operation.Operation('pause', 'pause', 'compute_pause_instance')
UNPAUSE = operation.Operation('unpause', 'unpause',
                              'compute_unpause_instance')


def pause(compute: operation.ComputeHost, instance) -> None:
    compute.driver.pause(instance)


def unpause(compute: operation.ComputeHost, instance) -> None:
    compute.driver.unpause(instance)
