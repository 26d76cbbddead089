"""Masakari's side of a recovery (``[ha] recovery = masakari``): the
host-failure notification the monitor posts once it fenced a host and
forced its service down, after which Masakari's engine evacuates it; and
the instance-failure notification of a guest that died on a host that is
up (``type`` ``VM``, ``vir_domain_event`` ``STOPPED_FAILED``: the one
Masakari's engine acts on), after which it stops and starts the instance;
and the process-failure notification of a host whose nova-compute alone
stopped (``type`` ``PROCESS``), after which it disables the compute
service.

Masakari is found in the service catalog (``instance-ha``) and called as
the service user of ``[masakari]`` (keystoneauth)::

    notifier = Notifier.from_conf(CONF)
    failure = HostFailure('compute1', row.created_at)
    uuid = notifier.notify(failure)    # POST /v1/notifications

A notification Masakari refuses as already known (its duplicate check, or
the host already under maintenance by it) is looked up: if it is this
failure's (same host and payload, generated at or after this failure),
its uuid is the answer, so that a monitor that posted and stopped before
recording it is not made to post again.
"""

import dataclasses
import datetime

from oslo_log import log as logging

from nova.conf import masakari as masakari_conf
from nova import exception

LOG = logging.getLogger(__name__)

COMPUTE_HOST = 'COMPUTE_HOST'
# The payload of a host that is down and safe to evacuate. Masakari
# recovers only a host whose status is NORMAL (known): the monitor posts
# after fencing it (or after finding it safe without), so it knows.
STOPPED_PAYLOAD = {'event': 'STOPPED', 'host_status': 'NORMAL',
                   'cluster_status': 'OFFLINE'}
VM = 'VM'
PROCESS = 'PROCESS'
COMPUTE_PROCESS = 'nova-compute'
# Masakari's engine recovers an instance only for this event and detail
# (its INSTANCE_EVENTS): whatever libvirt said, a guest that stopped
# without nova is reported as one whose QEMU failed.
VM_EVENT = 'LIFECYCLE'
VM_DOMAIN_EVENT = 'STOPPED_FAILED'
_TIME_FORMAT = '%Y-%m-%dT%H:%M:%SZ'


@dataclasses.dataclass(frozen=True)
class HostFailure:
    host: str
    # When the monitor found the host failed (the recovery began). The
    # same at every try, so Masakari sees every try as one failure.
    found_at: datetime.datetime

    type = COMPUTE_HOST

    @property
    def what(self) -> str:
        return 'host %s' % self.host

    @property
    def payload(self) -> dict:
        return dict(STOPPED_PAYLOAD)

    @property
    def generated_time(self) -> str:
        found = self.found_at
        if found.tzinfo is None:
            # The database's times are UTC.
            found = found.replace(tzinfo=datetime.timezone.utc)
        return found.astimezone(datetime.timezone.utc).strftime(
            _TIME_FORMAT)

    def body(self) -> dict:
        return {'notification': {
            'type': self.type, 'hostname': self.host,
            'generated_time': self.generated_time,
            'payload': self.payload}}


@dataclasses.dataclass(frozen=True)
class InstanceFailure(HostFailure):
    """A guest of ``host`` that died (``found_at``: when its host
    recorded it)."""
    instance_uuid: str

    type = VM

    @property
    def what(self) -> str:
        return 'instance %s' % self.instance_uuid

    @property
    def payload(self) -> dict:
        return {'event': VM_EVENT, 'instance_uuid': self.instance_uuid,
                'vir_domain_event': VM_DOMAIN_EVENT}


@dataclasses.dataclass(frozen=True)
class ProcessFailure(HostFailure):
    """nova-compute of ``host`` stopped while the host lives (its
    libvirtd reports guests running; ``found_at``: when its heartbeats
    stopped). Masakari's engine disables the compute service."""

    type = PROCESS

    @property
    def what(self) -> str:
        return 'nova-compute of host %s' % self.host

    @property
    def payload(self) -> dict:
        return {'event': 'STOPPED', 'process_name': COMPUTE_PROCESS}


