"""Networks and ports, as the network layer stores them.

A network is a Linux bridge by another name; a port is one MAC address on
it, owned by at most one instance and bound to at most one host. Its
status follows Neutron's: ``DOWN`` until bound, ``BUILD`` while a host
plugs it, ``ACTIVE`` once plugged, ``ERROR`` when plugging failed.
"""

from oslo_utils import uuidutils
import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.objects import base
from nova.objects import fields

DOWN = 'DOWN'
BUILD = 'BUILD'
ACTIVE = 'ACTIVE'
ERROR = 'ERROR'
PORT_STATUSES = models.PORT_STATUSES


class Network(base.NovaObject):
    model = models.Network
    fields = {
        'id': fields.Integer(),
        'uuid': fields.String(default=uuidutils.generate_uuid),
        'name': fields.String(),
        'bridge': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    def create(self) -> 'Network':
        now = base.utcnow()
        self.created_at = self.created_at or now
        self.updated_at = now
        self._db_insert(conflict=exception.NetworkExists(
            network_id=self.uuid))
        return self

    def save(self) -> None:
        if self.obj_what_changed() and not self._db_update():
            raise exception.NetworkNotFound(network_id=self.uuid)

    @classmethod
    def get_by_uuid(cls, context, uuid) -> 'Network':
        obj = cls._db_get_one(context, models.Network.uuid == uuid)
        if obj is None:
            raise exception.NetworkNotFound(network_id=uuid)
        return obj

    @classmethod
    def get_all(cls, context) -> list['Network']:
        return cls._db_get_all(context)


class Port(base.NovaObject):
    model = models.Port
    fields = {
        'id': fields.Integer(),
        'uuid': fields.String(default=uuidutils.generate_uuid),
        'network_uuid': fields.String(),
        'mac_address': fields.String(),
        'instance_uuid': fields.String(),
        'binding_host': fields.String(),
        'status': fields.String(default=DOWN, nullable=False),
        'device_owner': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    def __setattr__(self, name, value):
        if name == 'status' and value not in PORT_STATUSES:
            raise ValueError('port status must be one of %s, got %r'
                             % (PORT_STATUSES, value))
        super().__setattr__(name, value)

    def create(self) -> 'Port':
        now = base.utcnow()
        self.created_at = self.created_at or now
        self.updated_at = now
        if self.mac_address:
            self.mac_address = self.mac_address.lower()
        try:
            self._db_insert(conflict=exception.PortExists(
                port_id=self.uuid, mac_address=self.mac_address))
        except exception.PortExists:
            # An unknown network fails the insert too (foreign key).
            Network.get_by_uuid(self._context, self.network_uuid)
            raise
        return self

    def save(self, expected_status=base.UNSET) -> None:
        """Write the changed fields; compare-and-swap on ``status``."""
        where = []
        if expected_status is not base.UNSET:
            where.append(base.matches(models.Port.status, expected_status))
        if not self.obj_what_changed() and not where:
            return
        if self._db_update(*where):
            return
        actual = self.get_by_uuid(self._context, self.uuid).status
        raise exception.UnexpectedPortStatusError(
            port_id=self.uuid, expected=expected_status, actual=actual)

    def destroy(self) -> None:
        with db_api.session() as session:
            session.execute(sa.delete(models.Port).where(
                models.Port.id == self.id))

    @classmethod
    def get_by_uuid(cls, context, uuid) -> 'Port':
        obj = cls._db_get_one(context, models.Port.uuid == uuid)
        if obj is None:
            raise exception.PortNotFound(port_id=uuid)
        return obj

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid) -> list['Port']:
        return cls._db_get_all(context,
                               models.Port.instance_uuid == instance_uuid)

    @classmethod
    def get_by_network_uuid(cls, context, network_uuid) -> list['Port']:
        return cls._db_get_all(context,
                               models.Port.network_uuid == network_uuid)
