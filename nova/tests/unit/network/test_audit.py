"""Orphaned ports: listed from the database, released only when safe."""

from nova import context as nova_context
from nova import exception
from nova.network import api as network_api
from nova.network import audit
from nova import objects
from nova.tests import base


class TestOrphanedPorts(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctxt = nova_context.get_admin_context()
        self.api = network_api.API()
        self.api.create_network(self.ctxt, 'public', 'br-public',
                                cidr='10.9.0.0/29')

    def _boot_that_died_before_its_row(self):
        # What compute.api.API.create leaves when its process dies after
        # allocating the ports and before creating the row.
        instance = objects.Instance(self.ctxt, display_name='lost')
        self.api.allocate_for_instance(self.ctxt, instance, ['public'])
        return instance

    def _live(self):
        instance = objects.Instance(self.ctxt, display_name='live',
                                    host='compute1')
        self.api.allocate_for_instance(self.ctxt, instance, ['public'])
        return instance.create()

    def _deleted_without_its_ports(self):
        instance = self._live()
        instance.destroy()
        return instance

    def _port_ids(self, instance):
        return [p.uuid for p in objects.Port.get_by_instance_uuid(
            self.ctxt, instance.uuid)]

    def test_ports_of_missing_and_deleted_instances_only(self):
        lost = self._boot_that_died_before_its_row()
        live = self._live()
        deleted = self._deleted_without_its_ports()
        orphans = audit.orphaned_ports(self.ctxt, min_age=0)
        self.assertEqual(
            {(lost.uuid, audit.NO_INSTANCE),
             (deleted.uuid, audit.INSTANCE_DELETED)},
            {(o.instance_uuid, o.reason) for o in orphans})
        [port] = objects.Port.get_by_instance_uuid(self.ctxt, lost.uuid)
        [orphan] = [o for o in orphans if o.instance_uuid == lost.uuid]
        self.assertEqual((port.uuid, port.mac_address, port.ip_address),
                         (orphan.port_id, orphan.mac_address,
                          orphan.ip_address))
        self.assertEqual(1, len(self._port_ids(live)))

    def test_a_young_port_may_belong_to_a_boot_in_progress(self):
        self._boot_that_died_before_its_row()
        self.assertEqual([], audit.orphaned_ports(self.ctxt, min_age=600))

    def test_release_frees_the_address_and_keeps_the_rest(self):
        lost = self._boot_that_died_before_its_row()
        live = self._live()
        [lost_port] = objects.Port.get_by_instance_uuid(self.ctxt,
                                                        lost.uuid)
        released = audit.release(
            self.ctxt, audit.orphaned_ports(self.ctxt, min_age=0),
            min_age=0)
        self.assertEqual([lost.uuid], [o.instance_uuid for o in released])
        self.assertEqual([], self._port_ids(lost))
        self.assertEqual(1, len(self._port_ids(live)))
        taken = objects.Port.get_ip_addresses(
            self.ctxt, self.api.get_network(self.ctxt, 'public').uuid)
        self.assertNotIn(lost_port.ip_address, taken)

    def test_an_instance_written_since_the_audit_keeps_its_port(self):
        # The audit ran while a boot was between its two steps (as a
        # min_age of 0 allows); the row came before the release.
        instance = objects.Instance(self.ctxt, display_name='slow')
        self.api.allocate_for_instance(self.ctxt, instance, ['public'])
        orphans = audit.orphaned_ports(self.ctxt, min_age=0)
        self.assertEqual([instance.uuid],
                         [o.instance_uuid for o in orphans])
        instance.create()
        self.assertEqual([], audit.release(self.ctxt, orphans, min_age=0))
        self.assertEqual(1, len(self._port_ids(instance)))

    def test_a_port_released_meanwhile_is_skipped(self):
        lost = self._boot_that_died_before_its_row()
        orphans = audit.orphaned_ports(self.ctxt, min_age=0)
        self.api.deallocate_for_instance(self.ctxt, lost)
        self.assertEqual([], audit.release(self.ctxt, orphans, min_age=0))

    def test_negative_age_is_refused(self):
        self.assertRaises(exception.InvalidInput, audit.orphaned_ports,
                          self.ctxt, -1)
