"""The evacuate action by microversion, against the real compute API."""

from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.unit.api.openstack import fakes


class EvacuateTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.set_down(self.host1)
        self.instance = self.make_instance(host='host1')

    def evacuate(self, argument, version=None, token=fakes.ADMIN_TOKEN,
                 instance=None):
        return self.action(instance or self.instance,
                           {'evacuate': argument}, version=version,
                           token=token)

    def assertUntouched(self, instance=None):
        reloaded = self.reload(instance or self.instance)
        self.assertEqual(('host1', None, vm_states.ACTIVE),
                         (reloaded.host, reloaded.task_state,
                          reloaded.vm_state))
        self.assertEqual([], objects.Migration.get_by_filters(
            self.ctx, instance_uuid=reloaded.uuid))
        self.assertEqual([], self.conductor_rpc.casts)

    def test_evacuate_at_21_passes_on_shared_storage(self):
        response = self.evacuate({'host': 'host2',
                                  'onSharedStorage': 'False'})
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(b'', response.body)
        self.assertEqual(task_states.REBUILDING,
                         self.reload(self.instance).task_state)
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=self.instance.uuid)
        self.assertEqual((migration_obj.EVACUATION, migration_obj.ACCEPTED,
                          'host1', 'host2'),
                         (migration.migration_type, migration.status,
                          migration.source_compute, migration.dest_compute))
        ((name, _args, kwargs),) = self.conductor_rpc.casts
        self.assertEqual('evacuate_instance', name)
        self.assertEqual(('host2', False), (kwargs['host'],
                                            kwargs['on_shared_storage']))

    def test_on_shared_storage_required_below_214(self):
        self.assertFault(self.evacuate({'host': 'host2'}), 400, 'badRequest',
                         "'onSharedStorage' is a required property")
        self.assertUntouched()

    def test_on_shared_storage_refused_from_214(self):
        self.assertFault(self.evacuate({'onSharedStorage': False},
                                       version='2.14'), 400, 'badRequest',
                         "'onSharedStorage' was unexpected")
        self.assertUntouched()

    def test_from_214_the_hosts_decide(self):
        response = self.evacuate({}, version='2.14')
        self.assertEqual(200, response.status_int, response.text)
        ((_name, _args, kwargs),) = self.conductor_rpc.casts
        self.assertEqual((None, None), (kwargs['host'],
                                        kwargs['on_shared_storage']))

    def test_force_from_229_only_and_needs_a_host(self):
        self.assertFault(self.evacuate({'host': 'host2', 'force': True},
                                       version='2.28'), 400, 'badRequest')
        self.assertFault(self.evacuate({'force': True}, version='2.29'), 400,
                         'badRequest', "Can't force to a non-provided")
        self.assertUntouched()
        response = self.evacuate({'host': 'host2', 'force': True},
                                 version='2.29')
        self.assertEqual(200, response.status_int, response.text)

    def test_admin_pass_is_refused(self):
        self.assertFault(self.evacuate({'onSharedStorage': True,
                                        'adminPass': 'x'}), 400,
                         'badRequest', "can't be changed on existing disk")
        self.assertFault(self.evacuate({'adminPass': 'x'}, version='2.14'),
                         400, 'badRequest', 'adminPass is not supported')
        self.assertUntouched()

    def test_target_must_differ_from_source(self):
        self.assertFault(self.evacuate({'host': 'host1'}, version='2.14'),
                         400, 'badRequest', "can't be the same one")
        self.assertUntouched()

    def test_bad_host_names_are_400(self):
        for host in ('../host2', 'host 2', '', 5):
            with self.subTest(host=host):
                self.assertFault(self.evacuate({'host': host},
                                               version='2.14'), 400,
                                 'badRequest')
        self.assertUntouched()

    def test_unknown_target_is_404(self):
        self.assertFault(self.evacuate({'host': 'nowhere'}, version='2.14'),
                         404, 'itemNotFound')
        self.assertUntouched()

    def test_source_still_up_is_400(self):
        instance = self.make_instance(host='host2')
        self.assertFault(self.evacuate({}, version='2.14',
                                       instance=instance), 400,
                         'badRequest', 'host2')
        self.assertEqual(None, self.reload(instance).task_state)

    def test_admin_only(self):
        self.assertFault(self.evacuate({}, version='2.14',
                                       token=fakes.USER_TOKEN), 403,
                         'forbidden', 'os_compute_api:os-evacuate')
        self.assertUntouched()

    def test_second_evacuation_is_409(self):
        self.assertEqual(200, self.evacuate({}, version='2.14').status_int)
        self.assertFault(self.evacuate({}, version='2.14'), 409,
                         'conflictingRequest')
        self.assertEqual(1, len(objects.Migration.get_by_filters(
            self.ctx, instance_uuid=self.instance.uuid)))

    def test_a_named_target_that_is_down_is_400(self):
        # Nova answers 400 (ComputeServiceUnavailable is an Invalid): the
        # request cannot succeed until the operator acts.
        self.set_down(self.host2)
        self.assertFault(self.evacuate({'host': 'host2'}, version='2.29'),
                         400, 'badRequest',
                         'Compute service of host2 is unavailable')
        self.assertUntouched()

    def test_force_refused_again_from_268(self):
        self.assertFault(self.evacuate({'host': 'host2', 'force': True},
                                       version='2.68'), 400, 'badRequest',
                         "'force' was unexpected")
        self.assertFault(self.evacuate({'host': 'host2', 'force': False},
                                       version='2.95'), 400, 'badRequest',
                         "'force' was unexpected")
        self.assertUntouched()
        response = self.evacuate({'host': 'host2', 'force': True},
                                 version='2.67')
        self.assertEqual(200, response.status_int, response.text)

    def test_below_295_the_evacuation_keeps_the_vm_state(self):
        response = self.evacuate({'host': 'host2'}, version='2.94')
        self.assertEqual(200, response.status_int, response.text)
        ((name, _args, kwargs),) = self.conductor_rpc.casts
        self.assertEqual('evacuate_instance', name)
        self.assertNotIn('target_state', kwargs)

    def test_from_295_the_evacuation_is_asked_to_end_stopped(self):
        response = self.evacuate({'host': 'host2'}, version='2.95')
        self.assertEqual(200, response.status_int, response.text)
        self.assertEqual(b'', response.body)
        ((name, _args, kwargs),) = self.conductor_rpc.casts
        self.assertEqual(('evacuate_instance', 'host2', vm_states.STOPPED),
                         (name, kwargs['host'], kwargs['target_state']))
        reloaded = self.reload(self.instance)
        self.assertEqual((task_states.REBUILDING, vm_states.ACTIVE),
                         (reloaded.task_state, reloaded.vm_state))
        (migration,) = objects.Migration.get_by_filters(
            self.ctx, instance_uuid=self.instance.uuid)
        self.assertEqual(migration_obj.ACCEPTED, migration.status)
