"""``/os-hypervisors``: the compute nodes, their figures and servers.

Admin only. List, detail, show and statistics read the database
(``nova.compute.hypervisors``); uptime asks the node's compute host over
RPC.

By microversion: ``limit``/``marker`` page the lists from 2.33; from 2.53
ids are UUIDs, the lists take ``hypervisor_hostname_pattern`` and
``with_servers`` (show takes ``with_servers``), an unknown query
parameter is a 400, and ``/{pattern}/search`` and ``/{pattern}/servers``
are gone; from 2.88 statistics and uptime are gone (show gives
``uptime``).
"""

from nova.api.openstack import common
from nova.api.openstack.compute.views import hypervisors as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import validation
from nova.api.openstack import wsgi
from nova.compute import hypervisors
from nova import exception

RULE = 'os_compute_api:os-hypervisors:%s'

_LIST_QUERY_253 = {'limit', 'marker', 'hypervisor_hostname_pattern',
                   'with_servers'}
_SHOW_QUERY_253 = {'with_servers'}


def _check_query(req, known: set[str]) -> None:
    """From 2.53: only ``known`` parameters, each given once, and
    ``with_servers`` a boolean (the reference's query schemas)."""
    if not req.is_version('2.53'):
        return
    common.refuse_unknown_query(req, known, since='2.53')
    for name in known:
        if len(req.GET.getall(name)) > 1:
            raise exception.ValidationError(
                detail='Invalid input for query parameter %s: it must be '
                       'given once.' % name)
    with_servers = common.query_value(req, 'with_servers')
    if with_servers is not None:
        validation.validate({'properties': {'with_servers':
                                            validation.boolean}},
                            {'with_servers': with_servers})


def _with_servers(req) -> bool:
    if not req.is_version('2.53'):
        return False
    value = common.query_value(req, 'with_servers')
    return value is not None and validation.to_bool(value)


def _matching(context, pattern: str) -> list[hypervisors.Hypervisor]:
    found = hypervisors.get_all(context, hostname_pattern=pattern)
    if not found:
        raise exception.HypervisorNotFound(hypervisor_id=pattern)
    return found


class HypervisorsController:
    def __init__(self, compute_api, max_limit: int):
        self.compute_api = compute_api
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-hypervisors', self.index),
            Route('GET', '/os-hypervisors/detail', self.detail),
            # Served at every version so that 2.88 answers 404 here, not
            # a 400 for "statistics" as a hypervisor id.
            Route('GET', '/os-hypervisors/statistics', self.statistics),
            Route('GET', '/os-hypervisors/{hypervisor_id}', self.show),
            Route('GET', '/os-hypervisors/{hypervisor_id}/uptime',
                  self.uptime, max_version='2.87'),
            Route('GET', '/os-hypervisors/{pattern}/search', self.search,
                  max_version='2.52'),
            Route('GET', '/os-hypervisors/{pattern}/servers', self.servers,
                  max_version='2.52'),
        ]

    def _list(self, req, detail: bool):
        _check_query(req, _LIST_QUERY_253)
        pattern = (common.query_value(req, 'hypervisor_hostname_pattern')
                   if req.is_version('2.53') else None)
        if pattern is not None:
            if 'limit' in req.GET or 'marker' in req.GET:
                raise exception.ValidationError(
                    detail='Paging over hypervisors with the '
                           'hypervisor_hostname_pattern query parameter '
                           'is not supported.')
            found = _matching(req.context, pattern)
        else:
            found = hypervisors.get_all(req.context)
        with_servers = _with_servers(req)
        collection = 'os-hypervisors/detail' if detail else 'os-hypervisors'
        links = []
        if req.is_version('2.33') and pattern is None:
            key = ((lambda h: h.uuid) if req.is_version('2.53')
                   else (lambda h: str(h.id)))
            limit, marker = common.limit_and_marker(req, self.max_limit)
            found = common.paginate(found, limit, marker, key=key)
            links = common.collection_links(req, collection, found, limit,
                                            key=key)
        shown = {'hypervisors': [views.shown(req, h, detail, with_servers)
                                 for h in found]}
        if links:
            shown['hypervisors_links'] = links
        return shown

    def index(self, req):
        policy.authorize(req.context, RULE % 'list')
        return self._list(req, detail=False)

    def detail(self, req):
        policy.authorize(req.context, RULE % 'list-detail')
        return self._list(req, detail=True)

    def _get(self, req, hypervisor_id: str) -> hypervisors.Hypervisor:
        if req.is_version('2.53') and not common.uuid_like(hypervisor_id):
            raise exception.ValidationError(
                detail='Invalid uuid %s' % hypervisor_id[:100])
        return hypervisors.get(req.context, hypervisor_id,
                               by_uuid=req.is_version('2.53'))

    def show(self, req, hypervisor_id):
        policy.authorize(req.context, RULE % 'show')
        _check_query(req, _SHOW_QUERY_253)
        hypervisor = self._get(req, hypervisor_id)
        view = views.shown(req, hypervisor, True, _with_servers(req))
        if req.is_version('2.88'):
            view['uptime'] = self._uptime_or_none(req, hypervisor)
        return {'hypervisor': view}

    def statistics(self, req):
        if req.is_version('2.88'):
            raise wsgi.HTTPError(404, 'The resource could not be found.')
        policy.authorize(req.context, RULE % 'statistics')
        return views.statistics(hypervisors.statistics(req.context))

    def _uptime_or_none(self, req, hypervisor) -> str | None:
        # Show (2.88) gives what the host says, or null when it cannot.
        try:
            return self.compute_api.get_host_uptime(req.context,
                                                    hypervisor.host)
        except (NotImplementedError, exception.ComputeServiceUnavailable):
            return None

    def uptime(self, req, hypervisor_id):
        policy.authorize(req.context, RULE % 'uptime')
        hypervisor = self._get(req, hypervisor_id)
        try:
            uptime = self.compute_api.get_host_uptime(req.context,
                                                      hypervisor.host)
        except NotImplementedError:
            raise wsgi.HTTPError(
                501, 'Virt driver does not implement uptime function.')
        view = views.shown(req, hypervisor, False)
        view['uptime'] = uptime
        return {'hypervisor': view}

    def search(self, req, pattern):
        policy.authorize(req.context, RULE % 'search')
        return {'hypervisors': [views.shown(req, h, False)
                                for h in _matching(req.context, pattern)]}

    def servers(self, req, pattern):
        policy.authorize(req.context, RULE % 'servers')
        return {'hypervisors': [views.shown(req, h, False, with_servers=True)
                                for h in _matching(req.context, pattern)]}
