"""A real Masakari recovers this project's failed compute hosts,
unmodified.

nova-all on the embedded default (two compute hosts on libvirt's test
driver, in one process) behind a real Keystone; masakari-api and
masakari-engine 22.0.0 behind the same Keystone, with RabbitMQ between
them (``nova.testing.masakari``). compute1 is made dead as a fence agent
and an operator would: its service forced down through the Compute API.
nova-hamonitor, in a process of its own on nova-all's database with a
recording fence agent and ``[ha] recovery = masakari``, fences the host
and posts Masakari's host-failure notification through the catalog,
once however many more checks it makes; Masakari's
engine then disables compute1 and evacuates through the Compute API
(python-novaclient, microversion 2.53). What is asserted is the state
each side ends in: the servers' hosts and states in the Compute API,
compute1's service, the notification in Masakari, the recovery row.
Each of the segment's recovery methods: ``auto`` and ``auto_priority``
(evacuated wherever the Compute API places them), ``reserved_host`` and
``rh_priority`` (to the reserved host, which Masakari enables).

A process failure (``PROCESS``, ``nova-compute``) makes Masakari disable
that host's compute service.

An instance failure its compute host recorded is posted once by
nova-hamonitor (``VM``, ``STOPPED_FAILED``), and Masakari's engine stops
and starts the server through the Compute API until it is ACTIVE again.

The tests share one stack (``masakari_stack.start_shared``), each on its
own: its own segment (its Masakari hosts, so its own notifications) and
servers, deleted after it, and the compute services, forced-down flags
and the monitor's recovery rows put back as they were.
"""

import datetime
import os
import unittest
import uuid as uuid_mod

import sqlalchemy as sa

from nova import context as nova_context
from nova.db import api as db_api
from nova.db import control_models
from nova.db import models
from nova import objects
from nova.objects import ha_recovery as steps
from nova.testing import tempest
from nova.testing import venvs
from nova.tests import base
from nova.tests.integration import masakari_stack
from nova.tests.unit.ha import fence_agents

_MISSING = masakari_stack.MISSING
MICROVERSION = '2.74'
# Masakari's own default reasons ([host_failure] and [process_failure]
# service_disable_reason).
HOST_FAILURE_REASON = 'Masakari detected host failed.'
PROCESS_FAILURE_REASON = 'Masakari detected process failed.'
# Booting, evacuating and Masakari's engine polling at 1 s all fit.
WAIT = 240
HOSTS = ('compute1', 'compute2')


def setUpModule():
    masakari_stack.start_shared()


def tearDownModule():
    masakari_stack.stop_shared()


