"""``/os-aggregates``: administrators group compute hosts, give the groups
metadata, and so put hosts in availability zones.

List, create (``name``, ``availability_zone``), show, update, delete
(200, empty), and ``POST /os-aggregates/{id}/action`` with one of
``add_host``, ``remove_host``, ``set_metadata``. Aggregates are named by
integer id at every microversion; from 2.41 they show their ``uuid``.
The rules keeping each host in one zone are ``nova.compute.aggregates``'.
"""

from nova.api.openstack.compute.schemas import aggregates as schemas
from nova.api.openstack.compute.views import aggregates as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova.compute import aggregates as aggregates_api
from nova import exception

RULE = 'os_compute_api:os-aggregates:%s'


# The largest id the column holds (PostgreSQL's integer; SQLite's is
# larger, and raises OverflowError past 64 bits).
_MAX_ID = 2 ** 31 - 1


def _aggregate_id(value: str) -> int:
    """The id in a path: an integer (400 otherwise, as the reference); one
    no row can have is 404, never a database error."""
    try:
        number = int(value)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid aggregate id %s: it must be an integer.'
            % value[:255])
    if not 0 < number <= _MAX_ID:
        raise exception.AggregateNotFound(aggregate_id=number)
    return number


class AggregatesController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-aggregates', self.index),
            Route('POST', '/os-aggregates', self.create,
                  body=schemas.create),
            Route('GET', '/os-aggregates/{aggregate_id}', self.show),
            Route('PUT', '/os-aggregates/{aggregate_id}', self.update,
                  body=schemas.update),
            Route('DELETE', '/os-aggregates/{aggregate_id}', self.delete),
            Route('POST', '/os-aggregates/{aggregate_id}/action',
                  self.action, body=schemas.action),
        ]

    def index(self, req):
        policy.authorize(req.context, RULE % 'index')
        return {'aggregates': [
            views.shown(req, a)
            for a in aggregates_api.get_all(req.context)]}

    def create(self, req):
        policy.authorize(req.context, RULE % 'create')
        body = req.validated_body()['aggregate']
        created = aggregates_api.create(req.context, body['name'],
                                        body.get('availability_zone'))
        return {'aggregate': views.created(req, created)}

    def show(self, req, aggregate_id):
        policy.authorize(req.context, RULE % 'show')
        return {'aggregate': views.shown(req, aggregates_api.get(
            req.context, _aggregate_id(aggregate_id)))}

    def update(self, req, aggregate_id):
        policy.authorize(req.context, RULE % 'update')
        body = req.validated_body()['aggregate']
        zone = body.get('availability_zone', aggregates_api.KEEP)
        updated = aggregates_api.update(
            req.context, _aggregate_id(aggregate_id),
            name=body.get('name'), zone=zone)
        return {'aggregate': views.shown(req, updated)}

    def delete(self, req, aggregate_id):
        policy.authorize(req.context, RULE % 'delete')
        aggregates_api.delete(req.context, _aggregate_id(aggregate_id))
        return wsgi.Result(None, status=200)

    def action(self, req, aggregate_id):
        body = req.validated_body()
        ((name, args),) = body.items()
        policy.authorize(req.context, RULE % name)
        aggregate_id_int = _aggregate_id(aggregate_id)
        if name == 'set_metadata':
            changed = aggregates_api.set_metadata(
                req.context, aggregate_id_int, args['metadata'])
        else:
            act = (aggregates_api.add_host if name == 'add_host'
                   else aggregates_api.remove_host)
            changed = act(req.context, aggregate_id_int, args['host'])
        return {'aggregate': views.shown(req, changed)}
