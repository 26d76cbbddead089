"""``/flavors``: the sizes a server can have (read only here).

By microversion: ``description`` from 2.55 (flavors here have none:
null), ``extra_specs`` in the detailed views from 2.61 (none here: {}),
``swap`` 0 instead of "" for no swap from 2.75.
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

    def index(self, req):
        return {'flavors': [_basic(req, f) for f in self._flavors(req)]}

    def detail(self, req):
        return {'flavors': [_detail(req, f) for f in self._flavors(req)]}

    def show(self, req, flavor_id):
        policy.authorize(req.context, RULE)
        if not _FLAVOR_ID_RE.match(flavor_id):
            raise exception.FlavorNotFound(flavor_id='(invalid)')
        flavor = objects.Flavor.get_by_flavor_id(req.context, flavor_id)
        return {'flavor': _detail(req, flavor)}
