"""Quota usage through the lives of real instances: built on a host,
evacuated (successfully or not), failed, deleted. Usage is counted from
the instance rows, so each instance counts once wherever it is, an ERROR
one still counts and a deleted one does not.

The hosts are the evacuation harness's: real compute managers and the
libvirt driver on libvirt's test driver, over inproc:// RPC.
"""

from nova.compute import quotas
from nova import context as nova_context
from nova import exception
from nova.tests.functional import evacuate_harness as harness


class QuotaCountingTest(harness.EvacuateTestCase):

    def used(self, project_id='admin'):
        used = quotas.usage_of(project_id, None)
        return used['instances'], used['cores'], used['ram']

    def test_an_evacuated_instance_counts_once(self):
        instance = self.boot('a')
        self.assertEqual((1, 1, 64), self.used())
        self.kill('a')
        migration = self.evacuate(instance, host='b')
        self.assertLandedOn('b', instance, migration)
        self.assertEqual((1, 1, 64), self.used())
        # At its limit, the project may create no more.
        quotas.set_limits('admin', None, {'instances': 1})
        self.assertRaises(exception.TooManyInstances,
                          quotas.check_instances,
                          nova_context.get_admin_context(), self.flavor)

    def test_a_failed_evacuation_counts_once(self):
        instance = self.boot('a')
        self.kill('a')
        self.hosts['b'].sim.remove_bridge(harness.BRIDGE)
        migration = self.evacuate(instance, host='b')
        self.assertFailedOnSource(instance, migration)
        self.assertEqual((1, 1, 64), self.used())

    def test_a_failed_build_counts_until_deleted(self):
        self.hosts['a'].sim.remove_bridge(harness.BRIDGE)
        instance = self.build_on('a')
        self.assertEqual('error', instance.vm_state)
        self.assertEqual((1, 1, 64), self.used())
        self.api.delete(self.ctx, instance)
        self.wait_for(lambda: self.fresh(instance).deleted,
                      'delete of %s' % instance.uuid)
        self.assertEqual((0, 0, 0), self.used())

    def test_a_deleted_evacuated_instance_counts_no_more(self):
        instance = self.boot('a')
        other = self.boot('c')
        self.kill('a')
        self.evacuate(instance, host='b')
        self.api.delete(self.ctx, self.fresh(instance))
        self.wait_for(lambda: self.fresh(instance).deleted,
                      'delete of %s' % instance.uuid)
        self.assertEqual((1, 1, 64), self.used())
        self.assertFalse(self.fresh(other).deleted)
