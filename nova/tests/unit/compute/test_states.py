from nova.compute import states
from nova import exception
from nova.model import task_states
from nova.model import vm_states
from nova.tests import base


class _Instance:
    def __init__(self, vm_state, task_state=None):
        self.uuid = 'a3c1e4d8-9b2f-4c1e-8d7a-1f2e3d4c5b6a'
        self.vm_state = vm_state
        self.task_state = task_state


class TestTransitionTable(base.TestCase):

    def test_every_state_named_in_the_table_exists(self):
        for t in states.TRANSITIONS.values():
            self.assertTrue(t.from_vm_states <= vm_states.ALL, t.action)
            self.assertTrue(
                t.from_task_states <= task_states.ALL | {None}, t.action)
            if t.task_state is not None:
                self.assertIn(t.task_state, task_states.ALL)
            for target in (t.on_success, t.on_failure):
                if target not in (states.KEEP, states.KEEP_OR_RECOVER):
                    self.assertIn(target, vm_states.ALL, t.action)

    def test_failed_start_leaves_instance_stopped(self):
        # doc/source/cleanup.rst, "Operation by operation": a failed start
        # keeps the instance STOPPED (and its disks), so the next start can
        # work.
        t = states.get('start')
        self.assertEqual(vm_states.STOPPED,
                         t.vm_state_after(False, vm_states.STOPPED))

    def test_failed_resume_leaves_instance_suspended(self):
        t = states.get('resume')
        self.assertEqual(vm_states.SUSPENDED,
                         t.vm_state_after(False, vm_states.SUSPENDED))

    def test_failed_spawn_rebuild_evacuate_hard_reboot_are_errors(self):
        for action in ('build', 'rebuild', 'evacuate', 'reboot_hard',
                       'resume_on_host_boot'):
            self.assertEqual(vm_states.ERROR,
                             states.get(action).vm_state_after(
                                 False, vm_states.ACTIVE), action)

    def test_evacuate_keeps_vm_state_on_success(self):
        t = states.get('evacuate')
        self.assertEqual(vm_states.STOPPED,
                         t.vm_state_after(True, vm_states.STOPPED))
        self.assertEqual(vm_states.ACTIVE,
                         t.vm_state_after(True, vm_states.ACTIVE))

    def test_evacuate_stopped_ends_stopped_and_starts_like_evacuate(self):
        # Microversion 2.95's evacuation: the same start, another end.
        evacuate = states.get('evacuate')
        stopped = states.get('evacuate_stopped')
        self.assertEqual(
            (evacuate.from_vm_states, evacuate.from_task_states,
             evacuate.task_state, evacuate.later_task_states),
            (stopped.from_vm_states, stopped.from_task_states,
             stopped.task_state, stopped.later_task_states))
        for before in (vm_states.ACTIVE, vm_states.STOPPED, vm_states.ERROR):
            self.assertEqual(vm_states.STOPPED,
                             stopped.vm_state_after(True, before), before)
            self.assertEqual(vm_states.ERROR,
                             stopped.vm_state_after(False, before), before)

    def test_successful_evacuation_or_rebuild_recovers_an_error(self):
        for action in ('evacuate', 'rebuild'):
            self.assertEqual(vm_states.ACTIVE, states.get(action)
                             .vm_state_after(True, vm_states.ERROR), action)

    def test_failed_stop_keeps_vm_state(self):
        t = states.get('stop')
        self.assertEqual(vm_states.ACTIVE,
                         t.vm_state_after(False, vm_states.ACTIVE))

    def test_check_allows_and_returns_the_transition(self):
        t = states.check(_Instance(vm_states.STOPPED), 'start')
        self.assertEqual(task_states.POWERING_ON, t.task_state)

    def test_check_refuses_wrong_vm_state(self):
        self.assertRaises(exception.InstanceInvalidState, states.check,
                          _Instance(vm_states.ACTIVE), 'start')

    def test_check_refuses_busy_task_state(self):
        busy = _Instance(vm_states.ACTIVE, task_states.REBUILDING)
        self.assertRaises(exception.InstanceInvalidState, states.check,
                          busy, 'evacuate')

    def test_evacuate_allowed_states_are_active_stopped_error(self):
        t = states.get('evacuate')
        self.assertEqual({vm_states.ACTIVE, vm_states.STOPPED,
                          vm_states.ERROR}, set(t.from_vm_states))
        self.assertEqual((None,), states.expected_task_states('evacuate'))

    def test_hard_reboot_may_interrupt_a_soft_one(self):
        inst = _Instance(vm_states.ACTIVE, task_states.REBOOTING)
        self.assertRaises(exception.InstanceInvalidState, states.check,
                          inst, 'reboot_soft')
        states.check(inst, 'reboot_hard')

    def test_resume_on_host_boot_holds_a_task_that_blocks_evacuation(self):
        # While init_host starts a guest, the service reads as down; an
        # evacuation must then lose its compare-and-swap on task_state.
        resuming = states.get('resume_on_host_boot').task_state
        self.assertIsNotNone(resuming)
        self.assertNotIn(resuming, states.expected_task_states('evacuate'))
        self.assertRaises(exception.InstanceInvalidState, states.check,
                          _Instance(vm_states.ACTIVE, resuming), 'evacuate')

    def test_unknown_action(self):
        self.assertRaises(exception.InvalidInput, states.get, 'fly')

    def test_pause_goes_from_active_to_paused_and_back(self):
        pause, unpause = states.get('pause'), states.get('unpause')
        self.assertEqual(({vm_states.ACTIVE}, task_states.PAUSING,
                          vm_states.PAUSED),
                         (set(pause.from_vm_states), pause.task_state,
                          pause.vm_state_after(True, vm_states.ACTIVE)))
        self.assertEqual(({vm_states.PAUSED}, task_states.UNPAUSING,
                          vm_states.ACTIVE),
                         (set(unpause.from_vm_states), unpause.task_state,
                          unpause.vm_state_after(True, vm_states.PAUSED)))
        # A failure changes no vm_state: the guest keeps its memory.
        self.assertEqual(vm_states.ACTIVE,
                         pause.vm_state_after(False, vm_states.ACTIVE))
        self.assertEqual(vm_states.PAUSED,
                         unpause.vm_state_after(False, vm_states.PAUSED))

    def test_what_a_paused_server_allows(self):
        # The reference's rules: from PAUSED a server may be unpaused,
        # hard rebooted (it ends ACTIVE), snapshotted, backed up or
        # deleted; nothing else.
        paused = _Instance(vm_states.PAUSED)
        allowed = {action for action, t in states.TRANSITIONS.items()
                   if t.allows(paused.vm_state, paused.task_state)}
        self.assertEqual({'unpause', 'reboot_hard', 'snapshot', 'backup',
                          'delete'}, allowed)
        self.assertEqual(vm_states.ACTIVE, states.get('reboot_hard')
                         .vm_state_after(True, vm_states.PAUSED))

    def test_pause_needs_an_idle_active_server(self):
        for instance in (_Instance(vm_states.STOPPED),
                         _Instance(vm_states.SUSPENDED),
                         _Instance(vm_states.PAUSED),
                         _Instance(vm_states.ACTIVE, task_states.REBOOTING)):
            self.assertRaises(exception.InstanceInvalidState, states.check,
                              instance, 'pause')
        self.assertRaises(exception.InstanceInvalidState, states.check,
                          _Instance(vm_states.ACTIVE), 'unpause')
