"""nova-hamonitor: finds failed compute hosts, fences and recovers them.

    nova-hamonitor [--config-file F ...]

Any number may run for a region (``[ha] region``); the one holding the
region's lease acts, the others wait to take it over. Every ``[ha]
check_interval`` the active one looks at every compute service and, for a
failed host, fences it with ``[ha] fence_command``, forces its service
down and starts host-evacuate through a conductor, or with ``[ha]
recovery = masakari`` posts Masakari's host-failure notification, and
Masakari evacuates (doc/source/ha.rst).
Needs the database and the RPC transport the conductors listen on. Stops
on SIGTERM or SIGINT, giving its lease back.
"""

import os
import sys
import threading
import uuid

from oslo_log import log as logging

from nova.compute import api as compute_api
from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import rpcapi as conductor_rpcapi
from nova.conf import CONF
from nova import context as nova_context
from nova import exception
from nova.ha import evidence as evidence_mod
from nova.ha import fencer as fencer_mod
from nova.ha import lease as lease_mod
from nova.ha import masakari as masakari_mod
from nova.ha import monitor as monitor_mod
from nova.ha import probe as probe_mod
from nova.model import binaries
from nova import rpc
from nova import service
from nova.virt.libvirt import binding

LOG = logging.getLogger(__name__)

BINARY = binaries.HAMONITOR


def holder_name(host: str) -> str:
    """Unique per process, and says where it runs (for the log and
    ``nova-manage ha recoveries``)."""
    return '%s:%d:%s' % (host, os.getpid(), uuid.uuid4().hex[:8])


class HaMonitorService:
    """The monitor loop in a thread, as ``service.run`` starts and stops
    services."""

    def __init__(self, monitor: monitor_mod.Monitor):
        self.monitor = monitor
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def __repr__(self):
        return '<HaMonitorService %s>' % self.monitor.lease.holder

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.monitor.run, args=(self._stopping,),
            name='hamonitor', daemon=True)
        self._thread.start()

    def request_stop(self) -> None:
        self._stopping.set()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()


def build_monitor(host: str) -> monitor_mod.Monitor:
    lease = lease_mod.MonitorLease(CONF.ha.region, holder_name(host),
                                   CONF.ha.lease_duration)
    fencer = fencer_mod.Fencer(CONF.ha.fence_command,
                               CONF.ha.fence_timeout)
    api = compute_api.API(compute_rpcapi.ComputeAPI(),
                          conductor_rpcapi.ConductorAPI())
    if not fencer.configured:
        LOG.warning('No fence agent ([ha] fence_command): failed hosts are '
                    'recovered only when their disks are on shared storage '
                    'under working disk leases; others get an alert')
    masakari = None
    if CONF.ha.recovery == 'masakari':
        masakari = masakari_mod.Notifier.from_conf(CONF)
        LOG.info('Failed hosts are handed to Masakari (the instance-ha '
                 'service) once fenced and forced down')
    probe = probe_mod.from_conf(CONF, binding.active_domain_count)
    if probe is None:
        LOG.warning('No [ha] libvirt_uri: a host whose nova-compute alone '
                    'stopped is taken for a failed one')
    return monitor_mod.Monitor(
        nova_context.get_admin_context(), lease, fencer, api,
        probe=probe or evidence_mod.no_probe, masakari=masakari)


def main(argv=None):
    service.prepare_service(BINARY, argv)
    try:
        try:
            monitor = build_monitor(CONF.host)
        except exception.InvalidConfiguration as e:
            # Said once and exited: a service manager that restarts it
            # would only say it again.
            LOG.error('%s', e)
            print('nova-hamonitor: %s' % e, file=sys.stderr)
            return 2
        service.run([HaMonitorService(monitor)])
    finally:
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
