"""A guest that dies outside nova, on real compute hosts (libvirt's test
driver): its domain destroyed behind nova's back through the driver's own
connection, libvirt's lifecycle event reaches the compute manager, which
stops the instance in the database and records the failure; the monitor
then starts it (``builtin``, HA_Enabled only) or posts one Masakari
instance-failure notification (``masakari``, against ``masakari_stub``
over HTTP), once however many checks and monitors follow."""

import threading

from nova.conf import CONF
from nova.conf import masakari as masakari_conf
from nova.ha import fencer as fencer_mod
from nova.ha import lease as lease_mod
from nova.ha import masakari as masakari_mod
from nova.ha import monitor as monitor_mod
from nova.model import power_state
from nova import objects
from nova.objects import ha_alert
from nova.objects import ha_instance_failure as steps
from nova.objects import instance_metadata
from nova.tests.functional import evacuate_harness as harness
from nova.tests.unit.ha import fence_agents
from nova.tests.unit.ha import masakari_stub


class InstanceFailureTestCase(harness.EvacuateTestCase):

    HOSTS = ('a', 'b')

    def setUp(self):
        super().setUp()
        self.agent, self.record = fence_agents.recording_agent(self.tmp)

    def monitor(self, name='m1', masakari=None):
        lease = lease_mod.MonitorLease('RegionOne', name, 30)
        return monitor_mod.Monitor(self.ctx, lease,
                                   fencer_mod.Fencer(self.agent, 10),
                                   self.api, masakari=masakari)

    def boot_ha(self, ha_enabled=True):
        instance = self.boot('a')
        if ha_enabled:
            instance_metadata.InstanceMetadata.replace(
                self.ctx, instance.uuid, {'HA_Enabled': 'True'})
        return instance

    def lock_free(self, instance):
        locks = self.hosts['a'].manager.instance_locks
        with locks.lock_if_free(instance.uuid) as held:
            return held

    def kill_guest(self, instance):
        """Its QEMU dies: the domain destroyed through the driver's own
        connection, nova not told."""
        # Once the build let go of the instance: an event that comes
        # while an operation holds it is that operation's (see
        # power_sync).
        self.wait_for(lambda: self.lock_free(instance),
                      'the build to let go of %s' % instance.uuid)
        self.hosts['a'].driver.host.get_guest(instance.uuid).poweroff()

    def failures(self, instance):
        return objects.HaInstanceFailure.get_all(self.ctx, instance.uuid)

    def failed(self, instance):
        """The guest killed; the failure its host recorded."""
        self.kill_guest(instance)
        self.wait_for(lambda: self.failures(instance),
                      'the failure of %s to be recorded' % instance.uuid)
        (failure,) = self.failures(instance)
        return failure

    def starts(self, instance):
        return [a for a in objects.InstanceAction.get_by_instance_uuid(
            self.ctx, instance.uuid) if a.action == 'start']


class TestComputeRecordsTheFailure(InstanceFailureTestCase):

    def test_a_guest_destroyed_behind_novas_back_is_a_failure(self):
        instance = self.boot_ha()
        failure = self.failed(instance)
        self.assertEqual(('a', 'STOPPED_DESTROYED', steps.NEW),
                         (failure.host, failure.event, failure.step))
        self.wait_for(lambda: self.fresh(instance).vm_state == 'stopped',
                      'the instance to be stopped')
        row = self.fresh(instance)
        self.assertEqual(('stopped', None, power_state.SHUTDOWN),
                         (row.vm_state, row.task_state, row.power_state))
        self.assertFalse(self.hosts['a'].running(instance))

    def test_a_guest_that_dies_while_an_operation_holds_it(self):
        # The event comes while an operation (here: the test) holds the
        # instance; once it lets go, the stop is handled as any other.
        instance = self.boot_ha()
        self.wait_for(lambda: self.lock_free(instance),
                      'the build to let go of %s' % instance.uuid)
        deferred = 'stop-event-%s' % instance.uuid
        with self.hosts['a'].manager.instance_locks.lock(instance.uuid):
            self.hosts['a'].driver.host.get_guest(instance.uuid).poweroff()
            self.wait_for(lambda: any(t.name == deferred
                                      for t in threading.enumerate()),
                          'the stop event to wait for the instance')
            self.assertEqual([], self.failures(instance))
            self.assertEqual('active', self.fresh(instance).vm_state)
        self.wait_for(lambda: self.failures(instance),
                      'the failure of %s to be recorded' % instance.uuid)
        (failure,) = self.failures(instance)
        self.assertEqual(('a', 'STOPPED_DESTROYED', steps.NEW),
                         (failure.host, failure.event, failure.step))
        self.assertEqual('stopped', self.fresh(instance).vm_state)

    def test_a_stop_by_nova_is_no_failure(self):
        instance = self.boot_ha()
        self.api.stop(self.ctx, instance)
        self.wait_for(lambda: self.fresh(instance).vm_state == 'stopped'
                      and self.fresh(instance).task_state is None,
                      'the instance to be stopped')
        # Then a guest that does fail is recorded: the stop's own event
        # was handled before it.
        other = self.boot_ha()
        self.failed(other)
        self.assertEqual([], self.failures(instance))


