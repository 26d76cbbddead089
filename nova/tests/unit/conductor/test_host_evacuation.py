"""Host-evacuate runs in the conductor, on a real SQLite database.

The conductor is the real one (its target choice and claims included);
the compute hosts are ``ScriptedCompute``: each target ends an evacuation
at once, through the evacuation state machine, landed or (a target in
``broken``) failed with a fault, or holds it in flight. The functional
tests (``nova/tests/functional/test_evacuate_host.py``) run real hosts.
"""

import threading
import time

from nova.conductor import manager as conductor_manager
from nova import exception
from nova.model import vm_states
from nova import objects
from nova.objects import host_evacuation as run_obj
from nova.objects import migration as migration_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import scripted_compute

TIMEOUT = 30


def wait_for(predicate, what):
    """Until ``predicate()`` holds (a condition, not a time)."""
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for %s' % what)
        time.sleep(0.005)


class HostEvacuationTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.flags(host='conductor1')
        self.flags(host_evacuate_poll_interval=0.01, group='conductor')
        self.ctx = dbf.admin_context()
        self.compute = scripted_compute.ScriptedCompute()
        self.conductor = self.new_conductor()
        self.source = dbf.make_service(self.ctx, 'a', up=False)
        for name in ('b', 'c', 'd'):
            dbf.make_service(self.ctx, name)

    def new_conductor(self):
        conductor = conductor_manager.ConductorManager(self.compute)
        self.addCleanup(conductor.cleanup_host)
        return conductor

    def boot(self, count, **fields):
        return sorted((dbf.make_instance(self.ctx, 'a', **fields)
                       for _ in range(count)), key=lambda i: i.uuid)

    def start(self, target_host=None):
        run = run_obj.HostEvacuation.create(
            self.ctx, 'a', objects.Instance.get_by_host(self.ctx, 'a'),
            target_host=target_host)
        self.conductor.run_host_evacuation(self.ctx, run.uuid)
        return run

    def fresh(self, run):
        return run_obj.HostEvacuation.get_by_uuid(self.ctx, run.uuid)

    def run_to_end(self, target_host=None):
        run = self.start(target_host)
        wait_for(lambda: self.fresh(run).ended, 'the run to end')
        run = self.fresh(run)
        return run, {i.instance_uuid: i for i in run.instances()}

    def targets(self, item):
        return [(a.target, a.outcome) for a in item.attempt_list()]

    def instance(self, instance):
        return objects.Instance.get_by_uuid(self.ctx, instance.uuid)

    def migrations(self, instance):
        return objects.Migration.get_by_filters(
            self.ctx, instance_uuid=instance.uuid)


