"""``/servers/{server_id}/os-instance-actions[/{request_id}]``.

The audit trail of a server: one action per request that changed it, with
the events its steps recorded. Owners see their servers' actions; events
are shown to administrators, and from 2.51 to owners too; tracebacks only
to administrators. From 2.21 the actions of deleted servers are found.

From 2.58 an action shows ``updated_at`` and the list takes ``limit``,
``marker`` (a request id) and ``changes-since`` (on ``updated_at``); from
2.66 ``changes-before`` too. From 2.62 an event shows ``hostId`` (the
host, hashed per project as a server's ``hostId``) and, to
administrators, ``host``; from 2.84 its ``details`` (what went wrong,
without the traceback): to administrators the exception's message, to
anyone else the sentence stored for the owner, since the message names
hosts and paths (doc/source/cleanup.rst, "Who reads a fault").
"""

import re

from nova.api.openstack import common
from nova.api.openstack.compute.views import servers as server_views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import exception
from nova import objects
from nova.objects import action as action_obj

_REQUEST_ID_RE = re.compile(r'^[A-Za-z0-9_.-]{1,255}$')


def _action_view(req, action) -> dict:
    view = {
        'action': action.action,
        'instance_uuid': action.instance_uuid,
        'request_id': action.request_id,
        'user_id': action.user_id,
        'project_id': action.project_id,
        'start_time': common.dbtime(action.start_time),
        'message': action.message,
    }
    if req.is_version('2.58'):
        view['updated_at'] = common.dbtime(action.updated_at)
    return view


def _event_view(req, event, project_id, with_traceback: bool) -> dict:
    view = {
        'event': event.event,
        'start_time': common.dbtime(event.start_time),
        'finish_time': common.dbtime(event.finish_time),
        'result': event.result,
    }
    if with_traceback:
        view['traceback'] = event.traceback
    if req.is_version('2.62'):
        if with_traceback:
            view['host'] = event.host
        view['hostId'] = server_views.host_id_of(project_id, event.host)
    if req.is_version('2.84'):
        view['details'] = _details(event, with_traceback)
    return view


def _details(event, for_admin: bool) -> str | None:
    """The event's ``details``: the message for administrators, the
    owner's sentence for anyone else (a generic one for a failure
    recorded before those were kept; None for an event that did not
    fail)."""
    if for_admin:
        return event.details
    if event.user_details:
        return event.user_details
    if event.result == action_obj.ERROR:
        return server_views.owner_message(None, 500)
    return None


class InstanceActionsController:
    def __init__(self, max_limit: int):
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/servers/{server_id}/os-instance-actions',
                  self.index),
            Route('GET',
                  '/servers/{server_id}/os-instance-actions/{request_id}',
                  self.show),
        ]

    def _instance(self, req, server_id):
        context = req.context
        not_found = exception.InstanceNotFound(instance_id=server_id)
        common.require_uuid(server_id, not_found)
        read_deleted = 'yes' if req.is_version('2.21') else 'no'
        instance = objects.Instance.get_by_uuid(context, server_id,
                                                read_deleted=read_deleted)
        if not context.is_admin and instance.project_id != context.project_id:
            raise not_found
        return instance

    def index(self, req, server_id):
        policy.authorize(req.context,
                         'os_compute_api:os-instance-actions:list')
        instance = self._instance(req, server_id)
        # Newest first, as the reference lists them.
        actions = objects.InstanceAction.get_by_instance_uuid(
            req.context, instance.uuid)
        if req.is_version('2.58'):
            window = common.changes_window(req, '2.58')
            actions = [a for a in actions if window.contains(a.updated_at)]
            limit, marker = common.limit_and_marker(req, self.max_limit)
            actions = common.paginate(actions, limit, marker,
                                      key=lambda a: a.request_id)
        return {'instanceActions': [_action_view(req, a) for a in actions]}

    def show(self, req, server_id, request_id):
        context = req.context
        policy.authorize(context, 'os_compute_api:os-instance-actions:show')
        instance = self._instance(req, server_id)
        if not _REQUEST_ID_RE.match(request_id):
            raise exception.InstanceActionNotFound(
                request_id='(invalid)', instance_uuid=instance.uuid)
        action = objects.InstanceAction.get_by_request_id(
            context, instance.uuid, request_id)
        if action is None:
            raise exception.InstanceActionNotFound(
                request_id=request_id, instance_uuid=instance.uuid)
        view = _action_view(req, action)
        events_rule = ('os_compute_api:os-instance-actions:events:2.51'
                       if req.is_version('2.51')
                       else 'os_compute_api:os-instance-actions:events')
        if policy.check(context, events_rule, instance.project_id):
            with_traceback = policy.check(
                context, 'os_compute_api:os-instance-actions:events:details')
            project_id = action.project_id or instance.project_id
            view['events'] = [_event_view(req, e, project_id,
                                          with_traceback)
                              for e in action.events]
        return {'instanceAction': view}