class TestMonitorStartsTheInstance(InstanceFailureTestCase):

    def test_an_ha_enabled_instance_is_started_once(self):
        instance = self.boot_ha()
        failure = self.failed(instance)
        first, second = self.monitor('m1'), self.monitor('m2')
        self.assertEqual('healthy', first.check_once()['a'].action.value)
        self.wait_for(lambda: self.fresh(instance).vm_state == 'active'
                      and self.fresh(instance).task_state is None,
                      'the instance to be started')
        self.assertTrue(self.hosts['a'].running(instance))
        (failure,) = self.failures(instance)
        self.assertEqual((steps.STARTED, 'm1'),
                         (failure.step, failure.monitor))
        # More checks, by it or by another monitor once it is gone:
        # started once.
        first.check_once()
        first.lease.give_back()
        second.check_once()
        self.assertEqual(1, len(self.starts(instance)))
        self.assertEqual(1, len(self.failures(instance)))

    def test_an_instance_not_ha_enabled_stays_stopped(self):
        instance = self.boot_ha(ha_enabled=False)
        self.failed(instance)
        self.monitor().check_once()
        (failure,) = self.failures(instance)
        self.assertEqual(steps.SKIPPED, failure.step)
        self.assertIn('HA_Enabled', failure.reason)
        self.assertEqual('stopped', self.fresh(instance).vm_state)
        self.assertEqual([], self.starts(instance))

    def test_a_failure_on_a_host_that_is_not_up_is_left_to_its_recovery(
            self):
        instance = self.boot_ha()
        self.failed(instance)
        monitor = self.monitor()
        # Straight to the instance failures, with host a not up (the host
        # checks would recover it).
        self.assertTrue(monitor.lease.renew())
        monitor.instance_failures.handle_new(up_hosts={'b'})
        (failure,) = self.failures(instance)
        self.assertEqual(steps.SKIPPED, failure.step)
        self.assertIn('host a is not up', failure.reason)
        self.assertEqual([], self.starts(instance))


class TestMonitorNotifiesMasakari(InstanceFailureTestCase):

    def setUp(self):
        super().setUp()
        self.masakari = masakari_stub.MasakariStub().start()
        self.addCleanup(self.masakari.stop)
        # keystoneauth's "none" plugin: the stub checks no token. The
        # options are registered by Notifier.from_conf, after: here first.
        masakari_conf.register_keystoneauth_opts(CONF)
        self.flags(auth_type='none', endpoint_override=self.masakari.url,
                   group='masakari')

    def notifier(self):
        return masakari_mod.Notifier.from_conf(CONF)

    def test_one_instance_failure_notification_is_posted(self):
        instance = self.boot_ha()
        self.failed(instance)
        monitor = self.monitor(masakari=self.notifier())
        monitor.check_once()
        (posted,) = self.masakari.posted
        sent = posted['notification']
        self.assertEqual(('VM', 'a'), (sent['type'], sent['hostname']))
        self.assertEqual({'event': 'LIFECYCLE',
                          'instance_uuid': instance.uuid,
                          'vir_domain_event': 'STOPPED_FAILED'},
                         sent['payload'])
        (notification,) = self.masakari.notifications
        (failure,) = self.failures(instance)
        self.assertEqual((steps.NOTIFIED, notification['notification_uuid']),
                         (failure.step, failure.notification_uuid))
        # Masakari starts it, not the monitor.
        self.assertEqual([], self.starts(instance))
        # More checks, and a restarted monitor: never posted again.
        monitor.check_once()
        monitor.lease.give_back()
        self.monitor('m2', masakari=self.notifier()).check_once()
        self.assertEqual(1, len(self.masakari.posted))

    def test_a_notification_masakari_refused_is_posted_again(self):
        instance = self.boot_ha()
        self.failed(instance)
        self.masakari.failing = 503
        monitor = self.monitor(masakari=self.notifier())
        monitor.check_once()
        (failure,) = self.failures(instance)
        self.assertEqual(steps.NEW, failure.step)
        self.assertTrue(ha_alert.HaAlert.get_all(self.ctx, 'a'))
        self.masakari.failing = None
        monitor.check_once()
        self.assertEqual(2, len(self.masakari.posted))
        self.assertEqual(1, len(self.masakari.notifications))
        (failure,) = self.failures(instance)
        self.assertEqual(steps.NOTIFIED, failure.step)