class TestRun(HostEvacuationTestCase):

    def test_every_instance_lands_and_the_run_finishes(self):
        booted = self.boot(5)
        elsewhere = dbf.make_instance(self.ctx, 'b')
        run, items = self.run_to_end()
        self.assertEqual((run_obj.FINISHED, 'conductor1'),
                         (run.status, run.conductor))
        self.assertEqual({i.uuid for i in booted}, set(items))
        self.assertNotIn(elsewhere.uuid, items)
        for instance in booted:
            item = items[instance.uuid]
            fresh = self.instance(instance)
            self.assertEqual((run_obj.DONE, fresh.host),
                             (item.outcome, item.host))
            self.assertIn(fresh.host, ('b', 'c', 'd'))
            self.assertEqual([(fresh.host, run_obj.DONE)],
                             self.targets(item))
            (migration,) = self.migrations(instance)
            self.assertEqual(migration_obj.DONE, migration.status)
        # The conductor's own choice spread them.
        self.assertEqual({'b', 'c', 'd'},
                         {self.instance(i).host for i in booted})

    def test_at_most_the_workers_at_a_time(self):
        self.flags(host_evacuate_workers=2, group='conductor')
        booted = self.boot(5)
        self.compute.hold.update(i.uuid for i in booted)
        run = self.start()

        def outcomes():
            return [i.outcome for i in self.fresh(run).instances()]

        wait_for(lambda: outcomes().count(run_obj.IN_PROGRESS) == 2,
                 'two in progress')
        self.assertEqual(3, outcomes().count(run_obj.NOT_STARTED))
        self.assertEqual(2, len(self.compute.rebuilds))
        for instance in booted:
            # The slot frees when an evacuation ends, not before.
            wait_for(lambda: instance.uuid in dict(self.compute.rebuilds),
                     'the next request')
            self.assertLessEqual(
                len(self.compute.rebuilds)
                - sum(1 for i in self.fresh(run).instances() if i.ended),
                2)
            self.compute.release(instance.uuid)
        wait_for(lambda: self.fresh(run).ended, 'the run to end')
        self.assertEqual({run_obj.DONE},
                         {i.outcome for i in self.fresh(run).instances()})

    def test_a_failed_target_is_retried_elsewhere_once(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        (instance,) = self.boot(1)
        self.compute.broken['b'] = exception.NovaException('no bridge')
        run, items = self.run_to_end()
        item = items[instance.uuid]
        # The chooser's order (same room: the name) sends it to b first;
        # the retry leaves b out.
        self.assertEqual([('b', run_obj.FAILED), ('c', run_obj.DONE)],
                         self.targets(item))
        self.assertEqual((run_obj.DONE, 'c'), (item.outcome, item.host))
        self.assertIn('b: no bridge', item.message)
        self.assertEqual('c', self.instance(instance).host)
        self.assertEqual([migration_obj.FAILED, migration_obj.DONE],
                         [m.status for m in self.migrations(instance)])
        self.assertEqual(run_obj.FINISHED, run.status)

    def test_a_target_failing_twice_in_a_row_is_skipped(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        booted = self.boot(4)
        self.compute.broken['b'] = exception.NovaException('no bridge')
        run, items = self.run_to_end()
        self.assertEqual(
            [[('b', 'failed'), ('c', 'done')],
             [('b', 'failed'), ('d', 'done')],
             [('c', 'done')], [('d', 'done')]],
            [self.targets(items[i.uuid]) for i in booted])
        self.assertEqual({'b': 'failed 2 times in a row'},
                         run.skipped_targets)

    def test_no_target_left_fails_saying_so(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        booted = self.boot(3)
        for name in ('b', 'c', 'd'):
            self.compute.broken[name] = exception.NovaException(
                'no bridge on %s' % name)
        run, items = self.run_to_end()
        first, second, third = (items[i.uuid] for i in booted)
        self.assertEqual([('b', 'failed'), ('c', 'failed')],
                         self.targets(first))
        self.assertEqual([('b', 'failed'), ('c', 'failed')],
                         self.targets(second))
        self.assertEqual([('d', 'failed')], self.targets(third))
        self.assertIn('not retried: no target left: d failed for it; b '
                      'skipped (failed 2 times in a row); c skipped (failed '
                      '2 times in a row)', third.message)
        for instance in booted:
            item = items[instance.uuid]
            fresh = self.instance(instance)
            self.assertEqual((run_obj.FAILED, 'a'), (item.outcome,
                                                     item.host))
            self.assertEqual(('a', vm_states.ERROR, None),
                             (fresh.host, fresh.vm_state, fresh.task_state))
        # No request was made for the third's missing retry.
        self.assertEqual(1, len(self.migrations(booted[2])))

    def test_refused_instances_are_not_retried(self):
        ok, = self.boot(1)
        suspended, = self.boot(1, vm_state=vm_states.SUSPENDED)
        run, items = self.run_to_end()
        item = items[suspended.uuid]
        self.assertEqual(run_obj.REFUSED, item.outcome)
        self.assertIn('suspended', item.message)
        self.assertEqual([], self.migrations(suspended))
        self.assertEqual(run_obj.DONE, items[ok.uuid].outcome)

    def test_no_valid_host_is_not_retried(self):
        for name in ('b', 'c', 'd'):
            service = objects.Service.get_by_host_and_binary(
                self.ctx, name, 'nova-compute')
            service.disabled = True
            service.save()
        instance, = self.boot(1)
        run, items = self.run_to_end()
        item = items[instance.uuid]
        self.assertEqual([(None, run_obj.FAILED)], self.targets(item))
        self.assertIn('not retried: the conductor found no target for it',
                      item.message)
        self.assertIn('NoValidHost', item.message)

    def test_named_target_first_then_the_conductors_choice(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        booted = self.boot(3)
        self.compute.broken['d'] = exception.NovaException('no bridge')
        run, items = self.run_to_end(target_host='d')
        self.assertEqual(
            [[('d', 'failed'), ('b', 'done')],
             [('d', 'failed'), ('c', 'done')], [('b', 'done')]],
            [self.targets(items[i.uuid]) for i in booted])

    def test_a_run_is_run_once(self):
        self.boot(1)
        run, _items = self.run_to_end()
        self.conductor.run_host_evacuation(self.ctx, run.uuid)
        self.assertEqual(1, len(self.compute.rebuilds))
        self.assertEqual(run_obj.FINISHED, self.fresh(run).status)

    def test_an_empty_host_finishes_at_once(self):
        run, items = self.run_to_end()
        self.assertEqual((run_obj.FINISHED, {}), (run.status, items))


class TestWokenByTheTarget(HostEvacuationTestCase):
    """With a poll interval of an hour, only the targets' word that an
    evacuation ended (``evacuation_ended``) moves a run on: each test
    would hang, not pass, without it."""

    def setUp(self):
        super().setUp()
        self.flags(host_evacuate_poll_interval=3600, group='conductor')
        self.flags(host_evacuate_workers=1, group='conductor')

    def migration_of(self, instance):
        wait_for(lambda: self.migrations(instance), 'its migration')
        return self.migrations(instance)[-1]

    def item(self, run, instance):
        return {i.instance_uuid: i
                for i in self.fresh(run).instances()}[instance.uuid]

    def test_the_word_of_the_end_moves_the_run_on(self):
        first, second = self.boot(2)
        self.compute.hold.update((first.uuid, second.uuid))
        run = self.start()
        wait_for(lambda: len(self.compute.rebuilds) == 1,
                 'the first request')
        held = next(i for i in (first, second)
                    if i.uuid == self.compute.rebuilds[0][0])
        other = second if held is first else first
        migration = self.migration_of(held)
        wait_for(lambda: migration.uuid in self.conductor._ends.watched(),
                 'the watch to begin')
        # A word before the rows say it ended changes nothing: the
        # watcher decides from the rows.
        self.conductor.evacuation_ended(self.ctx, migration.uuid)
        self.compute.release(held.uuid)
        self.assertEqual(run_obj.IN_PROGRESS, self.item(run, held).outcome)
        self.conductor.evacuation_ended(self.ctx, migration.uuid)
        wait_for(lambda: self.item(run, held).outcome == run_obj.DONE,
                 'the first instance done')
        # Its slot went to the next one.
        wait_for(lambda: len(self.compute.rebuilds) == 2,
                 'the second request')
        self.compute.release(other.uuid)
        self.conductor.evacuation_ended(self.ctx,
                                        self.migration_of(other).uuid)
        wait_for(lambda: self.fresh(run).ended, 'the run to end')
        self.assertEqual(run_obj.FINISHED, self.fresh(run).status)

    def test_a_stopping_conductor_wakes_its_watchers(self):
        (held,) = self.boot(1)
        self.compute.hold.add(held.uuid)
        run = self.start()
        migration = self.migration_of(held)
        wait_for(lambda: migration.uuid in self.conductor._ends.watched(),
                 'the watch to begin')
        stopper = threading.Thread(target=self.conductor.cleanup_host)
        stopper.start()
        wait_for(lambda: not stopper.is_alive(), 'the conductor to stop')
        self.assertEqual(run_obj.INTERRUPTED, self.fresh(run).status)


class TestInterrupted(HostEvacuationTestCase):

    def test_a_stopping_conductor_interrupts_its_run(self):
        self.flags(host_evacuate_workers=1, group='conductor')
        held, waiting = self.boot(2)
        self.compute.hold.add(held.uuid)
        run = self.start()
        wait_for(lambda: self.compute.rebuilds, 'the first request')
        self.conductor.cleanup_host()
        run = self.fresh(run)
        self.assertEqual(run_obj.INTERRUPTED, run.status)
        items = {i.instance_uuid: i for i in run.instances()}
        self.assertEqual(run_obj.IN_PROGRESS, items[held.uuid].outcome)
        self.assertIn('when the conductor stopped',
                      items[held.uuid].message)
        self.assertEqual(run_obj.NOT_STARTED, items[waiting.uuid].outcome)
        self.assertEqual([], self.migrations(waiting))

    def test_a_restarted_conductor_marks_its_old_runs_interrupted(self):
        done, held = self.boot(2)
        self.compute.hold.add(held.uuid)
        run = self.start()
        wait_for(lambda: {i.instance_uuid: i.outcome for i in
                          self.fresh(run).instances()}.get(done.uuid)
                 == run_obj.DONE, 'the first instance done')
        # The process dies: its threads stop without a word, the row
        # still says running.
        other_conductor = run_obj.HostEvacuation.create(
            self.ctx, 'a', [], target_host=None)
        self.assertTrue(other_conductor.take('conductor2'))
        self.conductor._stopping.set()
        wait_for(lambda: not any(t.is_alive() for t in self.conductor._runs),
                 'the old threads')
        killed = self.fresh(run)
        killed.status = run_obj.RUNNING
        killed.save()
        self.assertEqual(run_obj.RUNNING, self.fresh(run).status)

        self.new_conductor().init_host()

        run = self.fresh(run)
        self.assertEqual(run_obj.INTERRUPTED, run.status)
        self.assertIn('conductor conductor1 stopped', run.message)
        items = {i.instance_uuid: i for i in run.instances()}
        self.assertEqual(run_obj.DONE, items[done.uuid].outcome)
        self.assertIn('conductor conductor1 stopped',
                      items[held.uuid].message)
        # Another conductor's run is its own business.
        self.assertEqual(run_obj.RUNNING,
                         self.fresh(other_conductor).status)


class TestMovedMeanwhile(HostEvacuationTestCase):

    def test_an_instance_that_left_the_host_is_refused(self):
        moved, stays = self.boot(2)
        run = run_obj.HostEvacuation.create(
            self.ctx, 'a', objects.Instance.get_by_host(self.ctx, 'a'))
        # Evacuated by hand (it landed on d) before the run began.
        instance = self.instance(moved)
        instance.host = instance.node = 'd'
        instance.save()
        self.conductor.run_host_evacuation(self.ctx, run.uuid)
        wait_for(lambda: self.fresh(run).ended, 'the run to end')
        items = {i.instance_uuid: i for i in self.fresh(run).instances()}
        self.assertEqual(run_obj.REFUSED, items[moved.uuid].outcome)
        self.assertIn('the server is on d now, no longer on a',
                      items[moved.uuid].message)
        self.assertEqual([], self.migrations(moved))
        self.assertEqual('d', self.instance(moved).host)
        self.assertEqual(run_obj.DONE, items[stays.uuid].outcome)
