"""``/os-simple-tenant-usage``: what projects' servers used over a period
(``start``, ``end``; now when left out), from the instance rows
(``nova.compute.tenant_usage``).

The list (admin) gives every project's totals, with each server's usage
when ``detailed=1``; show gives one project's, with its servers (its own
members may read it). From 2.40 ``limit`` and ``marker`` (a server's
UUID) page over the servers, with ``tenant_usages_links`` /
``tenant_usage_links`` when a page is full.
"""

import datetime

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.compute import tenant_usage
from nova import exception
from nova.objects import base as obj_base

RULE = 'os_compute_api:os-simple-tenant-usage:%s'
# The forms Nova accepts for start and end.
_FORMATS = ('%Y-%m-%dT%H:%M:%S', '%Y-%m-%dT%H:%M:%S.%f',
            '%Y-%m-%d %H:%M:%S.%f')


def _time(req, name: str, now: datetime.datetime) -> datetime.datetime:
    text = common.query_value(req, name)
    if text is None:
        return now
    return common.parse_time(
        text, _FORMATS, 'Invalid %s time: %s is not a date-time.'
        % (name, text[:100]))


def _period(req) -> tuple[datetime.datetime, datetime.datetime]:
    now = obj_base.utcnow().replace(tzinfo=None)
    start, stop = _time(req, 'start', now), _time(req, 'end', now)
    if start > stop or (start == stop and 'start' in req.GET):
        raise exception.ValidationError(
            detail='Invalid start time. The start time cannot occur after '
                   'the end time.')
    return start, stop


def _server_view(s: tenant_usage.ServerUsage) -> dict:
    return {
        'instance_id': s.instance_id, 'name': s.name,
        'tenant_id': s.project_id, 'flavor': s.flavor, 'vcpus': s.vcpus,
        'memory_mb': s.memory_mb, 'local_gb': s.local_gb,
        'hours': s.hours, 'state': s.state, 'uptime': s.uptime,
        'started_at': s.started_at.isoformat(),
        'ended_at': None if s.ended_at is None else s.ended_at.isoformat(),
    }


def _usage_view(usage: tenant_usage.TenantUsage, start, stop,
                with_servers: bool) -> dict:
    view = {
        'tenant_id': usage.project_id,
        'start': start.isoformat(), 'stop': stop.isoformat(),
        'total_hours': usage.total_hours,
        'total_vcpus_usage': usage.total_vcpus_usage,
        'total_memory_mb_usage': usage.total_memory_mb_usage,
        'total_local_gb_usage': usage.total_local_gb_usage,
    }
    if with_servers:
        view['server_usages'] = [_server_view(s) for s in usage.servers]
    return view


class SimpleTenantUsageController:
    def __init__(self, max_limit: int):
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-simple-tenant-usage', self.index),
            Route('GET', '/os-simple-tenant-usage/{tenant_id}', self.show),
        ]

    def _page(self, req, usages, collection: str):
        """The usages of one page of servers (2.40), and its links."""
        if not req.is_version('2.40'):
            return usages, []
        servers = [s for u in usages for s in u.servers]
        limit, marker = common.limit_and_marker(req, self.max_limit)
        page = common.paginate(servers, limit, marker,
                               key=lambda s: s.instance_id)
        kept = {s.instance_id for s in page}
        paged = [tenant_usage.TenantUsage(
            project_id=u.project_id,
            servers=tuple(s for s in u.servers if s.instance_id in kept))
            for u in usages]
        links = common.collection_links(req, collection, page, limit,
                                        key=lambda s: s.instance_id)
        return [u for u in paged if u.servers], links

    def index(self, req):
        # NOTE: the router drops a trailing slash; here it means an empty
        # tenant id (show of ''), which Nova answers 404, not the list.
        if req.path.endswith('/'):
            raise exception.NotFound()
        policy.authorize(req.context, RULE % 'list')
        start, stop = _period(req)
        detailed = common.query_value(req, 'detailed') == '1'
        usages, links = self._page(
            req, tenant_usage.by_project(req.context, start, stop),
            'os-simple-tenant-usage')
        shown = {'tenant_usages': [_usage_view(u, start, stop, detailed)
                                   for u in usages]}
        if links:
            shown['tenant_usages_links'] = links
        return shown

    def show(self, req, tenant_id):
        policy.authorize(req.context, RULE % 'show',
                         target_project_id=tenant_id)
        start, stop = _period(req)
        usages, links = self._page(
            req, tenant_usage.by_project(req.context, start, stop,
                                         project_id=tenant_id),
            'os-simple-tenant-usage/%s' % tenant_id)
        shown: dict = {'tenant_usage': (
            _usage_view(usages[0], start, stop, True) if usages else {})}
        if links:
            shown['tenant_usage_links'] = links
        return shown
