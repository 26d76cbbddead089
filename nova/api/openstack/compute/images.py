"""``/images``: the compute API's proxy of the images (Nova's image
proxy API).

The reference removed these proxy APIs at 2.36 (they answer 404 from
then on); they serve 2.1 to 2.35 here too. Images come from where
``[image] backend`` says (``nova.image.source``): the local image store
(read-only here: its images are added by the operator) or Glance, which
is called with the requesting user's own token, so that Glance decides
what the user may see and change.

The fields are the reference's: ``id``, ``name``, ``links`` in the list;
the details add ``minRam``, ``minDisk``, ``metadata`` (the image's
properties), ``created``, ``updated``, ``status``, ``progress`` and
``OS-EXT-IMG-SIZE:size``, and ``server`` (a link to the server) for a
snapshot or backup (an image whose ``instance_uuid`` property names its
server). The list filters ``server`` (an id or a server's link) and
``type`` (``snapshot``, ``backup``) match those properties, as Nova's.
Of the local store's images, the snapshots and backups may be deleted
here (the operator's own images stay read-only).
"""

import datetime

from oslo_utils import timeutils

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import image_metadata as schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova import exception
from nova.image import glance

RULE = 'os_compute_api:images'
MAX_VERSION = '2.35'


# Glance's statuses as the proxy shows them, with a progress.
_STATUS = {
    'active': ('ACTIVE', 100),
    'queued': ('SAVING', 25),
    'saving': ('SAVING', 50),
    'uploading': ('SAVING', 50),
    'importing': ('SAVING', 50),
    'deleted': ('DELETED', 0),
    'pending_delete': ('DELETED', 0),
    'killed': ('ERROR', 0),
}
_LIST_STATUS = {'ACTIVE': 'active', 'SAVING': 'saving',
                'DELETED': 'deleted', 'ERROR': 'killed'}


def _basic(req, record: glance.ImageRecord) -> dict:
    return {'id': record.id, 'name': record.name,
            'links': common.links(req, 'images', record.id)}


def _detail(req, record: glance.ImageRecord) -> dict:
    view = _basic(req, record)
    status, progress = _STATUS.get(record.status, ('UNKNOWN', 0))
    view.update({
        'status': status,
        'progress': progress,
        'minDisk': record.min_disk,
        'minRam': record.min_ram,
        'metadata': _metadata(record),
        'created': record.created_at,
        'updated': record.updated_at,
        'OS-EXT-IMG-SIZE:size': record.size,
    })
    server = record.properties.get('instance_uuid')
    if server:
        view['server'] = {'id': server,
                          'links': common.links(req, 'servers', server)}
    return view


def _metadata(record: glance.ImageRecord) -> dict:
    # The proxy shows properties as strings, as Glance v1 kept them.
    return {key: value if isinstance(value, str) else str(value)
            for key, value in record.properties.items()}


def _property_filters(req) -> dict:
    """The list's ``server`` and ``type`` filters as the image
    properties they match (Nova's)."""
    filters = {}
    server = common.query_value(req, 'server')
    if server is not None:
        # A server's link is accepted as well as its id.
        filters['instance_uuid'] = server.rstrip('/').rsplit('/', 1)[-1]
    image_type = common.query_value(req, 'type')
    if image_type is not None:
        filters['image_type'] = image_type
    return filters


def _time(text: str | None) -> datetime.datetime | None:
    return None if text is None else timeutils.parse_isotime(text)


def _token(req) -> str | None:
    return req.headers.get('X-Auth-Token')


