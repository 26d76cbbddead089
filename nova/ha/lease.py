"""This monitor's hold on its region's lease (``nova.objects.ha_lease``).

A monitor renews the lease once per check and looks again right before
every side effect (``check``): a monitor that stalled (a stopped process,
a long garbage collection, a network cut) past the lease's expiry finds it
taken over by another monitor and does nothing more, as an evacuation's
attempt re-checks its token before each step::

    lease = MonitorLease('RegionOne', holder='hamonitor@ctl1:4242',
                         seconds=30)
    if lease.renew():
        ...
        lease.check('forcing down compute1')   # raises LeaseLost
        service.forced_down = True
"""

from oslo_log import log as logging

from nova import exception
from nova.objects import ha_lease

LOG = logging.getLogger(__name__)


class MonitorLease:

    def __init__(self, region: str, holder: str, seconds: float):
        self.region = region
        self.holder = holder
        self.seconds = seconds

    def renew(self) -> bool:
        """Take or renew the lease: whether this monitor may act."""
        held = ha_lease.take_or_renew(self.region, self.holder,
                                      self.seconds)
        if not held:
            LOG.debug('Region %s: %s holds the monitor lease',
                      self.region, ha_lease.holder_of(self.region))
        return held

    def check(self, before: str) -> None:
        """Raise ``HaLeaseLost`` unless this monitor still holds the lease
        (``before``: the side effect about to happen, for the log)."""
        if not ha_lease.holds(self.region, self.holder):
            LOG.warning('Lost the monitor lease of region %s before %s: '
                        'doing nothing more', self.region, before)
            raise exception.HaLeaseLost(region=self.region, before=before)

    def give_back(self) -> None:
        ha_lease.give_back(self.region, self.holder)
