"""``/os-services``: list services, enable/disable them, force them down.

Admin only. Forcing a compute service down is how an operator tells the
system its host is fenced, which evacuate requires (unless the service's
heartbeats have stopped on their own).

By microversion: services are named by integer id below 2.53 and by UUID
from 2.53; ``forced_down`` appears from 2.11; the ``PUT
/os-services/{enable,disable,disable-log-reason,force-down}`` forms serve
2.1 (force-down from 2.11) to 2.52, ``PUT /os-services/{service_id}``
from 2.53.

A service shows exactly the reference's fields at each microversion,
since strict clients (Tempest's schemas) refuse any other; what this
project records about a compute host's disk leases is its own resource,
``GET /os-disk-leases`` (``disk_leases.py`` here).
"""

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import services as schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import validation
from nova.compute import availability_zones
from nova.conf import CONF
from nova import exception
from nova.model import binaries
from nova import objects

COMPUTE_BINARY = binaries.COMPUTE
LIST_RULE = 'os_compute_api:os-services:list'
UPDATE_RULE = 'os_compute_api:os-services:update'


def _view(req, service, zones: availability_zones.ZoneMap) -> dict:
    view = {
        'id': service.uuid if req.is_version('2.53') else service.id,
        'binary': service.binary,
        'host': service.host,
        'zone': zones.of_service(service),
        'status': 'disabled' if service.disabled else 'enabled',
        'state': 'up' if service.is_up(CONF.service_down_time) else 'down',
        # The reference's updated_at is the time of the last heartbeat.
        'updated_at': common.dbtime(service.last_seen_up
                                    or service.updated_at),
        'disabled_reason': service.disabled_reason,
    }
    if req.is_version('2.11'):
        view['forced_down'] = service.forced_down
    return view


class ServicesController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-services', self.index),
            Route('PUT', '/os-services/enable', self.enable,
                  max_version='2.52', body=schemas.service_update),
            Route('PUT', '/os-services/disable', self.disable,
                  max_version='2.52', body=schemas.service_update),
            Route('PUT', '/os-services/disable-log-reason',
                  self.disable_log_reason, max_version='2.52',
                  body=schemas.service_disable_log_reason),
            Route('PUT', '/os-services/force-down', self.force_down,
                  min_version='2.11', max_version='2.52',
                  body=schemas.service_force_down),
            Route('PUT', '/os-services/{service_id}', self.update,
                  min_version='2.53', body=schemas.service_update_v253),
        ]

    def index(self, req):
        policy.authorize(req.context, LIST_RULE)
        binary = common.query_value(req, 'binary')
        host = common.query_value(req, 'host')
        services = objects.Service.get_all(req.context, binary=binary)
        if host is not None:
            services = [s for s in services if s.host == host]
        zones = availability_zones.ZoneMap.read(req.context)
        return {'services': [_view(req, s, zones) for s in services]}

    # -- 2.1 to 2.52: by host and binary -------------------------------------

    def _by_host_and_binary(self, req):
        policy.authorize(req.context, UPDATE_RULE)
        body = req.validated_body()
        service = objects.Service.get_by_host_and_binary(
            req.context, body['host'], body['binary'])
        return body, service

    def enable(self, req):
        _body, service = self._by_host_and_binary(req)
        service.disabled = False
        service.disabled_reason = None
        service.save()
        return {'service': {'host': service.host, 'binary': service.binary,
                            'status': 'enabled'}}

    def disable(self, req):
        _body, service = self._by_host_and_binary(req)
        service.disabled = True
        service.save()
        return {'service': {'host': service.host, 'binary': service.binary,
                            'status': 'disabled'}}

    def disable_log_reason(self, req):
        body, service = self._by_host_and_binary(req)
        service.disabled = True
        service.disabled_reason = body['disabled_reason']
        service.save()
        return {'service': {'host': service.host, 'binary': service.binary,
                            'status': 'disabled',
                            'disabled_reason': service.disabled_reason}}

    def force_down(self, req):
        body, service = self._by_host_and_binary(req)
        service.forced_down = validation.to_bool(body['forced_down'])
        service.save()
        return {'service': {'host': service.host, 'binary': service.binary,
                            'forced_down': service.forced_down}}

    # -- 2.53: by UUID -------------------------------------------------------

    def update(self, req, service_id):
        policy.authorize(req.context, UPDATE_RULE)
        if not common.uuid_like(service_id):
            raise exception.ValidationError(
                detail='Invalid uuid %s' % service_id)
        body = req.validated_body()
        status = body.get('status')
        reason = body.get('disabled_reason')
        if reason is not None and status != 'disabled':
            raise exception.ValidationError(
                detail='Specifying a disabled reason is only supported when '
                       'the status is disabled.')
        service = self._get_by_uuid(req.context, service_id)
        if service.binary != COMPUTE_BINARY:
            raise exception.ValidationError(
                detail='Updating a %s service is not supported. Only '
                       'nova-compute services can be updated.'
                       % service.binary)
        if status is not None:
            service.disabled = status == 'disabled'
            service.disabled_reason = reason if service.disabled else None
        if 'forced_down' in body:
            service.forced_down = validation.to_bool(body['forced_down'])
        service.save()
        return {'service': _view(
            req, service, availability_zones.ZoneMap.read(req.context))}

    @staticmethod
    def _get_by_uuid(context, service_uuid):
        for service in objects.Service.get_all(context):
            if service.uuid == service_uuid:
                return service
        raise exception.ServiceNotFound(service_id=service_uuid)
