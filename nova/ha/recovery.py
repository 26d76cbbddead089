"""Recovering one failed host: fence it, force its service down, evacuate
it, each step recorded (``nova.objects.ha_recovery``) before it is taken
and taken only while this monitor holds its lease.

The host is forced down only once the fence agent said it is off, and is
evacuated through host-evacuate (``compute.api.API.host_evacuate``: the
same run ``POST /os-host-evacuations`` and ``nova host-evacuate --wait``
start). Every instance on the host is evacuated, whatever its
``HA_Enabled`` metadata (Masakari is the one that honours it).

A host that is neither fenced nor forced down (no fence agent; its disks on
shared storage under working disk leases) may still run its guests: it is
evacuated with ``on_shared_storage=True``, so only to the hosts sharing its
storage, whose disk leases refuse a second guest while the first holds
them (with any other target, a second copy would boot from the image). What
the leases refused stays on the host and is evacuated again after
``[ha] lease_retry_interval`` (``decision``), until the leases are free.

With ``[ha] recovery = masakari`` (a ``masakari.Notifier`` given) the
monitor does not evacuate: once the host is forced down it posts
Masakari's host-failure notification, recording its uuid, and Masakari
evacuates (the instances its segment's method and ``HA_Enabled`` choose).
A Masakari that does not take it gets an alert, and the notification is
posted again at the next check (the recovery stays ``notifying``).

A step is moved on by compare-and-swap: of two monitors that both got
past their lease check (one stalled in between), one moves it, and a
monitor that takes over carries on from the recorded step::

    recovery = Recovery(context, lease, fencer, compute_api,
                        masakari=None)     # or a masakari.Notifier
    recovery.start(evidence, verdict)      # FENCE or RECOVER
    recovery.carry_on(row, evidence)       # a recovery not ended
"""

from oslo_log import log as logging

from nova import crashpoint
from nova import exception
from nova.ha import decision
from nova.ha import fencer as fencer_mod
from nova.ha import lease as lease_mod
from nova.ha import masakari as masakari_mod
from nova import objects
from nova.objects import ha_alert
from nova.objects import ha_recovery as steps
from nova.objects import host_evacuation as run_obj
from nova.objects import service as service_obj

LOG = logging.getLogger(__name__)


