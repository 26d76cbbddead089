"""Quotas enforced: a server create or key pair import over a limit is a
403 that leaves nothing behind; usage is counted from the rows, so ERROR
instances count and deleted ones do not."""

from nova.compute import quotas
from nova.conf import CONF
from nova import context as nova_context
from nova import exception
from nova.model import vm_states
from nova import objects
from nova.objects import flavor_catalog
from nova.objects import instance_metadata as metadata_obj
from nova.objects import keypair as keypair_obj
from nova.tests.fixtures import database as dbf
from nova.tests import sample_keys
from nova.tests.unit.api.openstack import fakes

QUOTAS = '/v2.1/os-quota-sets/demo'


class FailingCast(fakes.RecordingRPC):
    """A compute host that cannot be reached: the build's cast fails."""

    def build_and_run_instance(self, ctxt, *args, **kwargs):
        raise exception.NovaException('no compute host answers')


class QuotaEnforcementTest(fakes.APITestCase):

    def set_quota(self, path=QUOTAS, **limits):
        response = self.request('PUT', path,
                                {'quota_set': dict(limits, force=True)})
        self.assertEqual(200, response.status_int, response.text)

    def create(self):
        return self.request('POST', '/v2.1/servers', {'server': {
            'name': 'new-vm', 'imageRef': fakes.IMAGE.id,
            'flavorRef': '1'}}, token=fakes.USER_TOKEN)

    def live(self):
        return objects.Instance.get_all(self.ctx)

    def test_each_limit_refuses_create_and_nothing_is_kept(self):
        # The flavor takes 1 vCPU and 512 MiB.
        for limits, message in (
                ({'instances': 0},
                 'Quota exceeded for instances: Requested 1, but already '
                 'used 0 of 0 instances'),
                ({'cores': 0},
                 'Quota exceeded for cores: Requested 1, but already used '
                 '0 of 0 cores'),
                ({'ram': 511},
                 'Quota exceeded for ram: Requested 512, but already used '
                 '0 of 511 ram'),
                ({'cores': 0, 'ram': 0},
                 'Quota exceeded for cores, ram: Requested 1, 512, but '
                 'already used 0, 0 of 0, 0 cores, ram')):
            with self.subTest(limits=limits):
                self.request('DELETE', QUOTAS)
                self.set_quota(**limits)
                response = self.create()
                self.assertEqual(message, self.assertFault(
                    response, 403, 'forbidden'))
                self.assertEqual([], objects.Instance.get_all(
                    self.ctx, include_deleted=True))
                self.assertEqual([], objects.Port.get_all(self.ctx))
                self.assertEqual([], self.compute_rpc.methods())

    def test_a_user_limit_refuses_within_a_roomy_project(self):
        self.set_quota(path=QUOTAS + '?user_id=alice', instances=0)
        self.assertFault(self.create(), 403, 'forbidden')
        self.assertEqual([], self.live())
        # Another user of the project is not held by alice's limit.
        self.make_instance(user_id='bob')
        self.request('DELETE', QUOTAS + '?user_id=alice')
        self.assertEqual(202, self.create().status_int)

    def test_the_last_one_fits_and_the_next_does_not(self):
        self.set_quota(instances=2)
        self.make_instance()
        self.assertEqual(202, self.create().status_int)
        self.assertFault(self.create(), 403, 'forbidden')
        self.assertEqual(2, len(self.live()))

    def test_a_failed_build_still_counts_until_deleted(self):
        self.set_quota(instances=1)
        self.compute_api.compute_rpcapi = FailingCast()
        response = self.create()
        self.assertEqual(500, response.status_int, response.text)
        (failed,) = self.live()
        self.assertEqual(vm_states.ERROR, failed.vm_state)
        self.compute_api.compute_rpcapi = self.compute_rpc
        # The ERROR instance holds its share, as in Nova.
        self.assertFault(self.create(), 403, 'forbidden')
        self.assertEqual([failed.uuid], [i.uuid for i in self.live()])
        # Deleted (locally: its host is down), it counts no more.
        self.set_down(self.host1)
        self.set_down(self.host2)
        self.assertEqual(204, self.request(
            'DELETE', '/v2.1/servers/%s' % failed.uuid).status_int)
        self.assertTrue(self.reload(failed).deleted)
        self.host1.heartbeat()
        self.assertEqual(202, self.create().status_int)

    def test_other_projects_do_not_count(self):
        self.set_quota(instances=1)
        self.make_instance(project_id='other')
        self.make_instance(project_id='other', name='vm2')
        self.assertEqual(202, self.create().status_int)

    def test_key_pairs_are_counted_per_user(self):
        self.set_quota(key_pairs=1)
        path = '/v2.1/os-keypairs'

        def create(name, token=fakes.USER_TOKEN):
            return self.request('POST', path, {'keypair': {
                'name': name, 'public_key': sample_keys.RSA}}, token=token)
        self.assertEqual(200, create('k1').status_int)
        self.assertEqual('Maximum number of key pairs exceeded',
                         self.assertFault(create('k2'), 403, 'forbidden'))
        self.assertEqual(['k1'], [k.name for k in keypair_obj.KeyPair
                                  .get_by_user(self.ctx, 'alice')])
        # bob (same project) has his own count.
        self.assertEqual(200, create('k1', token='bob:demo').status_int)
        # A deleted pair frees its place.
        self.assertEqual(202, self.request('DELETE', path + '/k1',
                                           token=fakes.USER_TOKEN)
                         .status_int)
        self.assertEqual(200, create('k2').status_int)


