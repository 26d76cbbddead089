"""``/flavors``: the sizes a server can have (read only here).

By microversion: ``description`` from 2.55 (flavors here have none:
null), ``extra_specs`` in the detailed views from 2.61 (none here: {}),
``swap`` 0 instead of "" for no swap from 2.75.

The lists page as the reference's do: ``limit`` (at most ``[api]
max_limit``) and ``marker`` (the last flavor id seen; one that is not
listed is a 400), with ``flavors_links`` holding the ``next`` page's link
when a page is full.
"""

import re

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import exception
from nova import objects

RULE = 'os_compute_api:os-flavors'
_FLAVOR_ID_RE = re.compile(r'^[A-Za-z0-9_.-]{1,255}$')


def _basic(req, flavor) -> dict:
    view = {'id': flavor.flavorid, 'name': flavor.name,
            'links': common.links(req, 'flavors', flavor.flavorid)}
    if req.is_version('2.55'):
        view['description'] = None
    return view


def _detail(req, flavor) -> dict:
    view = _basic(req, flavor)
    view.update({
        'ram': flavor.memory_mb,
        'vcpus': flavor.vcpus,
        'disk': flavor.root_gb,
        'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral_gb,
        # The reference shows no swap as "" before 2.75, 0 from 2.75.
        'swap': flavor.swap or (0 if req.is_version('2.75') else ''),
        'rxtx_factor': 1.0,
        'os-flavor-access:is_public': True,
        'OS-FLV-DISABLED:disabled': False,
    })
    if req.is_version('2.61'):
        view['extra_specs'] = {}
    return view


def _int_filter(req, name):
    text = common.query_value(req, name)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid %s filter [%s]' % (name, text))


class FlavorsController:
    def __init__(self, max_limit: int):
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/flavors', self.index),
            Route('GET', '/flavors/detail', self.detail),
            Route('GET', '/flavors/{flavor_id}', self.show),
        ]

    def _flavors(self, req):
        policy.authorize(req.context, RULE)
        min_ram = _int_filter(req, 'minRam')
        min_disk = _int_filter(req, 'minDisk')
        flavors = objects.Flavor.get_all(req.context)
        if min_ram is not None:
            flavors = [f for f in flavors if f.memory_mb >= min_ram]
        if min_disk is not None:
            flavors = [f for f in flavors if f.root_gb >= min_disk]
        return flavors

    def _page(self, req, collection: str, view) -> dict:
        flavors = self._flavors(req)
        limit, marker = common.limit_and_marker(req, self.max_limit)
        page = common.paginate(flavors, limit, marker,
                               key=lambda f: f.flavorid)
        shown = {'flavors': [view(req, f) for f in page]}
        links = common.collection_links(req, collection, page, limit,
                                        key=lambda f: f.flavorid)
        if links:
            shown['flavors_links'] = links
        return shown

    def index(self, req):
        return self._page(req, 'flavors', _basic)

    def detail(self, req):
        return self._page(req, 'flavors/detail', _detail)

    def show(self, req, flavor_id):
        policy.authorize(req.context, RULE)
        if not _FLAVOR_ID_RE.match(flavor_id):
            raise exception.FlavorNotFound(flavor_id='(invalid)')
        flavor = objects.Flavor.get_by_flavor_id(req.context, flavor_id)
        return {'flavor': _detail(req, flavor)}
