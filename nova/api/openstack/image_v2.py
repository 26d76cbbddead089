"""``/image``: the local image store, read-only, as the Image service v2
(Glance) shows images.

OpenStack clients look images up in the Image service, never in the
compute API (``openstack server create --image NAME`` calls
``GET /v2/images/NAME`` then ``GET /v2/images?name=NAME``). A deployment
of this project has no Glance: its images are the local store's
(``nova.image.store``), and this serves them at ``<api>/image`` with the
same authentication as the compute API, so that registering that URL as
the ``image`` service in Keystone's catalog is all a client needs::

    openstack endpoint create --region RegionOne image public \
        http://controller:8774/image

What is served: the version document (``/image``), the image list
(``/image/v2/images``, ``name`` and ``id`` filters) and one image
(``/image/v2/images/{id}``), each image with Glance's fields; anything
else, including every write, is a 404 or a 405. No microversions: the
Image API has none.
"""

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack import wsgi
from nova import exception

PREFIX = 'image'
VERSION = 'v2.16'
RULE = 'os_compute_api:images'


def _base(req) -> str:
    return '%s/%s' % (common.link_prefix(req), PREFIX)


def versions(req) -> dict:
    return {'versions': [{
        'id': VERSION, 'status': 'CURRENT',
        'links': [{'rel': 'self', 'href': _base(req) + '/v2/'}]}]}


def _view(meta) -> dict:
    return {
        'id': meta.id,
        'name': meta.name,
        'status': 'active',
        'visibility': 'public',
        'protected': False,
        'os_hidden': False,
        'container_format': 'bare',
        'disk_format': meta.disk_format,
        'size': meta.size,
        'virtual_size': None,
        'checksum': None,
        'os_hash_algo': 'sha256' if meta.checksum else None,
        'os_hash_value': meta.checksum or None,
        'min_disk': 0,
        'min_ram': 0,
        'owner': None,
        'tags': [],
        # An image never changes in the store: last updated when added.
        'created_at': meta.created_at,
        'updated_at': meta.created_at,
        'self': '/v2/images/%s' % meta.id,
        'file': '/v2/images/%s/file' % meta.id,
        'schema': '/v2/schemas/image',
    }


class ImageAPI:
    """Answers the paths under ``/image`` (``segments`` after it)."""

    def __init__(self, image_store):
        self.image_store = image_store

    def __call__(self, req, segments: tuple) -> dict:
        if not segments:
            return versions(req)
        if segments[0] != 'v2' or segments[1:2] != ('images',) or \
                len(segments) > 3:
            raise wsgi.HTTPError(404, 'The resource could not be found.')
        if req.method != 'GET':
            raise wsgi.HTTPError(405, 'The image store is read-only here.',
                                 {'Allow': 'GET'})
        policy.authorize(req.context, RULE)
        if len(segments) == 3:
            image_id = common.require_uuid(
                segments[2], exception.ImageNotFound(image_id=segments[2]))
            return _view(self.image_store.get(image_id))
        images = self.image_store.list()
        for name in ('name', 'id'):
            wanted = common.query_value(req, name)
            if wanted is not None:
                images = [m for m in images if getattr(m, name) == wanted]
        return {'images': [_view(m) for m in images],
                'first': '/v2/images', 'schema': '/v2/schemas/images'}
