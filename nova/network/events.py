"""How the network agent delivers external events to the compute hosts.

Every path ends in the waiting host's ``ComputeManager.
external_instance_event``:

* ``ComputeAPIEventSender``: in one process (``nova-all``, functional
  tests), through ``compute.api.API.external_instance_event``, which routes
  each event to the instance's host and to an evacuation target, then
  casts over RPC. The same path the REST API takes.
* ``RESTEventSender``: across processes, ``POST
  /os-server-external-events`` to ``nova-api`` with an admin token, exactly
  as Neutron notifies Nova.
* ``RPCEventSender``: a ``nova-compute`` with no API endpoint configured
  casts to its own host (the one plugging the VIFs) over RPC.

``sender.send(context, events)`` returns True when the events were handed
over, False (logged) when they could not be, so the agent can try again.
"""

import json

from oslo_log import log as logging

from nova.conf import network as network_conf
from nova import exception
from nova import objects

LOG = logging.getLogger(__name__)

EXTERNAL_EVENTS_PATH = '/os-server-external-events'


class ComputeAPIEventSender:

    def __init__(self, compute_api):
        self.compute_api = compute_api

    def send(self, context, events):
        try:
            results = self.compute_api.external_instance_event(context,
                                                               events)
        except Exception:
            LOG.exception('Could not send %d external events', len(events))
            return False
        for result in results or ():
            if getattr(result, 'code', 200) != 200:
                LOG.warning('External event %(name)s-%(tag)s not delivered '
                            '(%(code)s)',
                            {'name': result.name, 'tag': result.tag,
                             'code': result.code},
                            instance_uuid=result.instance_uuid)
        return True


class RPCEventSender:
    """Casts events straight to ``host`` (this agent's own compute)."""

    def __init__(self, host, compute_rpcapi):
        self.host = host
        self.compute_rpcapi = compute_rpcapi

    def send(self, context, events):
        instances = {}
        deliverable = []
        for event in events:
            uuid = event.instance_uuid
            if uuid not in instances:
                try:
                    instances[uuid] = objects.Instance.get_by_uuid(context,
                                                                   uuid)
                except exception.InstanceNotFound:
                    LOG.info('Dropping event %(name)s: instance is gone',
                             {'name': event.name}, instance_uuid=uuid)
                    instances[uuid] = None
            if instances[uuid] is not None:
                deliverable.append(event)
        if not deliverable:
            return True
        try:
            self.compute_rpcapi.external_instance_event(
                context, [i for i in instances.values() if i is not None],
                deliverable, host=self.host)
        except Exception:
            LOG.exception('Could not cast %d external events to %s',
                          len(deliverable), self.host)
            return False
        return True


class StaticToken:
    """The same token every time (``[network] events_api_token``)."""

    def __init__(self, token):
        self.token = token

    def get(self):
        return self.token

    def invalidate(self):
        pass


class KeystoneToken:
    """Tokens from Keystone with the ``[network]`` credentials
    (``auth_type`` and its plugin's options), renewed as they expire and
    after the API refused one."""

    def __init__(self, conf, group='network'):
        # Imported here, not at the top: only Keystone credentials need
        # them (nova.conf.network says why).
        from keystoneauth1 import exceptions as ks_exceptions
        from keystoneauth1 import loading as ks_loading
        from keystoneauth1 import session as ks_session
        network_conf.register_keystoneauth_opts(conf, group)
        self._errors = ks_exceptions.ClientException
        try:
            self._auth = ks_loading.load_auth_from_conf_options(conf, group)
        except self._errors as e:
            raise exception.InvalidConfiguration(
                reason='[%s] Keystone credentials for the events: %s'
                       % (group, e))
        self._session = ks_session.Session(auth=self._auth)

    def get(self):
        try:
            return self._session.get_token()
        except self._errors as e:
            raise OSError('no Keystone token for the events: %s' % e)

    def invalidate(self):
        self._auth.invalidate()


class RESTEventSender:
    """``POST {url}/os-server-external-events`` with ``X-Auth-Token``
    (``token``: a string, or a ``StaticToken``/``KeystoneToken``)."""

    def __init__(self, url, token, timeout=10.0):
        self.url = url.rstrip('/') + EXTERNAL_EVENTS_PATH
        self.tokens = (StaticToken(token) if isinstance(token, str)
                       else token)
        self.timeout = timeout

    @staticmethod
    def body(events):
        return {'events': [{'server_uuid': e.instance_uuid,
                            'name': e.name, 'tag': e.tag,
                            'status': e.status} for e in events]}

    def send(self, context, events):
        # Imported here, not at the top: only a nova-compute that posts
        # its events to nova-api sends with them (about 0.4 MiB in a
        # process; the others cast over RPC or call the API in process).
        import urllib.error
        import urllib.request

        try:
            headers = {'Content-Type': 'application/json',
                       'Accept': 'application/json',
                       'X-Auth-Token': self.tokens.get()}
        except OSError as e:
            LOG.warning('Could not post %(count)d events: %(err)s',
                        {'count': len(events), 'err': e})
            return False
        if context is not None and context.request_id:
            headers['X-OpenStack-Request-ID'] = context.request_id
        request = urllib.request.Request(
            self.url, data=json.dumps(self.body(events)).encode(),
            headers=headers, method='POST')
        try:
            with urllib.request.urlopen(request,
                                        timeout=self.timeout) as response:
                status = response.status
        except urllib.error.HTTPError as e:
            if e.code == 401:
                # Revoked or expired early: a new one for the retry.
                self.tokens.invalidate()
            # 404: none of the instances exists any more; nothing to retry.
            LOG.warning('%(url)s answered %(code)s to %(count)d events',
                        {'url': self.url, 'code': e.code,
                         'count': len(events)})
            return e.code == 404
        except (OSError, ValueError) as e:
            LOG.warning('Could not post %(count)d events to %(url)s: '
                        '%(err)s', {'count': len(events), 'url': self.url,
                                    'err': e})
            return False
        # 207: some events were refused (their instance is gone).
        LOG.debug('Posted %(count)d events to %(url)s: %(status)s',
                  {'count': len(events), 'url': self.url, 'status': status})
        return True


def build_sender(conf, host, compute_api=None, compute_rpcapi=None):
    """The sender for this process: the compute API when given, else REST
    when ``[network] events_api_url`` is set, else RPC to ``host`` through
    ``compute_rpcapi`` (the caller's ``nova.compute.rpcapi.ComputeAPI``:
    the network layer sits below the compute layer and is handed its
    client, never imports it)."""
    if compute_api is not None:
        return ComputeAPIEventSender(compute_api)
    if conf.network.events_api_url:
        # [network] auth_type is keystoneauth's, registered where it is
        # read (it imports keystoneauth1).
        network_conf.register_keystoneauth_opts(conf)
        token = (KeystoneToken(conf) if conf.network.auth_type
                 else StaticToken(conf.network.events_api_token))
        return RESTEventSender(conf.network.events_api_url, token)
    if compute_rpcapi is None:
        raise ValueError('events go over RPC here ([network] '
                         'events_api_url is unset): pass compute_rpcapi')
    return RPCEventSender(host, compute_rpcapi)
