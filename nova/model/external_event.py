"""An event about an instance from outside the compute service.

The network backend sends ``network-vif-plugged`` (and ``-unplugged``) for
a port, tagged with the port's id, through ``os-server-external-events``,
as Neutron does for Nova; the compute host delivers it to whoever waits
for it (``nova/compute/instance_events.py``).
"""

import dataclasses

STATUS_COMPLETED = 'completed'
STATUS_FAILED = 'failed'
EVENT_STATUSES = (STATUS_COMPLETED, STATUS_FAILED, 'in-progress')


@dataclasses.dataclass(frozen=True)
class InstanceExternalEvent:
    instance_uuid: str
    name: str
    tag: str | None = None
    status: str = STATUS_COMPLETED

    @property
    def key(self):
        return (self.name, self.tag)
