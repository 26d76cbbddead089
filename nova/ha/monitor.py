"""The monitor loop: every ``[ha] check_interval``, if this monitor holds
its region's lease, look at every compute host and act on the verdict,
then handle the instance failures the hosts that are up recorded
(``instance_failure``).

::

    monitor = Monitor(context, lease, fencer, compute_api)
    # [ha] recovery = masakari: Masakari evacuates what the monitor fenced
    monitor = Monitor(context, lease, fencer, compute_api,
                      masakari=masakari.Notifier.from_conf(CONF))
    monitor.check_once()           # one look (tests call this)
    monitor.run(stopping)          # until stopping is set
"""

from concurrent import futures
import threading

from oslo_log import log as logging

from nova.conf import CONF
from nova import exception
from nova.ha import decision
from nova.ha import evidence as evidence_mod
from nova.ha import fencer as fencer_mod
from nova.ha import instance_failure
from nova.ha import lease as lease_mod
from nova.ha import masakari as masakari_mod
from nova.ha import recovery as recovery_mod
from nova import objects
from nova.objects import ha_alert
from nova.objects import ha_recovery
from nova.objects import service as service_obj

LOG = logging.getLogger(__name__)

Action = decision.Action
# Hosts checked (and recovered) at once, at most.
MAX_PARALLEL = 8
# Verdicts that need no more than a line in the log.
_QUIET = (Action.HEALTHY, Action.ALREADY_RECOVERED)


class Monitor:

    def __init__(self, context, lease: lease_mod.MonitorLease,
                 fencer: fencer_mod.Fencer, compute_api,
                 probe: evidence_mod.GuestProbe = evidence_mod.no_probe,
                 masakari: masakari_mod.Notifier | None = None):
        self.context = context
        self.lease = lease
        self.fencer = fencer
        self.probe = probe
        self.masakari = masakari
        # Hosts whose process failure Masakari did not take yet.
        self._unposted: set[str] = set()
        # masakari: [ha] recovery = masakari, Masakari evacuates.
        self.recovery = recovery_mod.Recovery(context, lease, fencer,
                                              compute_api, masakari)
        self.instance_failures = instance_failure.InstanceFailures(
            context, lease, compute_api, masakari)

    def check_once(self) -> dict[str, decision.Verdict]:
        """One look at every compute host; the verdicts by host (none
        when another monitor holds the lease, or this one lost it)."""
        if not self.lease.renew():
            return {}
        services = objects.Service.get_all(
            self.context, binary=service_obj.COMPUTE_BINARY)
        verdicts = {}
        lost = False
        # Each host in a thread of its own: a fence agent that takes its
        # fence_timeout, or a slow Masakari, never holds up the recovery
        # of another host that failed at the same time.
        with futures.ThreadPoolExecutor(
                max_workers=max(1, min(MAX_PARALLEL, len(services))),
                thread_name_prefix='ha-check') as pool:
            checks = {pool.submit(self._check, service, services):
                      service.host for service in services}
            for check in futures.as_completed(checks):
                host = checks[check]
                try:
                    verdicts[host] = check.result()
                except exception.HaLeaseLost:
                    lost = True
                except Exception:
                    # One host's trouble is logged; the others are
                    # checked all the same.
                    LOG.exception('Checking host %s failed', host)
        if lost:
            return verdicts
        up = {host for host, verdict in verdicts.items()
              if verdict.action == Action.HEALTHY}
        try:
            self.instance_failures.handle_new(up)
        except exception.HaLeaseLost:
            pass
        except Exception:
            LOG.exception('Handling the instance failures failed')
        return verdicts

    def _check(self, service, services) -> decision.Verdict:
        evidence = evidence_mod.gather(
            self.context, service, services,
            service_down_time=CONF.service_down_time,
            flap_window=CONF.ha.flap_window,
            fence_agent=self.fencer.configured,
            lease_retry_interval=CONF.ha.lease_retry_interval,
            probe=self.probe)
        verdict = decision.decide(evidence)
        action = verdict.action
        log = LOG.debug if action in _QUIET else LOG.warning
        log('Host %(host)s: %(action)s: %(reason)s',
            {'host': service.host, 'action': action.value,
             'reason': verdict.reason})
        if action == Action.CONTINUE:
            row = ha_recovery.HaHostRecovery.latest(self.context, service.host)
            if row is not None:
                self.recovery.carry_on(row, evidence)
        elif action in (Action.FENCE, Action.RECOVER):
            self.recovery.start(evidence, verdict)
        elif action in (Action.ALERT, Action.NOT_FAILED):
            self._alert(service, verdict)
        return verdict

    def _alert(self, service, verdict: decision.Verdict) -> None:
        """Record the verdict's alert, once per failure of the host (its
        heartbeats stopping); with Masakari, a host whose nova-compute
        alone stopped is reported as a process failure with it."""
        host = service.host
        since = service.last_seen_up or service.created_at
        self.lease.check('recording an alert for %s' % host)
        alert = ha_alert.HaAlert.record_new(
            self.context, host, verdict.alert or verdict.reason, since)
        if alert is not None:
            LOG.error('%s', alert.reason)
        if (verdict.action != Action.NOT_FAILED or self.masakari is None
                or since is None):
            return
        if alert is None and host not in self._unposted:
            return
        self.lease.check('notifying Masakari of nova-compute of %s' % host)
        try:
            self.masakari.notify(masakari_mod.ProcessFailure(host, since))
        except exception.HaMasakariFailed as e:
            # Posted again at the next check, by this monitor.
            self._unposted.add(host)
            ha_alert.HaAlert.record(
                self.context, host, 'nova-compute of host %s is down but '
                'Masakari was not told: %s; posting again at the next '
                'check' % (host, e), since)
            return
        self._unposted.discard(host)

    def run(self, stopping: threading.Event) -> None:
        """Check every ``[ha] check_interval`` until ``stopping`` is set;
        then give the lease back, so another monitor takes over at
        once."""
        try:
            while not stopping.is_set():
                try:
                    self.check_once()
                except Exception:
                    LOG.exception('The monitor\'s check failed')
                stopping.wait(CONF.ha.check_interval)
        finally:
            self.lease.give_back()