class Notifier:
    """Masakari's API through a keystoneauth adapter."""

    def __init__(self, adapter):
        self.adapter = adapter

    @classmethod
    def from_conf(cls, conf, group: str = 'masakari') -> 'Notifier':
        from keystoneauth1 import exceptions as ks_exceptions
        from keystoneauth1 import loading as ks_loading
        # Registered where they are read: nova.conf.masakari says why.
        masakari_conf.register_keystoneauth_opts(conf, group)
        try:
            auth = ks_loading.load_auth_from_conf_options(conf, group)
        except ks_exceptions.ClientException as e:
            raise exception.InvalidConfiguration(
                reason='[%s] Keystone credentials: %s' % (group, e))
        if auth is None:
            raise exception.InvalidConfiguration(
                reason='[ha] recovery = masakari needs [%s] auth_type (and '
                       'its credentials)' % group)
        session = ks_loading.load_session_from_conf_options(conf, group,
                                                            auth=auth)
        return cls(ks_loading.load_adapter_from_conf_options(
            conf, group, session=session, auth=auth))

    def _call(self, method: str, path: str, **kwargs) -> tuple[int, dict]:
        from keystoneauth1 import exceptions as ks_exceptions
        try:
            resp = self.adapter.request(path, method, raise_exc=False,
                                        **kwargs)
        except ks_exceptions.ClientException as e:
            raise exception.HaMasakariFailed(reason=str(e))
        try:
            body = resp.json() if resp.content else {}
        except ValueError:
            body = {'text': resp.text[:300]}
        return resp.status_code, body

    def _get(self, path: str, **params) -> dict:
        status, body = self._call('GET', path, params=params)
        if status >= 400:
            raise exception.HaMasakariFailed(
                reason='GET %s answered %d: %s' % (path, status, body))
        return body

    def notify(self, failure: HostFailure) -> str:
        """Post ``failure`` (a host's or an instance's); the uuid of
        Masakari's notification of it. ``HaMasakariFailed`` when Masakari
        did not take it."""
        status, body = self._call('POST', '/notifications',
                                  json=failure.body())
        if status < 400:
            uuid = body['notification']['notification_uuid']
            LOG.warning('Masakari took the failure of %s: notification %s',
                        failure.what, uuid)
            return uuid
        if status == 409:
            known = self.find(failure)
            if known is not None:
                LOG.warning('Masakari already had the failure of %s: '
                            'notification %s', failure.what, known)
                return known
        raise exception.HaMasakariFailed(
            reason='POST /notifications for %s answered %d: %s'
                   % (failure.what, status, _said(body)))

    def find(self, failure: HostFailure) -> str | None:
        """The uuid of a notification of ``failure`` (same host, type
        and payload) generated at or after it, or None."""
        host_uuids = self._host_uuids(failure.host)
        if not host_uuids:
            return None
        found = self._get('/notifications', type=failure.type,
                          **{'generated-since': failure.generated_time})
        for notification in found.get('notifications', []):
            if (notification.get('source_host_uuid') in host_uuids
                    and notification.get('payload') == failure.payload):
                return notification['notification_uuid']
        return None

    def _host_uuids(self, host: str) -> set[str]:
        """Masakari's uuids of ``host``, in whichever segment."""
        uuids = set()
        for segment in self._get('/segments').get('segments', []):
            hosts = self._get('/segments/%s/hosts' % segment['uuid'],
                              name=host).get('hosts', [])
            uuids.update(h['uuid'] for h in hosts if h.get('name') == host)
        return uuids


def _said(body: dict) -> str:
    # Masakari's errors: {"conflictingRequest": {"message": ...}}.
    for value in body.values():
        if isinstance(value, dict) and 'message' in value:
            return str(value['message'])
    return str(body)[:300]
