"""``GET /os-migrations``: the migration records (evacuations here).

Admin only. Filters of the reference: ``host`` (source or destination),
``status``, ``instance_uuid``, ``source_compute``, ``migration_type``.

By microversion: ``migration_type`` from 2.23; ``uuid`` and the
pagination of the reference (``limit``, ``marker``: a migration's uuid,
``changes-since`` on ``updated_at``) from 2.59, ``changes-before`` from
2.66; from 2.80 ``user_id`` and ``project_id`` (of whoever requested the
evacuation: its instance action's) and filters on them.
"""

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import objects

RULE = 'os_compute_api:os-migrations:index'


def _requester(context, migration) -> tuple[str | None, str | None]:
    """(user_id, project_id) of the request that made ``migration``: the
    instance's latest ``evacuate`` action started no later than it."""
    found = None
    for action in objects.InstanceAction.get_by_instance_uuid(
            context, migration.instance_uuid):
        if action.action != 'evacuate':
            continue
        if (migration.created_at is not None
                and action.start_time is not None
                and action.start_time > migration.created_at):
            continue
        found = action
        break           # newest first
    if found is None:
        return None, None
    return found.user_id, found.project_id


def _view(req, migration, requester=(None, None)) -> dict:
    view = {
        'id': migration.id,
        'instance_uuid': migration.instance_uuid,
        'source_compute': migration.source_compute,
        'source_node': migration.source_node,
        'dest_compute': migration.dest_compute,
        'dest_node': migration.dest_node,
        # The reference's dest_host is the target's address, which this
        # deployment does not record.
        'dest_host': None,
        'status': migration.status,
        'old_instance_type_id': None,
        'new_instance_type_id': None,
        'created_at': common.dbtime(migration.created_at),
        'updated_at': common.dbtime(migration.updated_at),
    }
    if req.is_version('2.23'):
        view['migration_type'] = migration.migration_type
    if req.is_version('2.59'):
        view['uuid'] = migration.uuid
    if req.is_version('2.80'):
        view['user_id'], view['project_id'] = requester
    return view


class MigrationsController:
    def __init__(self, max_limit: int):
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [Route('GET', '/os-migrations', self.index)]

    def index(self, req):
        policy.authorize(req.context, RULE)
        filters = {name: common.query_value(req, name)
                   for name in ('status', 'instance_uuid', 'source_compute',
                                'migration_type')}
        filters = {k: v for k, v in filters.items() if v is not None}
        host = common.query_value(req, 'host')
        if host is None:
            found = objects.Migration.get_by_filters(req.context, **filters)
        else:
            by_id = {}
            for side in ('source_compute', 'dest_compute'):
                if side in filters and filters[side] != host:
                    continue
                query = dict(filters, **{side: host})
                for migration in objects.Migration.get_by_filters(
                        req.context, **query):
                    by_id[migration.id] = migration
            found = list(by_id.values())
        # Newest first, as the reference lists them.
        found.sort(key=lambda m: (m.created_at is not None, m.created_at,
                                  m.id), reverse=True)
        if not req.is_version('2.59'):
            limit, _marker = common.limit_and_marker(req, self.max_limit)
            return {'migrations': [_view(req, m) for m in found[:limit]]}
        window = common.changes_window(req, '2.59')
        found = [m for m in found if window.contains(m.updated_at)]
        requesters = {}
        if req.is_version('2.80'):
            requesters = {m.id: _requester(req.context, m) for m in found}
            for index, name in enumerate(('user_id', 'project_id')):
                wanted = common.query_value(req, name)
                if wanted is not None:
                    found = [m for m in found
                             if requesters[m.id][index] == wanted]
        limit, marker = common.limit_and_marker(req, self.max_limit)
        found = common.paginate(found, limit, marker, key=lambda m: m.uuid)
        return {'migrations': [_view(req, m, requesters.get(m.id,
                                                            (None, None)))
                               for m in found]}
