"""``/os-host-evacuations``: evacuate every instance of a failed host
(this project's own resource; the Compute API has none).

Admin only (``os_compute_api:os-host-evacuations:create``, ``:show``)::

    POST /os-host-evacuations
        {"host_evacuation": {"host": "compute1",
                             "target_host": "compute3"}}   # optional
    -> 202 {"host_evacuation": {"id": ..., "status": "queued", ...}}
    GET /os-host-evacuations              # every run, newest first
    GET /os-host-evacuations/{id}         # one run, one row per instance

The request is checked before anything is recorded: the host's compute
service must be down or forced down (as for a single evacuate: 400
otherwise), a named ``target_host`` must be another compute host whose
service is up (400 otherwise), and no other run of the host may be under
way (409). Then the run is recorded with every
instance of the host ``not-started`` and cast to a conductor, which runs
it (``nova/conductor/host_evacuation.py``). Each instance's row says its
``outcome`` (``done``, ``failed``, ``refused``, ``in-progress``,
``not-started``), the ``host`` it is on, the targets tried (each attempt
with its outcome and migration) and a ``message`` saying why it failed.
"""

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import host_evacuations as schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova.conf import CONF
from nova import exception
from nova import objects
from nova.objects import base as obj_base
from nova.objects import host_evacuation as run_obj
from nova.objects import service as service_obj

CREATE_RULE = 'os_compute_api:os-host-evacuations:create'
SHOW_RULE = 'os_compute_api:os-host-evacuations:show'


def _instance_view(item) -> dict:
    attempts = item.attempt_list()
    return {
        'uuid': item.instance_uuid,
        'outcome': item.outcome,
        'host': item.host,
        'targets_tried': [a.target for a in attempts],
        'attempts': [{'target': a.target, 'outcome': a.outcome,
                      'migration_uuid': a.migration_uuid,
                      'message': a.message} for a in attempts],
        'message': item.message,
    }


def _view(run, items=None) -> dict:
    view = {
        'id': run.uuid,
        'host': run.source_host,
        'target_host': run.target_host,
        'on_shared_storage': run.on_shared_storage,
        'status': run.status,
        'conductor': run.conductor,
        'skipped_targets': dict(run.skipped_targets or {}),
        'message': run.message,
        'created_at': common.dbtime(run.created_at),
        'updated_at': common.dbtime(run.updated_at),
    }
    if items is not None:
        view['instances'] = [_instance_view(i) for i in items]
    return view


def _compute_service(context, host: str):
    try:
        return objects.Service.get_by_host_and_binary(
            context, host, service_obj.COMPUTE_BINARY)
    except exception.ServiceNotFound:
        raise exception.ComputeHostNotFound(host=host)


def _older_than(when, seconds) -> bool:
    return when is None or (
        obj_base.utcnow() - when).total_seconds() > seconds


def _check_target(context, source: str, target: str) -> None:
    """A named target must be another compute host, up (400 otherwise:
    nothing is recorded)."""
    if target == source:
        raise exception.ValidationError(
            detail='The target host %s is the host being evacuated.'
            % target)
    try:
        service = _compute_service(context, target)
    except exception.ComputeHostNotFound:
        raise exception.ValidationError(
            detail='No compute host named %s.' % target)
    if not service.is_up(CONF.service_down_time):
        raise exception.ComputeServiceUnavailable(host=target)


class HostEvacuationsController:
    def __init__(self, compute_api):
        # Its conductor client is the one every evacuation is cast with.
        self.compute_api = compute_api

    def routes(self) -> list[Route]:
        return [
            Route('POST', '/os-host-evacuations', self.create,
                  body=schemas.host_evacuation_for),
            Route('GET', '/os-host-evacuations', self.index),
            Route('GET', '/os-host-evacuations/{evacuation_id}', self.show),
        ]

    def create(self, req):
        policy.authorize(req.context, CREATE_RULE)
        body = req.validated_body()['host_evacuation']
        source = body['host']
        target = body.get('target_host')
        service = _compute_service(req.context, source)
        if service.is_up(CONF.service_down_time):
            raise exception.ComputeServiceStillUp(host=source)
        if target is not None:
            _check_target(req.context, source, target)
        for other in run_obj.HostEvacuation.get_unended(req.context,
                                                        source):
            # Two runs would race for the same instances (each
            # evacuation is still taken once; the loser is refused). A
            # run no conductor took within service_down_time lost its
            # cast: it never blocks the host.
            if other.status == run_obj.QUEUED and _older_than(
                    other.created_at, CONF.service_down_time):
                continue
            raise exception.HostEvacuationInProgress(
                host=source, status=other.status, evacuation_id=other.uuid)
        run = self.compute_api.host_evacuate(
            req.context, source, target_host=target,
            on_shared_storage=body.get('on_shared_storage'))
        return wsgi.Result({'host_evacuation': _view(run, run.instances())},
                           status=202)

    def index(self, req):
        policy.authorize(req.context, SHOW_RULE)
        return {'host_evacuations': [
            _view(run) for run in run_obj.HostEvacuation.get_all(
                req.context)]}

    def show(self, req, evacuation_id):
        policy.authorize(req.context, SHOW_RULE)
        common.require_uuid(evacuation_id, exception.HostEvacuationNotFound(
            evacuation_id=evacuation_id))
        run = run_obj.HostEvacuation.get_by_uuid(req.context, evacuation_id)
        return {'host_evacuation': _view(run, run.instances())}