class RecheckTest(fakes.APITestCase):
    """The counts made once the rows are written (``recheck_quota``)."""

    def test_instances_over_the_limit_are_found(self):
        ctx = nova_context.RequestContext(user_id='alice',
                                          project_id='demo')
        quotas.set_limits('demo', None, {'instances': 1})
        self.make_instance()
        quotas.recheck_instances(ctx)       # at the limit: fine
        self.make_instance(name='vm2')
        self.assertRaises(exception.TooManyInstances,
                          quotas.recheck_instances, ctx)
        self.flags(recheck_quota=False, group='quota')
        quotas.recheck_instances(ctx)

    def test_each_level_of_limits_is_read_once(self):
        # The class defaults, the project's and the user's: the user's
        # scope builds on the project's instead of reading it again.
        ctx = nova_context.RequestContext(user_id='alice',
                                          project_id='demo')
        quotas.set_limits('demo', None, {'instances': 5})
        quotas.set_limits('demo', 'alice', {'instances': 1})
        self.make_instance()
        with dbf.recorded_statements() as statements:
            self.assertRaises(exception.TooManyInstances,
                              quotas.check_instances, ctx,
                              flavor_catalog.get_by_flavor_id(ctx, '1'))
        tables = [table for s in statements
                  for table in ('quota_classes', 'project_user_quotas',
                                'quotas')
                  if 'FROM %s ' % table in s + ' ']
        self.assertEqual(['quota_classes', 'quotas', 'project_user_quotas'],
                         tables)

    def _counts_of_instances(self, statements):
        return [s for s in statements
                if 'FROM instances' in s and 'count(' in s]

    def test_both_scopes_are_counted_in_one_read(self):
        # alice may have 1 of the project's 5: the project's 3 fit it,
        # her 2 do not; bob's scope is the project's.
        alice = nova_context.RequestContext(user_id='alice',
                                            project_id='demo')
        bob = nova_context.RequestContext(user_id='bob', project_id='demo')
        quotas.set_limits('demo', None, {'instances': 5})
        quotas.set_limits('demo', 'alice', {'instances': 2})
        self.make_instance(user_id='bob')
        self.make_instance(name='vm2')
        self.make_instance(name='gone').destroy()
        flavor = flavor_catalog.get_by_flavor_id(alice, '1')
        with dbf.recorded_statements() as statements:
            quotas.check_instances(alice, flavor)
        self.assertEqual(1, len(self._counts_of_instances(statements)))
        self.make_instance(name='vm3')
        self.assertRaises(exception.TooManyInstances,
                          quotas.check_instances, alice, flavor)
        quotas.check_instances(bob, flavor, count=2)
        self.assertRaises(exception.TooManyInstances,
                          quotas.check_instances, bob, flavor, count=3)

    def test_nothing_is_counted_when_nothing_limits_instances(self):
        ctx = nova_context.RequestContext(user_id='alice',
                                          project_id='demo')
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        self.make_instance()
        flavor = flavor_catalog.get_by_flavor_id(ctx, '1')
        with dbf.recorded_statements() as statements:
            quotas.check_instances(ctx, flavor, count=1000)
            quotas.recheck_instances(ctx)
        self.assertEqual([], self._counts_of_instances(statements))
        # A limit on cores alone is a limit: counted again.
        quotas.set_limits('demo', 'alice', {'cores': 1})
        self.assertRaises(exception.TooManyInstances,
                          quotas.check_instances, ctx, flavor)

    def test_key_pairs_over_the_limit_are_found(self):
        ctx = nova_context.RequestContext(user_id='alice',
                                          project_id='demo')
        quotas.set_limits('demo', None, {'key_pairs': 1})
        for name in ('k1', 'k2'):
            keypair_obj.KeyPair(name=name, user_id='alice', fingerprint='f',
                                public_key=sample_keys.RSA).create()
        self.assertRaises(exception.KeypairLimitExceeded,
                          quotas.check_key_pairs, ctx, 'alice',
                          recheck=True)
        self.assertTrue(CONF.quota.recheck_quota)

    def test_metadata_items(self):
        ctx = nova_context.RequestContext(user_id='alice',
                                          project_id='demo')
        quotas.check_metadata_items(ctx, {str(i): 'v' for i in range(128)})
        with self.assertRaises(exception.MetadataLimitExceeded) as caught:
            quotas.check_metadata_items(
                ctx, {str(i): 'v' for i in range(129)})
        self.assertEqual('Maximum number of metadata items exceeds 128',
                         caught.exception.format_message())
        self.assertEqual(403, caught.exception.code)
        quotas.set_limits('demo', None, {'metadata_items': -1})
        quotas.check_metadata_items(ctx, {str(i): 'v' for i in range(500)})


