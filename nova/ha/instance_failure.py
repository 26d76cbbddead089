"""Instance failures the compute hosts recorded (``objects.
HaInstanceFailure``: a guest that stopped without nova, its instance now
STOPPED), each handled once by the monitor that holds the region's lease.

Only a failure on a host that is up is handled: a dead host's instances
are its recovery's (fence, evacuate), and starting one there again would
race it. Such a failure is skipped, with the reason.

* ``[ha] recovery = masakari``: Masakari's instance-failure notification
  is posted (``masakari.InstanceFailure``), then the failure is marked
  ``notified`` with its uuid; Masakari stops and starts the instance if
  its ``HA_Enabled`` metadata (or its own configuration) says so. A
  monitor that stops between posting and recording posts again at its
  next check, and Masakari's duplicate check answers with the first
  notification, whose uuid is then recorded: it is posted once.
* ``builtin``: the monitor starts the instance through the Compute API if
  its metadata says ``HA_Enabled=True`` (Masakari's default rule), after
  stopping it if it is somehow still ACTIVE with its guest off. Once the
  start is cast the failure is marked ``started``; a monitor that stops
  in between finds the instance starting or running at its next check
  and marks it ``skipped``: it is started once.

::

    failures = InstanceFailures(context, lease, compute_api, masakari)
    failures.handle_new(up_hosts={'compute1', 'compute2'})
"""

from oslo_log import log as logging
from oslo_utils import strutils

from nova import exception
from nova.ha import lease as lease_mod
from nova.ha import masakari as masakari_mod
from nova.model import power_state
from nova.model import vm_states
from nova import objects
from nova.objects import ha_alert
from nova.objects import ha_instance_failure as steps
from nova.objects import instance_metadata

LOG = logging.getLogger(__name__)

# Masakari's [instance_failure] ha_enabled_instance_metadata_key.
HA_ENABLED_KEY = 'HA_Enabled'


class InstanceFailures:

    def __init__(self, context, lease: lease_mod.MonitorLease, compute_api,
                 masakari: masakari_mod.Notifier | None = None):
        self.context = context
        self.lease = lease
        self.compute_api = compute_api
        self.masakari = masakari

    @property
    def me(self) -> str:
        return self.lease.holder

    def handle_new(self, up_hosts: set[str]) -> list:
        """Handle every failure not handled yet (``up_hosts``: the compute
        hosts found up at this check); the failures this monitor moved
        on. ``HaLeaseLost`` when the lease was lost meanwhile."""
        moved = []
        for failure in objects.HaInstanceFailure.get_new(self.context):
            try:
                if self._handle(failure, up_hosts):
                    moved.append(failure)
            except exception.HaLeaseLost:
                raise
            except Exception:
                # One instance's trouble never keeps the others waiting.
                LOG.exception('Handling failure %s of instance %s failed',
                              failure.id, failure.instance_uuid)
        return moved

    def _handle(self, failure, up_hosts: set[str]) -> bool:
        if failure.host not in up_hosts:
            return self._skip(failure, 'host %s is not up: its recovery '
                              'has its instances' % failure.host)
        if self.masakari is not None:
            return self._notify(failure)
        return self._start(failure)

    def _skip(self, failure, reason: str) -> bool:
        self.lease.check('skipping failure %s' % failure.id)
        LOG.warning('Instance %s failed (%s): nothing done: %s',
                    failure.instance_uuid, failure.event, reason)
        return failure.advance(steps.SKIPPED, self.me, reason=reason)

    def _notify(self, failure) -> bool:
        assert failure.created_at is not None, 'recorded with a time'
        notice = masakari_mod.InstanceFailure(
            failure.host, failure.created_at, failure.instance_uuid)
        self.lease.check('notifying Masakari of instance %s'
                         % failure.instance_uuid)
        try:
            uuid = self.masakari.notify(notice)
        except exception.HaMasakariFailed as e:
            reason = ('instance %s failed on host %s but Masakari was not '
                      'told: %s; posting again at the next check'
                      % (failure.instance_uuid, failure.host, e))
            LOG.error('%s', reason)
            ha_alert.HaAlert.record(self.context, failure.host, reason)
            return False
        return failure.advance(steps.NOTIFIED, self.me,
                               notification_uuid=uuid)

    def _start(self, failure) -> bool:
        try:
            instance = objects.Instance.get_by_uuid(self.context,
                                                    failure.instance_uuid)
        except exception.InstanceNotFound:
            return self._skip(failure, 'the instance is gone')
        if instance.host != failure.host:
            return self._skip(failure, 'the instance moved to host %s'
                              % instance.host)
        metadata = instance_metadata.InstanceMetadata.get(
            self.context, instance.uuid)
        if not strutils.bool_from_string(metadata.get(HA_ENABLED_KEY)):
            return self._skip(failure, 'the instance is not %s'
                              % HA_ENABLED_KEY)
        if instance.task_state is not None:
            LOG.info('Instance %s: %s in progress; looking again at the '
                     'next check', instance.uuid, instance.task_state)
            return False
        if instance.vm_state == vm_states.ACTIVE:
            if instance.power_state == power_state.RUNNING:
                return self._skip(failure, 'the instance runs again')
            # Its host did not record the stop: stop it first, start it
            # at a later check.
            self.lease.check('stopping instance %s' % instance.uuid)
            self._cast(self.compute_api.stop, instance)
            return False
        if instance.vm_state != vm_states.STOPPED:
            return self._skip(failure, 'the instance is %s'
                              % instance.vm_state)
        self.lease.check('starting instance %s' % instance.uuid)
        if not self._cast(self.compute_api.start, instance):
            return False
        LOG.warning('Instance %s failed (%s) on host %s: started it',
                    instance.uuid, failure.event, failure.host)
        return failure.advance(steps.STARTED, self.me)

    def _cast(self, action, instance) -> bool:
        """``action`` (the Compute API's start or stop) on ``instance``:
        whether it was cast. Another operation that got in first (409) is
        left to end: the next check looks again."""
        try:
            action(self.context, instance)
        except exception.Conflict as e:
            LOG.info('Instance %s: %s', instance.uuid, e)
            return False
        return True
