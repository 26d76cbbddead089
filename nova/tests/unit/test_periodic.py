import threading

from nova import context as nova_context
from nova import periodic
from nova.tests import base


class Manager:
    def __init__(self, interval=7):
        self.interval = interval

    @periodic.periodic_task(spacing=30)
    def _every_thirty(self, context):
        pass

    @periodic.periodic_task()
    def _default_spacing(self, context):
        pass

    @periodic.periodic_task(spacing=lambda self: self.interval,
                            run_immediately=True)
    def _per_host(self, context):
        pass

    @periodic.periodic_task(spacing=0)
    def _disabled(self, context):
        pass

    def not_a_task(self, context):
        pass


class Recorder:
    """Counts runs; lets a test wait for the n-th without sleeping."""

    def __init__(self):
        self.runs = []
        self.cond = threading.Condition()

    def on_run(self, task, error):
        with self.cond:
            self.runs.append((task.name, error))
            self.cond.notify_all()

    def wait_for(self, count, timeout=10):
        with self.cond:
            return self.cond.wait_for(lambda: len(self.runs) >= count,
                                      timeout)


class TestTasksOf(base.TestCase):

    def test_collects_marked_methods_with_their_spacing(self):
        self.flags(periodic_interval=45)
        tasks = {t.name: t for t in periodic.tasks_of(Manager(interval=3))}
        self.assertEqual({'_every_thirty', '_default_spacing', '_per_host'},
                         set(tasks))
        self.assertEqual(30, tasks['_every_thirty'].spacing)
        self.assertEqual(45, tasks['_default_spacing'].spacing)
        self.assertEqual(3, tasks['_per_host'].spacing)
        self.assertTrue(tasks['_per_host'].run_immediately)

    def test_callable_spacing_can_disable_a_task(self):
        names = [t.name for t in periodic.tasks_of(Manager(interval=0))]
        self.assertNotIn('_per_host', names)


class TestScheduler(base.TestCase):

    def _scheduler(self, tasks, recorder, **kw):
        scheduler = periodic.PeriodicScheduler(
            tasks, context_factory=nova_context.get_admin_context,
            on_run=recorder.on_run, **kw)
        scheduler.start()
        self.addCleanup(scheduler.stop, 10)
        return scheduler

    def test_a_failing_task_is_logged_and_runs_again(self):
        contexts = []

        def flaky(context):
            contexts.append(context)
            raise RuntimeError('boom')

        recorder = Recorder()
        task = periodic.Task('flaky', flaky, spacing=0.001,
                             run_immediately=True)
        scheduler = self._scheduler([task], recorder)
        self.assertTrue(recorder.wait_for(3))
        self.assertTrue(scheduler.stop(10))
        self.assertTrue(all(isinstance(e, RuntimeError)
                            for _, e in recorder.runs))
        self.assertIsInstance(contexts[0], nova_context.RequestContext)
        self.assertTrue(contexts[0].is_admin)

    def test_runs_are_skipped_while_should_run_says_no(self):
        # A compute host whose hypervisor is away: no run until it is back.
        available = threading.Event()
        asked = threading.Semaphore(0)

        def should_run():
            asked.release()
            return available.is_set()

        recorder = Recorder()
        task = periodic.Task('sync', lambda context: None, spacing=0.001,
                             run_immediately=True)
        self._scheduler([task], recorder, should_run=should_run)
        for _ in range(5):
            self.assertTrue(asked.acquire(timeout=10))
        self.assertEqual([], recorder.runs)
        available.set()
        self.assertTrue(recorder.wait_for(2))

    def test_a_task_never_overlaps_itself(self):
        active = []
        overlaps = []
        lock = threading.Lock()

        def slowish(context):
            with lock:
                active.append(1)
                if len(active) > 1:
                    overlaps.append(len(active))
            # Give a second run every chance to start if it could.
            threading.Event().wait(0.005)
            with lock:
                active.pop()

        recorder = Recorder()
        task = periodic.Task('slowish', slowish, spacing=0.0001,
                             run_immediately=True)
        scheduler = self._scheduler([task], recorder)
        self.assertTrue(recorder.wait_for(5))
        scheduler.stop(10)
        self.assertEqual([], overlaps)

    def test_tasks_run_independently(self):
        blocker = threading.Event()
        self.addCleanup(blocker.set)

        def stuck(context):
            blocker.wait(10)

        recorder = Recorder()
        tasks = [periodic.Task('stuck', stuck, spacing=0.001,
                               run_immediately=True),
                 periodic.Task('quick', lambda ctx: None, spacing=0.001,
                               run_immediately=True)]
        scheduler = self._scheduler(tasks, recorder)
        self.assertTrue(recorder.wait_for(3))
        self.assertEqual({'quick'}, {name for name, _ in recorder.runs})
        blocker.set()
        self.assertTrue(scheduler.stop(10))

    def test_stop_ends_every_task_thread(self):
        recorder = Recorder()
        task = periodic.Task('t', lambda ctx: None, spacing=0.001,
                             run_immediately=True)
        scheduler = self._scheduler([task], recorder)
        self.assertTrue(recorder.wait_for(1))
        self.assertTrue(scheduler.stop(10))
        after_stop = len(recorder.runs)
        # Threads have ended: nothing is left that could run it again.
        self.assertFalse(any(t.name == 'periodic-t'
                             for t in threading.enumerate()))
        self.assertEqual(after_stop, len(recorder.runs))

    def test_first_run_is_jittered_up_to_the_fuzzy_delay(self):
        class Rand:
            calls = []

            def uniform(self, low, high):
                self.calls.append((low, high))
                return 0.0

        rand = Rand()
        recorder = Recorder()
        task = periodic.Task('t', lambda ctx: None, spacing=0.001,
                             run_immediately=True)
        self._scheduler([task], recorder, fuzzy_delay=2.5, rand=rand)
        self.assertTrue(recorder.wait_for(1))
        self.assertEqual([(0, 2.5)], rand.calls)

    def test_run_once_returns_the_error(self):
        def broken(context):
            raise ValueError('x')

        scheduler = periodic.PeriodicScheduler(
            [], context_factory=nova_context.get_admin_context)
        error = scheduler.run_once(periodic.Task('b', broken, spacing=1))
        self.assertIsInstance(error, ValueError)