class ImagesController:
    def __init__(self, image_store):
        # A nova.image.store.ImageStore or a nova.image.glance.GlanceImages
        self.image_store = image_store

    def routes(self) -> list[Route]:
        images = '/images/{image_id}'
        metadata = images + '/metadata'
        return [
            Route('GET', '/images', self.index, max_version=MAX_VERSION),
            Route('GET', '/images/detail', self.detail,
                  max_version=MAX_VERSION),
            Route('GET', images, self.show, max_version=MAX_VERSION),
            Route('DELETE', images, self.delete, max_version=MAX_VERSION),
            # ``DELETE /images/``: a blank id names no image (404, as
            # Nova), not a method the collection lacks (405).
            Route('DELETE', '/images', self.delete_blank,
                  max_version=MAX_VERSION),
            Route('GET', metadata, self.metadata_index,
                  max_version=MAX_VERSION),
            Route('PUT', metadata, self.metadata_replace,
                  max_version=MAX_VERSION, body=schemas.metadata),
            Route('POST', metadata, self.metadata_update,
                  max_version=MAX_VERSION, body=schemas.metadata),
            Route('GET', metadata + '/{key}', self.metadata_show,
                  max_version=MAX_VERSION),
            Route('PUT', metadata + '/{key}', self.metadata_set,
                  max_version=MAX_VERSION, body=schemas.meta_item),
            Route('DELETE', metadata + '/{key}', self.metadata_delete,
                  max_version=MAX_VERSION),
        ]

    @property
    def _glance(self) -> glance.GlanceImages | None:
        return (self.image_store
                if isinstance(self.image_store, glance.GlanceImages)
                else None)

    def _writable(self) -> glance.GlanceImages:
        if self._glance is None:
            raise wsgi.HTTPError(405, 'The local image store is read-only '
                                      'through the API.')
        return self._glance

    def _delete_local(self, record: glance.ImageRecord) -> None:
        # Only snapshots and backups: the operator's images are not the
        # API's to delete.
        if record.properties.get('image_type') not in ('snapshot',
                                                       'backup'):
            self._writable()
        self.image_store.discard(record.id)

    def _record(self, req, image_id) -> glance.ImageRecord:
        policy.authorize(req.context, RULE)
        common.require_uuid(image_id,
                            exception.ImageNotFound(image_id=image_id))
        if self._glance is not None:
            return self._glance.record(image_id, _token(req))
        return glance.ImageRecord.of_meta(self.image_store.get(image_id))

    def _images(self, req) -> list[glance.ImageRecord]:
        policy.authorize(req.context, RULE)
        name = common.query_value(req, 'name')
        status = common.query_value(req, 'status')
        if status is not None and status not in _LIST_STATUS:
            return []
        properties = _property_filters(req)
        if self._glance is not None:
            records = self._glance.records(
                _token(req), name=name,
                status=None if status is None else _LIST_STATUS[status],
                **properties)
        else:
            records = [glance.ImageRecord.of_meta(m)
                       for m in self.image_store.list()]
            records = [r for r in records
                       if name is None or r.name == name]
            if status is not None:
                records = [r for r in records
                           if _STATUS.get(r.status, ('UNKNOWN',))[0]
                           == status]
        records = [r for r in records
                   if all(r.properties.get(k) == v
                          for k, v in properties.items())]
        window = common.changes_window(req, None)
        records = [r for r in records
                   if window.contains(_time(r.updated_at))]
        limit, marker = common.limit_and_marker(req, len(records) or 1)
        return common.paginate(records, limit, marker, key=lambda r: r.id)

    def index(self, req):
        return {'images': [_basic(req, r) for r in self._images(req)]}

    def detail(self, req):
        return {'images': [_detail(req, r) for r in self._images(req)]}

    def show(self, req, image_id):
        return {'image': _detail(req, self._record(req, image_id))}

    def delete(self, req, image_id):
        record = self._record(req, image_id)
        if self._glance is None:
            self._delete_local(record)
        else:
            self._glance.delete(image_id, _token(req))
        return wsgi.Result(None, status=204)

    def delete_blank(self, req):
        policy.authorize(req.context, RULE)
        raise exception.ImageNotFound(image_id='')

    # -- metadata: the image's properties ------------------------------------

    def metadata_index(self, req, image_id):
        return {'metadata': _metadata(self._record(req, image_id))}

    def _set(self, req, image_id, items, replace):
        self._record(req, image_id)
        record = self._writable().set_properties(image_id, _token(req),
                                                 items, replace=replace)
        return record

    def metadata_replace(self, req, image_id):
        items = req.validated_body()['metadata']
        return {'metadata': _metadata(self._set(req, image_id, items,
                                                replace=True))}

    def metadata_update(self, req, image_id):
        items = req.validated_body()['metadata']
        return {'metadata': _metadata(self._set(req, image_id, items,
                                                replace=False))}

    def metadata_show(self, req, image_id, key):
        metadata = _metadata(self._record(req, image_id))
        if key not in metadata:
            raise exception.ImageMetadataKeyNotFound(image_id=image_id,
                                                     key=key)
        return {'meta': {key: metadata[key]}}

    def metadata_set(self, req, image_id, key):
        item = req.validated_body()['meta']
        if key not in item:
            raise exception.ValidationError(
                detail='Request body and URI mismatch')
        record = self._set(req, image_id, item, replace=False)
        return {'meta': {key: _metadata(record)[key]}}

    def metadata_delete(self, req, image_id, key):
        self._record(req, image_id)
        self._writable().delete_property(image_id, _token(req), key)
        return wsgi.Result(None, status=204)