class Recovery:

    def __init__(self, context, lease: lease_mod.MonitorLease,
                 fencer: fencer_mod.Fencer, compute_api,
                 masakari: masakari_mod.Notifier | None = None):
        self.context = context
        self.lease = lease
        self.fencer = fencer
        self.compute_api = compute_api
        self.masakari = masakari

    @property
    def me(self) -> str:
        return self.lease.holder

    def start(self, evidence: decision.HostEvidence,
              verdict: decision.Verdict) -> steps.HaHostRecovery:
        """Record a new recovery of the host and take it as far as it
        goes."""
        first = (steps.FENCING if verdict.action == decision.Action.FENCE
                 else steps.READY)
        self.lease.check('recording the recovery of %s' % evidence.host)
        row = steps.HaHostRecovery.begin(self.context, evidence.host,
                                         first, self.me, verdict.reason)
        LOG.warning('Recovering host %s: %s', evidence.host, verdict.reason)
        self.carry_on(row, evidence)
        return row

    def carry_on(self, row: steps.HaHostRecovery,
                 evidence: decision.HostEvidence) -> None:
        """Take ``row`` from its recorded step to its end (or until
        another monitor moved it first)."""
        while not row.ended:
            step = row.step
            if step == steps.FENCING:
                moved = self._fence(row, evidence)
            elif step == steps.READY:
                moved = self._force_down(row)
            elif step == steps.EVACUATING:
                moved = self._evacuate(row)
            elif step == steps.NOTIFYING:
                if not self._notify(row):
                    # Masakari did not take it (the next check posts
                    # again), or another monitor recorded it.
                    return
                continue
            else:
                raise ValueError('unknown recovery step %r' % step)
            if not moved:
                LOG.info('Recovery %(id)s of %(host)s: another monitor '
                         'moved it on (%(step)s)', {
                             'id': row.id, 'host': row.host,
                             'step': row.step})
                return

    def _fence(self, row, evidence) -> bool:
        self.lease.check('fencing %s' % row.host)
        result = self.fencer.fence(row.host)
        verdict = decision.after_fence(evidence, result.fenced,
                                       result.detail)
        if verdict.action != decision.Action.RECOVER:
            self.lease.check('recording the failed fence of %s' % row.host)
            ha_alert.HaAlert.record(self.context, row.host, verdict.reason)
            return row.advance(steps.FENCING, steps.FENCE_FAILED, self.me,
                               reason=verdict.reason)
        moved = row.advance(steps.FENCING, steps.READY, self.me,
                            fenced=True, reason=verdict.reason)
        crashpoint.reached('hamonitor.after_fence')
        return moved

    def _service(self, host):
        return objects.Service.get_by_host_and_binary(
            self.context, host, service_obj.COMPUTE_BINARY)

    def _lease_guarded(self, row) -> bool:
        """Whether nothing but the disk leases makes ``row``'s host safe
        to evacuate: neither fenced nor forced down by an operator (who
        vouches it is dead). A guest may still run there then, and only a
        host sharing its storage has a lease to refuse a second one."""
        return not row.fenced and not self._service(row.host).forced_down

    def _force_down(self, row) -> bool:
        if row.fenced:
            self.lease.check('forcing down %s' % row.host)
            service = self._service(row.host)
            if not service.forced_down:
                service.forced_down = True
                service.save()
                LOG.warning('Forced down the compute service of fenced '
                            'host %s', row.host)
        # Masakari's evacuations go wherever the Compute API puts them: it
        # gets only hosts known dead. One that only the leases guard is
        # evacuated here, to the hosts sharing its storage.
        handover = (steps.EVACUATING
                    if self.masakari is None or self._lease_guarded(row)
                    else steps.NOTIFYING)
        return row.advance(steps.READY, handover, self.me)

    def _evacuate(self, row) -> bool:
        self.lease.check('evacuating %s' % row.host)
        # A monitor that stopped right after starting the run left it
        # unrecorded here: that run is this recovery's.
        started = [run for run in run_obj.HostEvacuation.get_unended(
            self.context, row.host)
            if run.created_at is not None and row.created_at is not None
            and run.created_at >= row.created_at]
        if started:
            run = started[0]
        else:
            # Unfenced: on_shared_storage=True holds every attempt to the
            # hosts sharing the storage (the targets check it too), where
            # a guest still running on the host keeps its disks leased.
            run = self.compute_api.host_evacuate(
                self.context, row.host,
                on_shared_storage=True if self._lease_guarded(row) else None)
        LOG.warning('Host %(host)s: host-evacuate %(run)s started%(how)s',
                    {'host': row.host, 'run': run.uuid,
                     'how': ' (to the hosts sharing its storage only)'
                     if run.on_shared_storage else ''})
        return row.advance(steps.EVACUATING, steps.STARTED, self.me,
                           evacuation_uuid=run.uuid)

    def _notify(self, row) -> bool:
        """Hand the host to Masakari: whether the notification is
        recorded."""
        if self.masakari is None:
            # Begun under [ha] recovery = masakari, carried on without:
            # evacuating now could race the Masakari that may have it.
            self._alert(row.host, 'the recovery of host %s waits to notify '
                        'Masakari, but [ha] recovery is not masakari: '
                        'nothing done' % row.host)
            return False
        assert row.created_at is not None, 'begun with a time'
        failure = masakari_mod.HostFailure(row.host, row.created_at)
        self.lease.check('notifying Masakari of %s' % row.host)
        try:
            uuid = self.masakari.notify(failure)
        except exception.HaMasakariFailed as e:
            self._alert(row.host, 'host %s is fenced and forced down but '
                        'Masakari was not told: %s; posting again at the '
                        'next check' % (row.host, e))
            return False
        crashpoint.reached('hamonitor.after_notify')
        if not row.advance(steps.NOTIFYING, steps.NOTIFIED, self.me,
                           notification_uuid=uuid):
            LOG.info('Recovery %(id)s of %(host)s: another monitor moved it '
                     'on (%(step)s)', {'id': row.id, 'host': row.host,
                                       'step': row.step})
            return False
        return True

    def _alert(self, host: str, reason: str) -> None:
        self.lease.check('recording an alert for %s' % host)
        LOG.error('%s', reason)
        ha_alert.HaAlert.record(self.context, host, reason)
