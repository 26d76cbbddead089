"""Constraints the schema enforces by itself."""

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import models
from nova.tests import base

UUID1 = '00000000-0000-0000-0000-000000000001'
UUID2 = '00000000-0000-0000-0000-000000000002'


class ModelsTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()

    def _insert(self, model, **values):
        with db_api.session() as session:
            session.execute(sa.insert(model).values(**values))

    def _network(self):
        self._insert(models.Network, uuid=UUID1, name='n', bridge='br0')

    def test_instance_defaults(self):
        self._insert(models.Instance, uuid=UUID1)
        with db_api.session(read_only=True) as session:
            row = session.scalars(sa.select(models.Instance)).one()
        self.assertEqual((0, False), (row.power_state, row.deleted))

    def test_instance_uuid_is_unique(self):
        self._insert(models.Instance, uuid=UUID1)
        self.assertRaises(sa_exc.IntegrityError, self._insert,
                          models.Instance, uuid=UUID1)

    def test_fault_needs_an_existing_instance(self):
        self.assertRaises(sa_exc.IntegrityError, self._insert,
                          models.InstanceFault, instance_uuid=UUID1,
                          code=500)

    def test_service_host_and_binary_unique(self):
        self._insert(models.Service, uuid=UUID1, host='h', binary='b')
        self.assertRaises(sa_exc.IntegrityError, self._insert,
                          models.Service, uuid=UUID2, host='h', binary='b')

    def test_port_mac_unique_and_status_checked(self):
        self._network()
        self._insert(models.Port, uuid=UUID1, network_uuid=UUID1,
                     mac_address='fa:16:3e:00:00:01')
        self.assertRaises(sa_exc.IntegrityError, self._insert, models.Port,
                          uuid=UUID2, network_uuid=UUID1,
                          mac_address='fa:16:3e:00:00:01')
        self.assertRaises(sa_exc.IntegrityError, self._insert, models.Port,
                          uuid=UUID2, network_uuid=UUID1,
                          mac_address='fa:16:3e:00:00:02', status='UP')

    def test_port_needs_an_existing_network_not_instance(self):
        self.assertRaises(sa_exc.IntegrityError, self._insert, models.Port,
                          uuid=UUID1, network_uuid=UUID2,
                          mac_address='fa:16:3e:00:00:01')
        self._network()
        self._insert(models.Port, uuid=UUID1, network_uuid=UUID1,
                     mac_address='fa:16:3e:00:00:01', instance_uuid=UUID2)
