"""Lifecycle events a virt driver hands to the compute manager."""

import dataclasses
import time

EVENT_LIFECYCLE_STARTED = 0
EVENT_LIFECYCLE_STOPPED = 1
EVENT_LIFECYCLE_PAUSED = 2
EVENT_LIFECYCLE_RESUMED = 3
EVENT_LIFECYCLE_SUSPENDED = 4

NAMES = {
    EVENT_LIFECYCLE_STARTED: 'Started',
    EVENT_LIFECYCLE_STOPPED: 'Stopped',
    EVENT_LIFECYCLE_PAUSED: 'Paused',
    EVENT_LIFECYCLE_RESUMED: 'Resumed',
    EVENT_LIFECYCLE_SUSPENDED: 'Suspended',
}


@dataclasses.dataclass(frozen=True)
class LifecycleEvent:
    uuid: str
    transition: int
    timestamp: float = dataclasses.field(default_factory=time.time)
    # Why the hypervisor says a guest stopped, in libvirt's words
    # (``STOPPED_FAILED``: its QEMU died; ``STOPPED_DESTROYED``;
    # ``CRASHED``); empty when it says nothing more.
    detail: str = ''

    @property
    def name(self):
        return NAMES.get(self.transition, 'Unknown')
