"""What the compute unit tests share: one host with a real database.

The FakeDriver keeps real files under the test's instances_path; the
network backend answers every plug at once (``NetworkBackendVirtAPI``).
"""

import os

from nova.compute import locks
from nova.compute import operation
from nova.model import power_state
from nova.compute import storage_report
from nova.model import vm_states
from nova.conf import host_settings
from nova import context as nova_context
from nova.model import network as network_model
from nova import objects
from nova.tests import base
from nova.tests.unit.virt import contract
from nova.virt import fake

HOST = 'compute1'
BRIDGE = 'br-unit'
PORT = '0f5e7a3c-9d8b-4c1a-8e2f-6b7a5c4d3e21'


class ComputeTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.context = nova_context.get_admin_context()
        self.settings = host_settings.HostSettings(
            host=HOST, instances_path=os.path.join(self.tmp, 'instances'),
            bridges=(BRIDGE,), vif_plugging_timeout=5)
        self.virtapi = contract.NetworkBackendVirtAPI()
        self.driver = fake.FakeDriver(self.virtapi, self.settings)
        self.driver.init_host(HOST)
        # A compute service's first start on an empty instances_path.
        self.driver.init_storage_identity()
        self.compute = operation.ComputeHost(
            host=HOST, settings=self.settings, driver=self.driver,
            virtapi=self.virtapi,
            storage=storage_report.StorageReporter(HOST, self.driver))
        self.runner = operation.Runner(self.compute, locks.InstanceLocks())

    def network_info(self, active=True):
        network = network_model.Network(id='n1', label='private',
                                        bridge=BRIDGE)
        return network_model.NetworkInfo([network_model.VIF(
            id=PORT, address='fa:16:3e:aa:bb:cc', network=network,
            active=active)])

    def new_instance(self, **fields):
        values = dict(user_id='u', project_id='p', display_name='unit',
                      vm_state=vm_states.BUILDING, host=HOST, node=HOST,
                      image_ref='img', network_info=self.network_info())
        values.update(fields)
        return objects.Instance(self.context, **values).create()

    def active_instance(self):
        """An instance whose guest runs on the fake driver."""
        instance = self.new_instance()
        self.driver.spawn(self.context, instance, {}, [], None,
                          network_info=instance.network_info)
        instance.vm_state = vm_states.ACTIVE
        instance.power_state = power_state.RUNNING
        instance.save()
        return instance

    def reload(self, instance):
        return objects.Instance.get_by_uuid(self.context, instance.uuid,
                                            read_deleted='yes')

    def states(self, instance):
        row = self.reload(instance)
        return row.vm_state, row.task_state, row.power_state

    def files(self, instance):
        return contract.files_of(os.path.join(self.settings.instances_path,
                                              instance.uuid))

    def faults(self, instance):
        return objects.InstanceFault.get_by_instance_uuid(self.context,
                                                          instance.uuid)

    def events(self, instance):
        """[(action, event, result)] of every action, oldest first."""
        found = []
        for action in reversed(objects.InstanceAction.get_by_instance_uuid(
                self.context, instance.uuid)):
            found.extend((action.action, e.event, e.result)
                         for e in action.events)
        return found