class MasakariRecoveryTestCase(masakari_stack.MasakariStackTestCase):

    evacuate_all_instances = False

    def setUp(self):
        super().setUp()
        self.token = self.stack.keystone.token()
        self.image, self.flavor, _ = self.stack.image_and_flavor()
        # This test reads nova-all's database (the monitor's rows) and
        # puts back what it changed there.
        self.use_database('sqlite:///%s' % os.path.join(
            self.stack.base, 'state', 'nova.sqlite'))
        self.servers: list[str] = []
        self.segments: list[dict] = []
        self.addCleanup(self.restore)

    def restore(self):
        """What this test changed, put back for the next one on the same
        stack: the compute services up and enabled, its servers gone,
        the monitor's rows of the hosts gone (an old recovery would make
        the next failure a flap), its segment and hosts out of Masakari
        (a host's name is in one segment at a time)."""
        for host in HOSTS:
            self.set_service(host, status='enabled', forced_down=False)
        for uuid in self.servers:
            self.nova('DELETE', '/servers/%s' % uuid)
        self.wait_for(lambda: not set(self.servers) & {
            s['id'] for s in self.nova('GET', '/servers')['servers']},
            'the servers to be deleted')
        with db_api.session() as session:
            session.execute(sa.delete(control_models.HaHostRecovery))
            session.execute(sa.delete(control_models.HaAlert))
            session.execute(sa.delete(models.HaInstanceFailure))
        for segment in self.segments:
            path = '/segments/%s/hosts' % segment['uuid']
            for host in self.masakari.request('GET', path)['hosts']:
                self.masakari.request('DELETE',
                                      '%s/%s' % (path, host['uuid']))
            self.masakari.request('DELETE',
                                  '/segments/%s' % segment['uuid'])

    # -- the Compute API, as the admin ---------------------------------------

    def nova(self, method, path, body=None):
        return venvs.json_request(
            self.stack.api_url + path, method, self.token, body,
            headers={'OpenStack-API-Version': 'compute %s' % MICROVERSION})

    def server(self, uuid):
        return self.nova('GET', '/servers/%s' % uuid)['server']

    def boot(self, name, host, ha_enabled):
        metadata = {'HA_Enabled': 'True'} if ha_enabled else {}
        uuid = self.nova('POST', '/servers', {'server': {
            'name': name, 'imageRef': self.image, 'flavorRef': self.flavor,
            'networks': 'none', 'host': host,
            'metadata': metadata}})['server']['id']
        self.servers.append(uuid)
        self.wait_for(lambda: self.server(uuid)['status'] == 'ACTIVE',
                      '%s to be ACTIVE' % name)
        return uuid

    def compute_service(self, host):
        (service,) = self.nova('GET', '/os-services?binary=nova-compute'
                                      '&host=%s' % host)['services']
        return service

    def set_service(self, host, **body):
        uuid = self.compute_service(host)['id']
        return self.nova('PUT', '/os-services/%s' % uuid, body)['service']

    def wait_for(self, predicate, what):
        if not base.wait_until(predicate, timeout=WAIT, interval=0.5):
            self.fail('timed out waiting for %s; see %s' % (what, self.tmp))

    # -- Masakari ------------------------------------------------------------

    def segment(self, method, reserved=()):
        segment = self.masakari.create_segment(
            'cluster-%s' % uuid_mod.uuid4().hex[:8], method)
        self.segments.append(segment)
        segment['hosts'] = [
            self.masakari.add_host(segment['uuid'], host,
                                   reserved=host in reserved)
            for host in HOSTS]
        return segment

    def notifications(self):
        """Masakari's notifications from this test's hosts (earlier
        tests' came from hosts since deleted)."""
        ours = {host['uuid'] for segment in self.segments
                for host in segment['hosts']}
        return [n for n in self.masakari.request(
            'GET', '/notifications')['notifications']
            if n['source_host_uuid'] in ours]

    def notification(self, uuid):
        return self.masakari.request(
            'GET', '/notifications/%s' % uuid)['notification']

    def wait_finished(self, uuid):
        self.wait_for(lambda: self.notification(uuid)['status'] in (
            'finished', 'error', 'failed'), 'notification %s' % uuid)
        notification = self.notification(uuid)
        self.assertEqual('finished', notification['status'],
                         'see %s' % os.path.join(
                             self.masakari.base_dir, 'masakari-engine.log'))
        return notification

    # -- nova-hamonitor, on nova-all's database ------------------------------

    def start_hamonitor(self):
        """nova-hamonitor in a process of its own, checking every second,
        with a recording fence agent and [ha] recovery = masakari; this
        test reads nova-all's database too."""
        database = 'sqlite:///%s' % os.path.join(self.stack.base, 'state',
                                                 'nova.sqlite')
        self.agent, self.fence_record = fence_agents.recording_agent(
            self.tmp)
        user, password, project = tempest.SERVICE_USER
        conf = os.path.join(self.tmp, 'hamonitor.conf')
        with open(conf, 'w') as f:
            f.write('\n'.join([
                '[DEFAULT]',
                'state_path = %s' % os.path.join(self.tmp, 'hamonitor'),
                # It casts nothing with Masakari recovering; a transport
                # is still opened at start.
                'transport_url = %s' % self.broker.url,
                '[database]',
                'connection = %s' % database,
                '[ha]',
                'recovery = masakari',
                'fence_command = %s' % self.agent,
                'check_interval = 1',
                '[masakari]',
                'auth_type = password',
                'auth_url = %s' % self.stack.keystone.url,
                'username = %s' % user,
                'password = %s' % password,
                'project_name = %s' % project,
                'user_domain_name = Default',
                'project_domain_name = Default',
                '']))
        self.hamonitor_log = os.path.join(self.tmp, 'hamonitor.log')
        self.hamonitor = self.start_nova_process(
            'nova.cmd.hamonitor', conf, self.hamonitor_log)

    def recoveries(self):
        return steps.HaHostRecovery.get_all(
            nova_context.get_admin_context())

    def lease_expiry(self):
        with db_api.session() as session:
            return session.execute(sa.select(
                control_models.HaMonitorLease.expires_at)).scalar_one()

    def fail_compute1(self):
        """compute1 dies: forced down (what its fence agent and an
        operator vouch), found by nova-hamonitor, handed to Masakari; the
        recovery row."""
        self.set_service('compute1', forced_down=True)
        self.start_hamonitor()
        self.wait_for(lambda: any(r.step == steps.NOTIFIED
                                  for r in self.recoveries()),
                      'nova-hamonitor to notify Masakari (see %s)'
                      % self.hamonitor_log)
        self.assertEqual(['compute1'],
                         fence_agents.fenced(self.fence_record))
        (row,) = self.recoveries()
        self.assertEqual(('compute1', True), (row.host, row.fenced))
        # Masakari evacuates, not the monitor.
        self.assertIsNone(row.evacuation_uuid)
        return row

    def assertPostedOnce(self):
        """However many more checks the monitor makes: one notification,
        one fence, one recovery."""
        seen = self.lease_expiry()
        # Each check renews the lease: two more renewals, two more looks
        # at the recovered host.
        self.wait_for(lambda: (self.lease_expiry() - seen).total_seconds()
                      >= 2, 'two more checks of nova-hamonitor')
        self.assertEqual(1, len(self.notifications()))
        self.assertEqual(['compute1'],
                         fence_agents.fenced(self.fence_record))
        self.assertEqual(1, len(self.recoveries()))
        self.assertIsNone(self.hamonitor.poll())


