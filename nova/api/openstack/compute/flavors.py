"""``/flavors``: the sizes a server can have; administrators create,
describe and delete them.

By microversion: ``description`` from 2.55 (and ``PUT /flavors/{id}`` to
change it), ``extra_specs`` in the detailed views from 2.61, ``swap`` 0
instead of "" for no swap from 2.75 (``views/flavors.py``).

A private flavor is listed and shown to administrators and to the
projects granted access to it (``flavor_access.py``); other callers get
404 for it. An administrator's lists hold the public flavors and those
granted to their project, or with ``is_public`` false only the private
ones, or with ``is_public=none`` every flavor.

The lists page as the reference's do: ``limit`` (at most ``[api]
max_limit``) and ``marker`` (the last flavor id seen; one that is not
listed is a 400), with ``flavors_links`` holding the ``next`` page's link
when a page is full.

Deleting a flavor leaves its servers as they are: each keeps the copy of
the flavor it was built with.
"""

import re

from oslo_utils import strutils
from oslo_utils import uuidutils

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import flavors as schemas
from nova.api.openstack.compute.views import flavors as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import validation
from nova.api.openstack import wsgi
from nova import exception
from nova.objects import flavor_catalog

RULE = 'os_compute_api:os-flavors'
MANAGE_RULE = 'os_compute_api:os-flavor-manage:%s'
FLAVOR_ID_RE = re.compile(r'^[A-Za-z0-9_.-]{1,255}$')
_MAX_RXTX_FACTOR = 3.40282e+38


def _int_filter(req, name):
    text = common.query_value(req, name)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid %s filter [%s]' % (name, text))


def _is_public_filter(req) -> bool | None:
    """What an administrator's ``is_public`` asks for (None: every
    flavor); others always see the public and granted flavors."""
    text = common.query_value(req, 'is_public')
    if not req.context.is_admin or text is None:
        return True
    if text.lower() == 'none':
        return None
    try:
        return strutils.bool_from_string(text, strict=True)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid is_public filter [%s]' % text[:100])


def _size(body: dict, name: str, minimum: int, default: int = 0) -> int:
    """A validated size as an integer (the schema lets digit strings
    through, whose range only shows once they are numbers)."""
    value = int(body.get(name, default))
    if not minimum <= value <= schemas.MAX_INT:
        raise exception.ValidationError(
            detail='Invalid input for field/attribute %s. Value: %s. It '
                   'must be between %d and %d.'
                   % (name, value, minimum, schemas.MAX_INT))
    return value


def _rxtx_factor(body: dict) -> float:
    value = float(body.get('rxtx_factor', 1.0))
    if not 0 < value <= _MAX_RXTX_FACTOR:
        raise exception.ValidationError(
            detail='Invalid input for field/attribute rxtx_factor. Value: '
                   '%s. It must be greater than 0.' % value)
    return value


def _flavor_id(body: dict) -> str:
    flavorid = body.get('id')
    if flavorid is None:
        return uuidutils.generate_uuid()
    return str(flavorid)


def lookup(req, flavor_id: str):
    """The flavor a path names, if the caller may see it (else 404)."""
    if not FLAVOR_ID_RE.match(flavor_id):
        raise exception.FlavorNotFound(flavor_id='(invalid)')
    return flavor_catalog.get_by_flavor_id(req.context, flavor_id)


class FlavorsController:
    def __init__(self, max_limit: int):
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/flavors', self.index),
            Route('GET', '/flavors/detail', self.detail),
            Route('GET', '/flavors/{flavor_id}', self.show),
            Route('POST', '/flavors', self.create,
                  body=schemas.create_for),
            Route('PUT', '/flavors/{flavor_id}', self.update,
                  min_version='2.55', body=schemas.update),
            Route('DELETE', '/flavors/{flavor_id}', self.delete),
        ]

    def _flavors(self, req):
        policy.authorize(req.context, RULE)
        min_ram = _int_filter(req, 'minRam')
        min_disk = _int_filter(req, 'minDisk')
        flavors = flavor_catalog.get_all(req.context,
                                         is_public=_is_public_filter(req))
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
        return self._page(req, 'flavors', views.basic)

    def detail(self, req):
        return self._page(req, 'flavors/detail', views.detail)

    def show(self, req, flavor_id):
        policy.authorize(req.context, RULE)
        return views.shown(req, lookup(req, flavor_id))

    def create(self, req):
        # The policy first: a refused caller learns nothing of the body.
        policy.authorize(req.context, MANAGE_RULE % 'create')
        body = req.validated_body()['flavor']
        flavor = flavor_catalog.create(
            req.context, _flavor_id(body), body['name'],
            memory_mb=_size(body, 'ram', 1),
            vcpus=_size(body, 'vcpus', 1),
            root_gb=_size(body, 'disk', 0),
            ephemeral_gb=_size(body, 'OS-FLV-EXT-DATA:ephemeral', 0),
            swap=_size(body, 'swap', 0),
            rxtx_factor=_rxtx_factor(body),
            is_public=validation.to_bool(
                body.get('os-flavor-access:is_public', True)),
            description=body.get('description'))
        return views.shown(req, flavor)

    def update(self, req, flavor_id):
        policy.authorize(req.context, MANAGE_RULE % 'update')
        body = req.validated_body()['flavor']
        lookup(req, flavor_id)
        flavor = flavor_catalog.update_description(
            req.context, flavor_id, body['description'])
        return views.shown(req, flavor)

    def delete(self, req, flavor_id):
        policy.authorize(req.context, MANAGE_RULE % 'delete')
        lookup(req, flavor_id)
        flavor_catalog.destroy_by_flavor_id(req.context, flavor_id)
        return wsgi.Result(None, status=202)