class MetadataQuotaTest(fakes.APITestCase):
    """``metadata_items`` holds wherever a server's metadata is set: at
    create and through the metadata calls (merged with what the server
    has), and a refused call changes nothing."""

    def setUp(self):
        super().setUp()
        response = self.request('PUT', QUOTAS, {'quota_set': {
            'metadata_items': 2, 'force': True}})
        self.assertEqual(200, response.status_int, response.text)

    def create(self, metadata):
        return self.request('POST', '/v2.1/servers', {'server': {
            'name': 'new-vm', 'imageRef': fakes.IMAGE.id, 'flavorRef': '1',
            'metadata': metadata}}, token=fakes.USER_TOKEN)

    def test_create_over_the_limit_is_refused_and_creates_nothing(self):
        self.assertFault(self.create({'a': '1', 'b': '2', 'c': '3'}), 403,
                         'forbidden')
        self.assertEqual([], objects.Instance.get_all(
            self.ctx, include_deleted=True))
        self.assertEqual(202, self.create({'a': '1', 'b': '2'}).status_int)

    def test_merged_metadata_counts_what_the_server_has(self):
        instance = self.make_instance()
        metadata_obj.InstanceMetadata.replace(self.ctx, instance.uuid,
                                              {'a': '1'})
        path = '/v2.1/servers/%s/metadata' % instance.uuid
        # a stays: a, b and c would be three.
        self.assertFault(self.request(
            'POST', path, {'metadata': {'b': '2', 'c': '3'}},
            token=fakes.USER_TOKEN), 403, 'forbidden')
        self.assertEqual({'a': '1'}, metadata_obj.InstanceMetadata.get(
            self.ctx, instance.uuid))
        # Replacing counts only the new set; one key more merges to three.
        response = self.request('PUT', path,
                                {'metadata': {'b': '2', 'c': '3'}},
                                token=fakes.USER_TOKEN)
        self.assertEqual(200, response.status_int, response.text)
        self.assertFault(self.request(
            'PUT', path + '/d', {'meta': {'d': '4'}},
            token=fakes.USER_TOKEN), 403, 'forbidden')
        self.assertEqual({'b': '2', 'c': '3'},
                         metadata_obj.InstanceMetadata.get(self.ctx,
                                                           instance.uuid))
