"""``/images``: the compute API's read-only view of the image store.

The reference removed these proxy APIs at 2.36 (they answer 404 from
then on); they serve 2.1 to 2.35 here too. Images live in the local image
store (``nova.image.store``).

The fields are the reference's: ``id``, ``name``, ``links`` in the list;
the details add ``minRam``, ``minDisk``, ``metadata``, ``created``,
``updated`` (an image never changes here: the time it was added),
``status``, ``progress`` and ``OS-EXT-IMG-SIZE:size``. The reference's
``server`` (the server a snapshot was taken of) never appears: nothing
takes snapshots here.
"""

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import exception

RULE = 'os_compute_api:images'
MAX_VERSION = '2.35'


def _basic(req, meta) -> dict:
    return {'id': meta.id, 'name': meta.name,
            'links': common.links(req, 'images', meta.id)}


def _detail(req, meta) -> dict:
    view = _basic(req, meta)
    metadata = {}
    if meta.kernel_id:
        metadata['kernel_id'] = meta.kernel_id
    if meta.ramdisk_id:
        metadata['ramdisk_id'] = meta.ramdisk_id
    view.update({
        'status': 'ACTIVE',
        'progress': 100,
        'minDisk': 0,
        'minRam': 0,
        'metadata': metadata,
        'created': meta.created_at,
        'updated': meta.created_at,
        'OS-EXT-IMG-SIZE:size': meta.size,
    })
    return view


class ImagesController:
    def __init__(self, image_store):
        self.image_store = image_store

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/images', self.index, max_version=MAX_VERSION),
            Route('GET', '/images/detail', self.detail,
                  max_version=MAX_VERSION),
            Route('GET', '/images/{image_id}', self.show,
                  max_version=MAX_VERSION),
        ]

    def _images(self, req):
        policy.authorize(req.context, RULE)
        images = self.image_store.list()
        name = common.query_value(req, 'name')
        if name is not None:
            images = [m for m in images if m.name == name]
        return images

    def index(self, req):
        return {'images': [_basic(req, m) for m in self._images(req)]}

    def detail(self, req):
        return {'images': [_detail(req, m) for m in self._images(req)]}

    def show(self, req, image_id):
        policy.authorize(req.context, RULE)
        common.require_uuid(image_id,
                            exception.ImageNotFound(image_id=image_id))
        return {'image': _detail(req, self.image_store.get(image_id))}
