"""Images from Glance, the Image service (API v2), for ``[image] backend =
glance``.

``GlanceImages`` answers what the local store (``nova.image.store``)
answers (``get``, ``find``, ``list``, ``copy_data``), so nova-compute's
image cache and the compute API use either; the image proxy API
(``/v2.1/images``) also reads Glance's records (``records``, ``record``)
and changes an image's properties (``set_properties``,
``delete_property``) and deletes images, each with the requesting user's
own token, as Nova does.

An image's disk format and checksum are Glance's record (``disk_format``,
``os_hash_algo`` and ``os_hash_value``; the MD5 ``checksum`` of an image
uploaded before Glance kept the others): never probed. ``copy_data``
downloads to the name it is given (the image cache's ``.part-``
temporary), which the cache verifies against that record before it
renames it.

Example::

    images = GlanceImages.from_settings(settings.glance)
    meta = images.get(image_id)           # an ImageMeta
    images.copy_data(meta.id, '/srv/instances/_base/<hash>.part-<uuid>')
"""

import builtins
import dataclasses
import os

from oslo_log import log as logging
from oslo_utils import uuidutils

from nova import exception
from nova.image import meta as image_meta

LOG = logging.getLogger(__name__)

_CHUNK = 1024 * 1024
PATCH_TYPE = 'application/openstack-images-v2.1-json-patch'
# The attributes of Glance's image schema; everything else in a record is
# one of the image's properties (the proxy API's ``metadata``).
BASE_ATTRIBUTES = frozenset((
    'id', 'name', 'status', 'visibility', 'protected', 'os_hidden',
    'checksum', 'os_hash_algo', 'os_hash_value', 'owner', 'size',
    'virtual_size', 'min_ram', 'min_disk', 'created_at', 'updated_at',
    'tags', 'self', 'file', 'schema', 'container_format', 'disk_format',
    'locations', 'direct_url', 'stores'))


@dataclasses.dataclass(frozen=True)
class ImageRecord:
    """One image as the Image service records it (what the image proxy
    API shows): Glance's record, or one of the local store's images as
    Glance would record it (``of_meta``)."""
    id: str
    name: str
    # Glance's: queued, saving, active, killed, deleted, pending_delete,
    # deactivated, uploading, importing.
    status: str
    disk_format: str | None
    size: int | None
    min_disk: int
    min_ram: int
    created_at: str | None
    updated_at: str | None
    checksum_algo: str | None
    checksum: str | None
    properties: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict) -> 'ImageRecord':
        algo, value = record.get('os_hash_algo'), record.get('os_hash_value')
        if not value and record.get('checksum'):
            algo, value = 'md5', record['checksum']
        return cls(
            id=record['id'], name=record.get('name') or '',
            status=record.get('status') or 'queued',
            disk_format=record.get('disk_format'),
            size=record.get('size'),
            min_disk=record.get('min_disk') or 0,
            min_ram=record.get('min_ram') or 0,
            created_at=record.get('created_at'),
            updated_at=record.get('updated_at'),
            checksum_algo=algo, checksum=value,
            properties={k: v for k, v in record.items()
                        if k not in BASE_ATTRIBUTES})

    @classmethod
    def of_meta(cls, meta: image_meta.ImageMeta) -> 'ImageRecord':
        """An image of the local store: never changed after it was
        added (a snapshot's once its data is uploaded); its kernel and
        ramdisk ids are its properties, as in Glance."""
        properties = dict(meta.properties)
        for key in ('kernel_id', 'ramdisk_id'):
            if getattr(meta, key):
                properties[key] = getattr(meta, key)
        return cls(id=meta.id, name=meta.name, status=meta.status,
                   disk_format=meta.disk_format, size=meta.size,
                   min_disk=meta.min_disk, min_ram=meta.min_ram,
                   created_at=meta.created_at,
                   updated_at=meta.created_at,
                   checksum_algo=meta.checksum_algo, checksum=meta.checksum,
                   properties=properties)

    def to_meta(self) -> image_meta.ImageMeta:
        """What a spawn needs; ``ImageUnacceptable`` for an image that
        has no data yet or a format no disk is made from."""
        if self.status != 'active':
            raise exception.ImageUnacceptable(
                image_id=self.id, reason='image is %s, not active'
                                         % self.status)
        return image_meta.ImageMeta(
            id=self.id, name=self.name, disk_format=self.disk_format or '',
            kernel_id=self.properties.get('kernel_id'),
            ramdisk_id=self.properties.get('ramdisk_id'),
            size=self.size or 0, checksum=self.checksum or '',
            checksum_algo=self.checksum_algo or 'sha256',
            os_command_line=self.properties.get('os_command_line'),
            created_at=self.created_at, min_ram=self.min_ram,
            min_disk=self.min_disk)


