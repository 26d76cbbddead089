"""``/servers/{server_id}/metadata``: a server's key/value metadata.

``GET`` lists it, ``PUT`` replaces it whole, ``POST`` sets the keys given
and keeps the others; ``GET``/``PUT``/``DELETE .../metadata/{key}`` read,
set and remove one key (``PUT`` takes ``{"meta": {key: value}}``, the key
the same as the path's). Keys are 1-255 characters and values up to 255:
anything else is a 400 and changes nothing. A locked server's metadata
changes only for an administrator (409 otherwise); a server being built
or deleted, or in ERROR, refuses changes (409). The number of items is
not limited here (no quota is enforced on it).
"""

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import servers as schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova import exception
from nova.objects import instance_metadata as metadata_obj

_BASE = '/servers/{server_id}/metadata'
_ITEM = _BASE + '/{key}'


class ServerMetadataController:
    def __init__(self, compute_api):
        self.compute_api = compute_api

    def routes(self) -> list[Route]:
        return [
            Route('GET', _BASE, self.index),
            Route('PUT', _BASE, self.update_all,
                  body=schemas.metadata_body),
            Route('POST', _BASE, self.create, body=schemas.metadata_body),
            Route('GET', _ITEM, self.show),
            Route('PUT', _ITEM, self.update, body=schemas.metadata_item),
            Route('DELETE', _ITEM, self.delete),
        ]

    def _instance(self, req, server_id, rule):
        instance = common.get_instance(self.compute_api, req.context,
                                       server_id)
        policy.authorize(req.context, 'os_compute_api:server-metadata:'
                         + rule, target_project_id=instance.project_id)
        return instance

    def index(self, req, server_id):
        instance = self._instance(req, server_id, 'index')
        return {'metadata': metadata_obj.InstanceMetadata.get(req.context,
                                                              instance.uuid)}

    def show(self, req, server_id, key):
        instance = self._instance(req, server_id, 'show')
        metadata = metadata_obj.InstanceMetadata.get(req.context,
                                                     instance.uuid)
        if key not in metadata:
            raise exception.MetadataItemNotFound(key=key,
                                                 instance_uuid=instance.uuid)
        return {'meta': {key: metadata[key]}}

    def update_all(self, req, server_id):
        body = req.validated_body()
        instance = self._instance(req, server_id, 'update_all')
        return {'metadata': self.compute_api.update_metadata(
            req.context, instance, body['metadata'], replace=True)}

    def create(self, req, server_id):
        body = req.validated_body()
        instance = self._instance(req, server_id, 'create')
        return {'metadata': self.compute_api.update_metadata(
            req.context, instance, body['metadata'])}

    def update(self, req, server_id, key):
        body = req.validated_body()
        if key not in body['meta']:
            raise exception.ValidationError(
                detail='Request body and URI mismatch: the item in "meta" '
                       'must be the key of the path.')
        instance = self._instance(req, server_id, 'update')
        self.compute_api.update_metadata(req.context, instance, body['meta'])
        return {'meta': body['meta']}

    def delete(self, req, server_id, key):
        instance = self._instance(req, server_id, 'delete')
        self.compute_api.delete_metadata_item(req.context, instance, key)
        return wsgi.Result(None, status=204)
