"""``/os-server-groups``: a project's server groups: list, create, show,
delete.

A group has one policy: ``affinity`` or ``anti-affinity`` (hard: a
server is placed, or evacuated, only where the policy allows, else it is
not placed), and from 2.15 ``soft-affinity`` or ``soft-anti-affinity``
(preferred, never refused). A server joins a group when it is created
with the ``group`` scheduler hint, and leaves it when it is deleted.

By microversion: 2.13 shows ``project_id`` and ``user_id``; 2.64 takes
and shows ``policy`` and ``rules`` (``max_server_per_host``, for
anti-affinity) instead of ``policies`` and ``metadata``; from 2.75 an
unknown query parameter of the list is a 400. The list pages with
``limit`` and ``offset``; ``all_projects`` lists every project's groups
for administrators (others get their own). Create answers 200, delete
204.
"""

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import server_groups as schemas
from nova.api.openstack.compute.views import server_groups as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova import exception
from nova.objects import instance_group as group_obj

RULE = 'os_compute_api:os-server-groups:%s'
_KNOWN_QUERY = frozenset(('all_projects', 'limit', 'offset'))


def _non_negative(req, name: str, default: int) -> int:
    text = common.query_value(req, name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise exception.ValidationError(
            detail='%s param must be an integer' % name)
    if value < 0:
        raise exception.ValidationError(
            detail='%s param must be positive' % name)
    return value


_MOST_SERVERS_PER_HOST = 2 ** 31 - 1


def _policy_and_rules(req, body: dict) -> tuple[str, int | None]:
    if not req.is_version('2.64'):
        return body['policies'][0], None
    rules = body.get('rules') or {}
    if rules and body['policy'] != group_obj.ANTI_AFFINITY:
        raise exception.ValidationError(
            detail='Only anti-affinity policy supports rules.')
    most = rules.get('max_server_per_host')
    if most is not None and int(most) > _MOST_SERVERS_PER_HOST:
        # A string of digits passes the schema whatever its length; the
        # column holds a 32-bit integer, as Nova's.
        raise exception.ValidationError(
            detail='max_server_per_host must be at most %d.'
                   % _MOST_SERVERS_PER_HOST)
    return body['policy'], None if most is None else int(most)


class ServerGroupsController:
    def __init__(self, max_limit: int):
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-server-groups', self.index),
            Route('POST', '/os-server-groups', self.create,
                  body=schemas.create_for),
            Route('GET', '/os-server-groups/{group_id}', self.show),
            Route('DELETE', '/os-server-groups/{group_id}', self.delete),
        ]

    @staticmethod
    def _get(req, group_id: str, rule: str):
        """The group, if the caller may ``rule`` it (403 otherwise: the
        reference checks against the group's project)."""
        common.require_uuid(group_id, exception.InstanceGroupNotFound(
            group_uuid=group_id))
        group = group_obj.InstanceGroup.get_by_uuid(req.context, group_id)
        policy.authorize(req.context, RULE % rule,
                         target_project_id=group.project_id)
        return group

    def index(self, req):
        context = req.context
        policy.authorize(context, RULE % 'index')
        common.refuse_unknown_query(req, _KNOWN_QUERY)
        project_id: str | None = context.project_id
        # The reference: the parameter's presence asks, the policy
        # decides; a caller it refuses gets their own project's.
        if 'all_projects' in req.GET and policy.check(
                context, RULE % 'index:all_projects'):
            project_id = None
        groups = group_obj.InstanceGroup.get_all(context, project_id)
        offset = _non_negative(req, 'offset', 0)
        # As the reference: no limit, or 0, is the largest page.
        limit = min(_non_negative(req, 'limit', 0) or self.max_limit,
                    self.max_limit)
        page = groups[offset:offset + limit]
        return {'server_groups': [views.shown(req, g) for g in page]}

    def create(self, req):
        context = req.context
        policy.authorize(context, RULE % 'create')
        body = req.validated_body()['server_group']
        group_policy, most = _policy_and_rules(req, body)
        group = group_obj.InstanceGroup(
            name=body['name'], project_id=context.project_id,
            user_id=context.user_id, policy=group_policy,
            max_server_per_host=most).create()
        return {'server_group': views.shown(req, group)}

    def show(self, req, group_id):
        return {'server_group': views.shown(
            req, self._get(req, group_id, 'show'))}

    def delete(self, req, group_id):
        self._get(req, group_id, 'delete').destroy(req.context)
        return wsgi.Result(None, status=204)