@unittest.skipIf(_MISSING, _MISSING)
class TestAutoRecovery(MasakariRecoveryTestCase):

    method = 'auto'

    def test_ha_enabled_servers_are_evacuated_by_masakari(self):
        self.segment(self.method)
        ha = [self.boot('ha-%d' % i, 'compute1', True) for i in range(2)]
        plain = self.boot('plain', 'compute1', False)
        row = self.fail_compute1()

        notification = self.wait_finished(row.notification_uuid)
        self.assertEqual(('COMPUTE_HOST', 'STOPPED'), (
            notification['type'], notification['payload']['event']))
        for uuid in ha:
            server = self.server(uuid)
            self.assertEqual(('ACTIVE', 'compute2'), (
                server['status'], server['OS-EXT-SRV-ATTR:host']))
            # Masakari locked it while it moved it, and unlocked it.
            self.assertFalse(server['locked'])
        # Not HA_Enabled, and [host_failure] evacuate_all_instances off:
        # left where it was.
        self.assertEqual('compute1',
                         self.server(plain)['OS-EXT-SRV-ATTR:host'])
        service = self.compute_service('compute1')
        self.assertEqual(('disabled', HOST_FAILURE_REASON, True), (
            service['status'], service['disabled_reason'],
            service['forced_down']))
        self.assertPostedOnce()


@unittest.skipIf(_MISSING, _MISSING)
class TestReservedHostRecovery(MasakariRecoveryTestCase):

    evacuate_all_instances = True
    method = 'reserved_host'

    def test_masakari_enables_the_reserved_host_and_evacuates_there(self):
        # A reserved host is kept out of scheduling until Masakari needs
        # it.
        self.set_service('compute2', status='disabled',
                         disabled_reason='reserved for instance HA')
        segment = self.segment(self.method, reserved=('compute2',))
        servers = [self.boot('ha', 'compute1', True),
                   self.boot('plain', 'compute1', False)]
        row = self.fail_compute1()

        self.wait_finished(row.notification_uuid)
        # [host_failure] evacuate_all_instances: HA_Enabled or not.
        for uuid in servers:
            server = self.server(uuid)
            self.assertEqual(('ACTIVE', 'compute2'), (
                server['status'], server['OS-EXT-SRV-ATTR:host']))
        self.assertEqual('enabled',
                         self.compute_service('compute2')['status'])
        service = self.compute_service('compute1')
        self.assertEqual(('disabled', HOST_FAILURE_REASON), (
            service['status'], service['disabled_reason']))
        hosts = {h['name']: h for h in self.masakari.request(
            'GET', '/segments/%s/hosts' % segment['uuid'])['hosts']}
        self.assertEqual((False, True), (hosts['compute2']['reserved'],
                                         hosts['compute1']['on_maintenance']))
        self.assertPostedOnce()


