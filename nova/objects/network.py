"""Networks and ports, as the network layer stores them.

A network is a Linux bridge by another name, with an optional IP subnet
(``cidr``); a port is one MAC address on it (and, when the network has a
subnet, one fixed IP address of it), owned by at most one instance and
bound to at most one host. Its status follows Neutron's: ``DOWN`` until
bound, ``BUILD`` while a host plugs it, ``ACTIVE`` once plugged, ``ERROR``
when plugging failed.

The database guards uniqueness: a MAC address is used once
(``PortExists``), an IP address once per network
(``FixedIpAlreadyInUse``), so two concurrent allocations cannot both take
the same one.
"""

import datetime
import typing

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


class PortState(typing.NamedTuple):
    """A port's status as one read saw it (``Port.states_by_binding_host``).
    """
    uuid: str
    instance_uuid: str | None
    status: str


class Network(base.NovaObject):
    model = models.Network
    fields = {
        'id': fields.Integer(),
        'uuid': fields.String(default=uuidutils.generate_uuid),
        'name': fields.String(),
        'bridge': fields.String(),
        # The IPv4 or IPv6 subnet ports get fixed addresses from, in
        # canonical form ('172.24.4.0/24'); None: ports get no address.
        'cidr': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    uuid: str | None
    name: str | None
    bridge: str | None
    cidr: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

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
        obj = cls._db_find_by(context, uuid=uuid)
        if obj is None:
            raise exception.NetworkNotFound(network_id=uuid)
        return obj

    @classmethod
    def get_all(cls, context) -> list['Network']:
        return cls._db_get_by(context)


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
        'ip_address': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    uuid: str | None
    network_uuid: str | None
    mac_address: str | None
    instance_uuid: str | None
    binding_host: str | None
    status: str
    device_owner: str | None
    ip_address: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

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
            # An unknown network fails the insert too (foreign key), and
            # so does an address another port of the network holds.
            Network.get_by_uuid(self._context, self.network_uuid)
            if self.ip_address and self._ip_address_taken():
                raise exception.FixedIpAlreadyInUse(
                    address=self.ip_address, network_id=self.network_uuid)
            raise
        return self

    def _ip_address_taken(self) -> bool:
        return self._db_find_by(
            self._context, network_uuid=self.network_uuid,
            ip_address=self.ip_address) is not None

    def save(self, expected_status=base.UNSET,
             expected_binding_host=base.UNSET) -> None:
        """Write the changed fields; compare-and-swap on ``status`` and
        ``binding_host`` (a value or a list, ``None`` meaning NULL).

        When the row does not match, raises ``UnexpectedPortStatusError``
        with what the row holds (``actual``: its status; ``actual_host``
        in ``kwargs``).
        """
        where = []
        if expected_status is not base.UNSET:
            where.append(base.matches(models.Port.status, expected_status))
        if expected_binding_host is not base.UNSET:
            where.append(base.matches(models.Port.binding_host,
                                      expected_binding_host))
        if not self.obj_what_changed() and not where:
            return
        if self._db_update(*where):
            return
        row = self.get_by_uuid(self._context, self.uuid)
        raise exception.UnexpectedPortStatusError(
            port_id=self.uuid, expected=expected_status, actual=row.status,
            expected_host=expected_binding_host,
            actual_host=row.binding_host)

    def write_in(self, session) -> None:
        """Write the changed fields in ``session``, the transaction of the
        instance's write that carries them (``Instance.save(and_ports=)``);
        ``PortNotFound`` when the row is gone."""
        if not self._db_update_in(session):
            raise exception.PortNotFound(port_id=self.uuid)

    def destroy(self) -> None:
        table = models.Port.__table__
        with db_api.writing() as connection:
            connection.execute(sa.delete(table).where(table.c.id == self.id))

    @classmethod
    def get_by_uuid(cls, context, uuid) -> 'Port':
        obj = cls._db_find_by(context, uuid=uuid)
        if obj is None:
            raise exception.PortNotFound(port_id=uuid)
        return obj

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid) -> list['Port']:
        return cls._db_get_by(context, instance_uuid=instance_uuid)

    @classmethod
    def get_by_network_uuid(cls, context, network_uuid) -> list['Port']:
        return cls._db_get_by(context, network_uuid=network_uuid)

    @classmethod
    def get_all(cls, context) -> list['Port']:
        return cls._db_get_all(context, order_by=[models.Port.created_at,
                                                  models.Port.id])

    @classmethod
    def get_by_binding_host(cls, context, host, instance_uuids=None,
                            uuids=None) -> list['Port']:
        """Every port bound to ``host`` (what its network agent watches);
        only those of ``instance_uuids`` (the index on ``instance_uuid``
        serves it), or those whose uuid is in ``uuids``, when given (none
        for an empty collection).

        NOTE: ``binding_host`` has no index. Each agent runs this query
        once per poll interval; measured on SQLite, the scan itself takes
        0.07 ms with 500 ports and 0.17 ms with 2000 (building the
        objects of the matching rows costs more, and an index would not
        change that), so the schema stays as migration 0002 left it. Add
        an index in a new migration if deployments grow to tens of
        thousands of ports.
        """
        where = [models.Port.binding_host == host]
        for column, values in ((models.Port.instance_uuid, instance_uuids),
                               (models.Port.uuid, uuids)):
            if values is not None:
                if not values:
                    return []
                where.append(column.in_(sorted(values)))
        return cls._db_get_all(context, *where)

    @classmethod
    def states_by_binding_host(cls, context, host) -> list['PortState']:
        """The uuid, instance and status of every port bound to ``host``,
        read as columns: what a network agent's full look needs to find
        the few ports whose status is out of date, without building an
        object for each of the hundreds that are not."""
        ports = models.Port.__table__.c
        query = sa.select(ports.uuid, ports.instance_uuid, ports.status).where(
            ports.binding_host == host)
        with db_api.reading() as connection:
            return [PortState(*row) for row in connection.execute(query)]

    @classmethod
    def get_ip_addresses(cls, context, network_uuid) -> set[str]:
        """The fixed IP addresses the ports of a network hold now."""
        ports = models.Port.__table__.c
        query = sa.select(ports.ip_address).where(
            ports.network_uuid == network_uuid, ports.ip_address.is_not(None))
        with db_api.reading() as connection:
            return set(connection.scalars(query).all())
