"""POST /servers/{id}/action: start, stop, reboot, suspend, resume,
pause, unpause, os-resetState; status codes and what the database holds
afterwards."""

from nova import exception
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.unit.api.openstack import fakes


class ComputesTooOldToPause(fakes.RecordingRPC):
    """An RPC client capped below 1.4 (``compute/rpcapi.py``): it
    refuses the pause and unpause casts."""

    def pause_instance(self, ctxt, instance):
        raise exception.PauseUnsupported()

    unpause_instance = pause_instance


class ActionsTest(fakes.APITestCase):

    def assertAccepted(self, instance, body, task_state, cast, **kwargs):
        response = self.action(instance, body, **kwargs)
        self.assertEqual(202, response.status_int, response.text)
        self.assertEqual(b'', response.body)
        self.assertEqual(task_state, self.reload(instance).task_state)
        self.assertEqual(cast, self.compute_rpc.casts[-1][0])

    def test_stop_start(self):
        active = self.make_instance()
        self.assertAccepted(active, {'os-stop': None},
                            task_states.POWERING_OFF, 'stop_instance',
                            token=fakes.USER_TOKEN)
        stopped = self.make_instance(vm_state=vm_states.STOPPED)
        self.assertAccepted(stopped, {'os-start': None},
                            task_states.POWERING_ON, 'start_instance')

    def test_reboot(self):
        soft = self.make_instance()
        self.assertAccepted(soft, {'reboot': {'type': 'SOFT'}},
                            task_states.REBOOTING, 'reboot_instance')
        self.assertEqual('SOFT', self.compute_rpc.casts[-1][2].get(
            'reboot_type', self.compute_rpc.casts[-1][1][-1]))
        hard = self.make_instance()
        self.assertAccepted(hard, {'reboot': {'type': 'hard'}},
                            task_states.REBOOTING_HARD, 'reboot_instance')

    def test_suspend_resume(self):
        self.assertAccepted(self.make_instance(), {'suspend': None},
                            task_states.SUSPENDING, 'suspend_instance')
        self.assertAccepted(
            self.make_instance(vm_state=vm_states.SUSPENDED),
            {'resume': None}, task_states.RESUMING, 'resume_instance')

    def test_pause_unpause(self):
        self.assertAccepted(self.make_instance(), {'pause': None},
                            task_states.PAUSING, 'pause_instance',
                            token=fakes.USER_TOKEN)
        paused = self.make_instance(vm_state=vm_states.PAUSED)
        self.assertAccepted(paused, {'unpause': None},
                            task_states.UNPAUSING, 'unpause_instance',
                            token=fakes.USER_TOKEN)
        (action,) = objects.InstanceAction.get_by_instance_uuid(
            self.ctx, paused.uuid)
        self.assertEqual('unpause', action.action)

    def test_pause_unpause_in_the_wrong_state_is_409(self):
        active = self.make_instance()
        paused = self.make_instance(vm_state=vm_states.PAUSED)
        busy = self.make_instance(task_state=task_states.PAUSING)
        for instance, body in ((paused, {'pause': None}),
                               (active, {'unpause': None}),
                               (busy, {'pause': None}),
                               (paused, {'os-stop': None}),
                               (paused, {'suspend': None})):
            with self.subTest(body=body, vm_state=instance.vm_state):
                self.assertFault(self.action(instance, body), 409,
                                 'conflictingRequest')
        self.assertEqual((vm_states.PAUSED, None),
                         (self.reload(paused).vm_state,
                          self.reload(paused).task_state))
        self.assertEqual([], self.compute_rpc.casts)

    def test_pause_unpause_bad_body_or_server(self):
        instance = self.make_instance()
        for body in ({'pause': 'now'}, {'unpause': {'a': 1}}):
            with self.subTest(body=body):
                self.assertFault(self.action(instance, body), 400,
                                 'badRequest')
        foreign = self.make_instance(project_id='p2')
        for server_id in ('3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c',
                          foreign.uuid):
            for body in ({'pause': None}, {'unpause': None}):
                self.assertFault(self.action(server_id, body,
                                             token=fakes.USER_TOKEN), 404,
                                 'itemNotFound')
        self.assertEqual([None, None], [self.reload(i).task_state
                                        for i in (instance, foreign)])
        self.assertEqual([], self.compute_rpc.casts)

    def test_pause_refused_by_old_computes_is_409_and_releases(self):
        self.compute_api.compute_rpcapi = ComputesTooOldToPause()
        active = self.make_instance()
        paused = self.make_instance(vm_state=vm_states.PAUSED)
        for instance, body in ((active, {'pause': None}),
                               (paused, {'unpause': None})):
            self.assertFault(self.action(instance, body), 409,
                             'conflictingRequest', 'RPC version 1.4')
            self.assertIsNone(self.reload(instance).task_state)

    def test_invalid_state_is_409_and_changes_nothing(self):
        stopped = self.make_instance(vm_state=vm_states.STOPPED)
        for body in ({'os-stop': None}, {'suspend': None},
                     {'resume': None}, {'reboot': {'type': 'SOFT'}}):
            with self.subTest(body=body):
                self.assertFault(self.action(stopped, body), 409,
                                 'conflictingRequest')
        busy = self.make_instance(task_state=task_states.REBUILDING)
        self.assertFault(self.action(busy, {'os-stop': None}), 409,
                         'conflictingRequest')
        self.assertEqual(vm_states.STOPPED, self.reload(stopped).vm_state)
        self.assertIsNone(self.reload(stopped).task_state)
        self.assertEqual(task_states.REBUILDING,
                         self.reload(busy).task_state)
        self.assertEqual([], self.compute_rpc.casts)
        self.assertEqual([], objects.InstanceAction.get_by_instance_uuid(
            self.ctx, stopped.uuid))

    def test_malformed_actions_are_400_and_change_nothing(self):
        instance = self.make_instance()
        bodies = [
            {}, [], 'os-stop', {'os-stop': None, 'os-start': None},
            {'no-such-action': None}, {'reboot': None},
            {'reboot': {'type': 'WARM'}}, {'reboot': {}},
            {'reboot': {'type': 'SOFT', 'extra': 1}},
            {'os-stop': {'force': True}}, {'os-stop': 'now'},
            {'os-resetState': {'state': 'stopped'}},
            {'os-resetState': {}},
        ]
        for body in bodies:
            with self.subTest(body=body):
                self.assertFault(self.action(instance, body), 400,
                                 'badRequest')
        self.assertIsNone(self.reload(instance).task_state)
        self.assertEqual([], self.compute_rpc.casts)

    def test_unknown_action_message(self):
        self.assertFault(self.action(self.make_instance(),
                                     {'os-frobnicate': None}), 400,
                         'badRequest', 'There is no such action: '
                                       'os-frobnicate')

    def test_unknown_invalid_or_foreign_server_is_404(self):
        foreign = self.make_instance(project_id='p2')
        for server_id in ('3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c', 'x',
                          foreign.uuid):
            with self.subTest(server_id=server_id):
                self.assertFault(self.action(server_id, {'os-stop': None},
                                             token=fakes.USER_TOKEN), 404,
                                 'itemNotFound')
        self.assertIsNone(self.reload(foreign).task_state)

    def test_actions_the_project_does_not_do_name_their_server(self):
        """migrate, restore and forceDelete are the reference's: a 404
        for a server that is not there, and for one that is, 501 (cold
        migration) or 409 (nothing is ever soft-deleted here); nothing
        changes either way."""
        instance = self.make_instance()
        for body, status, code in (
                ({'migrate': None}, 501, 'notImplemented'),
                ({'restore': None}, 409, 'conflictingRequest'),
                ({'forceDelete': None}, 409, 'conflictingRequest')):
            with self.subTest(body=body):
                self.assertFault(self.action(
                    '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c', body), 404,
                    'itemNotFound')
                self.assertFault(self.action(instance, body), status, code)
                self.assertEqual(
                    (vm_states.ACTIVE, None, False),
                    (self.reload(instance).vm_state,
                     self.reload(instance).task_state,
                     self.reload(instance).deleted))
        self.assertEqual([], self.compute_rpc.casts)
        # Cold migration is an administrator's.
        self.assertFault(self.action(instance, {'migrate': None},
                                     token=fakes.USER_TOKEN), 403,
                         'forbidden')


