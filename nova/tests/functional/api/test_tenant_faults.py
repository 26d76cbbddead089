"""What a server's owner and an administrator read of its failures, over
real HTTP and the ``nova`` CLI, after evacuations that really failed.

Hosts ``a`` and ``b`` share their instances directory (``c`` has its
own). The owner's server runs on ``a``, which dies. The first evacuation
to ``b`` fails in its spawn (``b`` lacks the port's bridge: a 500 fault
naming the bridge and the host); the second is refused by ``b``
(``InvalidSharedStorage``, a 400 naming the hosts and the instance's
path). The administrator reads the whole story; the owner reads
sentences that name no host, path or bridge, and no traceback.
"""

from nova.compute import rpcapi as compute_rpcapi
from nova import context as nova_context
from nova import exception
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.fixtures import database as dbf
from nova.tests.functional.api import test_cli_end_to_end as cli_tests
from nova.tests.functional import evacuate_harness as harness

OWNER = 'alice:demo'


class TenantFaultsTestCase(cli_tests.CLITestCase):
    SHARED = ('a', 'b')

    def boot_owned(self, host='a'):
        """A server of project ``demo`` built and running on ``host``."""
        ctx = nova_context.RequestContext(user_id='alice',
                                          project_id='demo')
        instance = dbf.make_instance(
            ctx, host, vm_state='building', task_state='scheduling',
            flavor=self.flavor, image_ref=self.image.id)
        objects.InstanceAction.action_start(ctx, instance.uuid, 'create')
        compute_rpcapi.ComputeAPI().build_and_run_instance(
            ctx, instance, host=host, image_meta=self.image,
            network_info=self.network_info())
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'build of %s' % instance.uuid)
        instance = self.fresh(instance)
        self.assertEqual('active', instance.vm_state)
        return instance

    def evacuate_over_http(self, instance, body, version):
        before = {m.id for m in objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)}
        status, _body = self.http(
            'POST', '/servers/%s/action' % instance.uuid,
            {'evacuate': body}, version=version)
        self.assertEqual(200, status, _body)
        (migration,) = [m for m in objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid) if m.id not in before]
        return self.wait_for_evacuation(migration)

    def fault_as(self, instance, token):
        status, body = self.http('GET', '/servers/%s' % instance.uuid,
                                 token=token)
        self.assertEqual(200, status, body)
        return body['server']['fault']

    def events_as(self, instance, token):
        """Every event of the server's actions at 2.84, and the raw
        bodies they came in."""
        status, body = self.http(
            'GET', '/servers/%s/os-instance-actions' % instance.uuid,
            token=token, version='2.84')
        self.assertEqual(200, status, body)
        events, raw = [], []
        for action in body['instanceActions']:
            status, shown = self.http(
                'GET', '/servers/%s/os-instance-actions/%s'
                % (instance.uuid, action['request_id']), token=token,
                version='2.84')
            self.assertEqual(200, status, shown)
            raw.append(repr(shown))
            events += shown['instanceAction'].get('events', [])
        return events, '\n'.join(raw)


class TestTenantFaults(TenantFaultsTestCase):

    def test_failed_and_refused_evacuations_as_admin_and_owner(self):
        instance = self.boot_owned('a')
        a = self.kill('a')
        path = a.instance_dir(instance)
        # What the owner must never read: the hosts' names as the fault
        # says them, the instance's path, the bridge.
        secrets = ('host a', 'host b', path, harness.BRIDGE)

        # 1. The spawn on b fails: ERROR, a 500 with its traceback.
        self.hosts['b'].sim.remove_bridge(harness.BRIDGE)
        migration = self.evacuate_over_http(instance, {'host': 'b'},
                                            '2.14')
        self.assertEqual(migration_obj.FAILED, migration.status)
        self.hosts['b'].sim.add_bridge(harness.BRIDGE)
        admin = self.fault_as(instance, cli_tests.ADMIN)
        self.assertEqual(500, admin['code'])
        self.assertIn(harness.BRIDGE, admin['message'])
        self.assertIn('on host b', admin['message'])
        self.assertIn('Traceback', admin['details'])
        owner = self.fault_as(instance, OWNER)
        self.assertEqual(
            {'code': 500, 'created': admin['created'],
             'message': exception.VirtualInterfacePlugException.safe_msg},
            owner)

        # 2. a recorded no storage identity (an older release): b cannot
        # check the operator's "not shared", sees the instance's
        # directory, and refuses. The server stays ERROR, with a 400.
        service = objects.Service.get_by_host_and_binary(
            self.ctx, 'a', 'nova-compute')
        service.storage_identity = None
        service.save()
        migration = self.evacuate_over_http(
            instance, {'host': 'b', 'onSharedStorage': 'False'}, '2.1')
        self.assertEqual(migration_obj.FAILED, migration.status)
        self.assertEqual('error', self.fresh(instance).vm_state)

        admin = self.fault_as(instance, cli_tests.ADMIN)
        self.assertEqual(400, admin['code'])
        self.assertIn('source host a has no storage identity',
                      admin['message'])
        self.assertIn(path, admin['message'])
        # A refusal keeps no traceback: Nova's rule, for everyone.
        self.assertNotIn('details', admin)
        owner = self.fault_as(instance, OWNER)
        self.assertEqual(
            {'code': 400, 'created': admin['created'],
             'message': exception.InvalidSharedStorage.safe_msg},
            owner)

        # The events of both evacuations: the owner reads the sentences,
        # with no traceback and no host; the administrator everything.
        events, raw = self.events_as(instance, OWNER)
        failed = [e for e in events if e['result'] == 'Error']
        self.assertEqual(
            [exception.VirtualInterfacePlugException.safe_msg,
             exception.InvalidSharedStorage.safe_msg],
            sorted(e['details'] for e in failed))
        for event in events:
            self.assertNotIn('traceback', event)
            self.assertNotIn('host', event)
        for secret in secrets:
            self.assertNotIn(secret, raw)
        admin_events, _raw = self.events_as(instance, cli_tests.ADMIN)
        said = ' '.join(e['details'] for e in admin_events
                        if e['result'] == 'Error')
        self.assertIn(path, said)
        self.assertIn(harness.BRIDGE, said)
        self.assertTrue(all('traceback' in e for e in admin_events))

        # The CLI prints what the API gives each of them (the network is
        # named after its bridge: the owner may read that one).
        shown = self.nova('show', instance.uuid, token=OWNER)
        self.assertIn(exception.InvalidSharedStorage.safe_msg[:40], shown)
        for secret in ('host a', 'host b', path):
            self.assertNotIn(secret, shown)
        self.assertIn(path, self.nova('show', instance.uuid))