def _not_found_if_not_uuid(image_id: str) -> str:
    # An id that cannot be Glance's is not sent to it.
    if not uuidutils.is_uuid_like(image_id):
        raise exception.ImageNotFound(image_id=image_id)
    return image_id


class GlanceImages:
    """Glance through a keystoneauth adapter: its service user's session
    and where the image endpoint is (catalog or override)."""

    def __init__(self, adapter):
        self.adapter = adapter

    @classmethod
    def from_settings(cls, settings) -> 'GlanceImages':
        """From a ``nova.conf.host_settings.GlanceSettings``."""
        from keystoneauth1 import adapter as ks_adapter
        from keystoneauth1 import exceptions as ks_exceptions
        from keystoneauth1 import loading as ks_loading
        from keystoneauth1 import session as ks_session
        auth = None
        if settings.auth_type:
            try:
                auth = ks_loading.get_plugin_loader(
                    settings.auth_type).load_from_options(
                        **dict(settings.auth_options))
            except ks_exceptions.ClientException as e:
                raise exception.InvalidConfiguration(
                    reason='[glance] Keystone credentials: %s' % e)
        if auth is None and not settings.endpoint:
            raise exception.InvalidConfiguration(
                reason='[image] backend = glance needs [glance] auth_type '
                       '(and its credentials) or api_servers')
        return cls(ks_adapter.Adapter(
            ks_session.Session(auth=auth), auth=auth,
            service_type=settings.service_type,
            interface=list(settings.interfaces) or None,
            region_name=settings.region_name,
            endpoint_override=settings.endpoint))

    # -- HTTP ---------------------------------------------------------------

    def _call(self, method: str, path: str, token: str | None = None,
              image_id: str | None = None, **kwargs):
        """The response of one call; a 404 raises ``ImageNotFound``."""
        from keystoneauth1 import exceptions as ks_exceptions
        headers = kwargs.pop('headers', {})
        if token is not None:
            # The user's own token: Glance decides what the user sees.
            headers['X-Auth-Token'] = token
            kwargs['authenticated'] = False
        try:
            resp = self.adapter.request(path, method, headers=headers,
                                        raise_exc=False, **kwargs)
        except ks_exceptions.ClientException as e:
            raise exception.ImageServiceUnavailable(reason=str(e))
        if resp.status_code == 404:
            raise exception.ImageNotFound(image_id=image_id or path)
        if resp.status_code == 403:
            raise exception.ImageForbidden(image_id=image_id or path)
        if resp.status_code >= 400:
            raise exception.ImageServiceError(
                status=resp.status_code, reason=resp.text[:300])
        return resp

    # -- what the image cache and the compute API use -----------------------

    def record(self, image_id: str, token: str | None = None) -> ImageRecord:
        _not_found_if_not_uuid(image_id)
        resp = self._call('GET', '/v2/images/%s' % image_id, token,
                          image_id=image_id)
        return ImageRecord.from_record(resp.json())

    def records(self, token: str | None = None,
                **filters) -> list[ImageRecord]:
        """Every image the caller sees (Glance's pages followed), with
        Glance's filters (``name``, ``status``, ...)."""
        found: list[ImageRecord] = []
        path: str | None = '/v2/images'
        params: dict | None = {k: v for k, v in filters.items()
                               if v is not None}
        while path:
            body = self._call('GET', path, token, params=params).json()
            found.extend(ImageRecord.from_record(r) for r in body['images'])
            # ``next`` carries the filters and the marker already.
            path, params = body.get('next'), None
        return found

    def get(self, image_id: str) -> image_meta.ImageMeta:
        return self.record(image_id).to_meta()

    def find(self, name_or_id: str) -> image_meta.ImageMeta:
        """An image by id, or by name when the name is unique."""
        return image_meta.find(
            name_or_id, self.get,
            lambda name: [r.to_meta() for r in self.records(name=name)])

    def list(self) -> list[image_meta.ImageMeta]:
        """The active images a disk can be made from."""
        metas = []
        for record in self.records(status='active'):
            try:
                metas.append(record.to_meta())
            except exception.ImageUnacceptable:
                continue
        return metas

    def copy_data(self, image_id: str, dest: str) -> None:
        """Download an image's data to ``dest`` (which must not exist);
        the caller verifies it against the record and renames it."""
        _not_found_if_not_uuid(image_id)
        resp = self._call('GET', '/v2/images/%s/file' % image_id,
                          image_id=image_id, stream=True)
        if resp.status_code == 204:
            raise exception.ImageNotFound(image_id=image_id)
        with open(dest, 'xb') as f:
            for chunk in resp.iter_content(_CHUNK):
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        LOG.info('Downloaded image %(id)s from Glance to %(dest)s',
                 {'id': image_id, 'dest': dest})

    # -- what the image proxy API changes, as the user ----------------------

    def _patch(self, image_id: str, token: str, ops: list) -> ImageRecord:
        resp = self._call('PATCH', '/v2/images/%s' % image_id, token,
                          image_id=image_id, json=ops,
                          headers={'Content-Type': PATCH_TYPE})
        return ImageRecord.from_record(resp.json())

    def set_properties(self, image_id: str, token: str, properties: dict,
                       replace: bool = False) -> ImageRecord:
        """Add or change ``properties``; with ``replace``, also remove
        every property not among them."""
        current = self.record(image_id, token)
        ops = []
        if replace:
            ops.extend({'op': 'remove', 'path': '/%s' % key}
                       for key in current.properties
                       if key not in properties)
        ops.extend({'op': 'add', 'path': '/%s' % key, 'value': value}
                   for key, value in properties.items())
        if not ops:
            return current
        return self._patch(image_id, token, ops)

    def delete_property(self, image_id: str, token: str,
                        key: str) -> ImageRecord:
        current = self.record(image_id, token)
        if key not in current.properties:
            raise exception.ImageMetadataKeyNotFound(image_id=image_id,
                                                     key=key)
        return self._patch(image_id, token,
                           [{'op': 'remove', 'path': '/%s' % key}])

    def delete(self, image_id: str, token: str | None = None) -> None:
        """As the user of ``token``, or as the service user."""
        _not_found_if_not_uuid(image_id)
        self._call('DELETE', '/v2/images/%s' % image_id, token,
                   image_id=image_id)

    # -- snapshots: queued by the API as the user, uploaded by the host -----

    def create_queued(self, new, token: str | None = None) -> str:
        """Create ``new`` (a ``new_image.NewImage``) with no data, as
        the user of ``token`` (the image is their project's, as in
        Nova); its id."""
        body = {'name': new.name, 'disk_format': new.disk_format,
                'container_format': new.container_format,
                'min_ram': new.min_ram, 'min_disk': new.min_disk,
                'visibility': 'private'}
        body.update(new.properties)
        resp = self._call('POST', '/v2/images', token, json=body)
        return resp.json()['id']

    def upload(self, image_id: str, source: str) -> None:
        """Upload ``source`` as the data of a queued image, as the
        service user (as ``copy_data`` downloads); Glance makes it
        active. ``ImageNotFound`` when the image was deleted meanwhile."""
        _not_found_if_not_uuid(image_id)
        with open(source, 'rb') as f:
            self._call('PUT', '/v2/images/%s/file' % image_id,
                       image_id=image_id, data=f,
                       headers={'Content-Type': 'application/octet-stream'})
        LOG.info('Uploaded image %(id)s to Glance from %(src)s',
                 {'id': image_id, 'src': source})

    def find_by_properties(self, properties: dict
                           ) -> builtins.list[ImageRecord]:
        """The images (the service user sees) whose properties include
        all of ``properties``: Glance's filter, checked again here."""
        return [r for r in self.records(**properties)
                if all(r.properties.get(k) == v
                       for k, v in properties.items())]

    def discard(self, image_id: str) -> None:
        """Delete an image that may be gone already, as the service
        user."""
        try:
            self.delete(image_id)
        except exception.ImageNotFound:
            pass
