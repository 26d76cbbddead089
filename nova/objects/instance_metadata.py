"""A server's metadata: the owner's key/value pairs, one row per key.

The pairs live in their own table (``instance_metadata``), not in a JSON
column, so that a client can ask which servers carry a key (Masakari's
``HA_Enabled``) without reading every instance. Keys are 1-255 and values
0-255 characters; the API checks that before anything here runs. Only
the API and nova-hamonitor read and write them: the table is the control
plane's (``nova.db.control_models``), and ``nova.objects`` does not
import this module.

Example::

    InstanceMetadata.replace(ctx, uuid, {'HA_Enabled': 'True'})
    InstanceMetadata.update(ctx, uuid, {'role': 'db'})
    InstanceMetadata.get(ctx, uuid)   # {'HA_Enabled': 'True', 'role': 'db'}
    InstanceMetadata.instances_with(ctx, 'HA_Enabled', 'True')   # [uuid]
    InstanceMetadata.delete_key(ctx, uuid, 'role')
"""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import base

_TABLE = control_models.InstanceMetadata
# Built once (every server view runs it): {uuids} expanded at execution.
_FOR_INSTANCES = sa.select(_TABLE.instance_uuid, _TABLE.key,
                           _TABLE.value).where(
    _TABLE.instance_uuid.in_(sa.bindparam('uuids', expanding=True))
).order_by(_TABLE.id)


class InstanceMetadata:
    """The metadata of servers, read and written as plain ``{key: value}``
    dictionaries (every value a string)."""

    @staticmethod
    def get(context, instance_uuid: str | None) -> dict[str, str]:
        return InstanceMetadata.get_for(context, [instance_uuid]).get(
            instance_uuid, {})

    @staticmethod
    def get_for(context, instance_uuids) -> dict[str, dict[str, str]]:
        """``{uuid: metadata}`` of those servers in one query (a server
        without metadata is absent)."""
        uuids = list(instance_uuids)
        result: dict[str, dict[str, str]] = {}
        if not uuids:
            return result
        with db_api.reading() as connection:
            for uuid, key, value in connection.execute(
                    _FOR_INSTANCES, {'uuids': uuids}):
                result.setdefault(uuid, {})[key] = value
        return result

    @staticmethod
    def instances_with(context, key: str, value: str | None = None
                       ) -> list[str]:
        """The uuids of the servers carrying ``key`` (with ``value``,
        when given), deleted ones included (the caller filters)."""
        query = sa.select(_TABLE.instance_uuid).where(_TABLE.key == key)
        if value is not None:
            query = query.where(_TABLE.value == value)
        with db_api.reading() as connection:
            return list(connection.scalars(query.order_by(_TABLE.id)))

    @staticmethod
    def replace(context, instance_uuid: str | None,
                metadata: dict[str, str]) -> dict[str, str]:
        """Make ``metadata`` the server's whole metadata, in one
        transaction; returns it."""
        with db_api.session() as session:
            session.execute(sa.delete(_TABLE).where(
                _TABLE.instance_uuid == instance_uuid))
            _insert(session, instance_uuid, metadata)
        return dict(metadata)

    @staticmethod
    def update(context, instance_uuid: str | None,
               metadata: dict[str, str]) -> dict[str, str]:
        """Set the keys of ``metadata``, keeping the others, in one
        transaction; returns the whole metadata afterwards."""
        with db_api.session() as session:
            if metadata:
                session.execute(sa.delete(_TABLE).where(
                    _TABLE.instance_uuid == instance_uuid,
                    _TABLE.key.in_(list(metadata))))
            _insert(session, instance_uuid, metadata)
        return InstanceMetadata.get(context, instance_uuid)

    @staticmethod
    def delete_key(context, instance_uuid: str | None, key: str) -> None:
        """Remove one key; ``MetadataItemNotFound`` when it is not set."""
        with db_api.session() as session:
            deleted = session.execute(sa.delete(_TABLE).where(
                _TABLE.instance_uuid == instance_uuid,
                _TABLE.key == key)).rowcount
        if not deleted:
            raise exception.MetadataItemNotFound(
                key=key, instance_uuid=instance_uuid)


def _insert(session, instance_uuid: str | None,
            metadata: dict[str, str]) -> None:
    if not metadata:
        return
    now = base.utcnow()
    session.execute(sa.insert(_TABLE), [
        {'instance_uuid': instance_uuid, 'key': key, 'value': value,
         'created_at': now, 'updated_at': None}
        for key, value in metadata.items()])