@unittest.skipIf(_MISSING, _MISSING)
class TestAutoPriorityRecovery(TestAutoRecovery):
    """``auto_priority``: Masakari runs ``auto`` first (and
    ``reserved_host`` only if that fails): the same outcome."""

    method = 'auto_priority'


@unittest.skipIf(_MISSING, _MISSING)
class TestRhPriorityRecovery(TestReservedHostRecovery):
    """``rh_priority``: Masakari runs ``reserved_host`` first (and
    ``auto`` only if that fails): the same outcome."""

    method = 'rh_priority'


@unittest.skipIf(_MISSING, _MISSING)
class TestProcessFailure(MasakariRecoveryTestCase):

    def test_a_stopped_nova_compute_is_disabled_by_masakari(self):
        self.segment('auto')
        generated = datetime.datetime.now(datetime.timezone.utc)
        notification = self.masakari.request('POST', '/notifications', {
            'notification': {
                'type': 'PROCESS', 'hostname': 'compute1',
                'generated_time': generated.strftime('%Y-%m-%dT%H:%M:%SZ'),
                'payload': {'event': 'STOPPED',
                            'process_name': 'nova-compute'}}})[
            'notification']
        self.wait_finished(notification['notification_uuid'])
        service = self.compute_service('compute1')
        self.assertEqual(('disabled', PROCESS_FAILURE_REASON), (
            service['status'], service['disabled_reason']))
        self.assertEqual('enabled', self.compute_service('compute2')[
            'status'])


@unittest.skipIf(_MISSING, _MISSING)
class TestInstanceFailure(MasakariRecoveryTestCase):

    def test_masakari_stops_and_starts_an_instance_that_failed(self):
        self.segment('auto')
        uuid = self.boot('ha', 'compute1', True)
        # What compute1 records when libvirt says its guest stopped
        # without nova. nova-all's hosts run libvirt's test driver in
        # nova-all's own process, where no other process can reach a
        # domain: the functional tests (test_instance_failure.py) kill a
        # guest there and check this record; here the guest still runs,
        # and Masakari stops it before it starts it.
        context = nova_context.get_admin_context()
        failure = objects.HaInstanceFailure.record(
            context, uuid, 'compute1', 'STOPPED_FAILED')
        self.start_hamonitor()

        def notified():
            (row,) = objects.HaInstanceFailure.get_all(context, uuid)
            return row if row.step == 'notified' else None
        self.wait_for(notified, 'nova-hamonitor to notify Masakari (see %s)'
                      % self.hamonitor_log)
        row = notified()
        self.assertEqual(failure.id, row.id)
        notification = self.wait_finished(row.notification_uuid)
        self.assertEqual(('VM', {
            'event': 'LIFECYCLE', 'instance_uuid': uuid,
            'vir_domain_event': 'STOPPED_FAILED'}), (
            notification['type'], notification['payload']))
        server = self.server(uuid)
        self.assertEqual(('ACTIVE', 'compute1'), (
            server['status'], server['OS-EXT-SRV-ATTR:host']))
        actions = [a['action'] for a in self.nova(
            'GET', '/servers/%s/os-instance-actions' % uuid)[
            'instanceActions']]
        self.assertEqual(1, actions.count('stop'))
        self.assertEqual(1, actions.count('start'))
        # Two more checks: posted once; no host was fenced.
        seen = self.lease_expiry()
        self.wait_for(lambda: (self.lease_expiry() - seen).total_seconds()
                      >= 2, 'two more checks of nova-hamonitor')
        self.assertEqual(1, len(self.notifications()))
        self.assertEqual([], fence_agents.fenced(self.fence_record))
        self.assertIsNone(self.hamonitor.poll())