class ResetStateTest(fakes.APITestCase):

    def test_reset_to_error_and_active(self):
        instance = self.make_instance(task_state=task_states.REBUILDING)
        response = self.action(instance, {'os-resetState': {
            'state': 'error'}})
        self.assertEqual(202, response.status_int, response.text)
        reloaded = self.reload(instance)
        self.assertEqual((vm_states.ERROR, None),
                         (reloaded.vm_state, reloaded.task_state))
        self.action(instance, {'os-resetState': {'state': 'active'}})
        self.assertEqual(vm_states.ACTIVE, self.reload(instance).vm_state)

    def test_reset_ends_an_evacuation_in_progress(self):
        instance = self.make_instance(task_state=task_states.REBUILDING)
        migration = objects.Migration(
            self.ctx, instance_uuid=instance.uuid, source_compute='host1',
            migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()
        self.action(instance, {'os-resetState': {'state': 'active'}})
        self.assertEqual(migration_obj.FAILED, objects.Migration.get_by_id(
            self.ctx, migration.id).status)

    def test_admin_only(self):
        instance = self.make_instance(task_state=task_states.REBUILDING)
        self.assertFault(self.action(instance, {'os-resetState': {
            'state': 'active'}}, token=fakes.USER_TOKEN), 403, 'forbidden',
            'os_compute_api:os-admin-actions:reset_state')
        self.assertEqual(task_states.REBUILDING,
                         self.reload(instance).task_state)
