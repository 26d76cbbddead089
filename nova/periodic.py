"""Periodic tasks: a method decorator and a small scheduler.

A manager marks the methods to run periodically::

    class ComputeManager:
        @periodic.periodic_task(spacing=60)
        def _poll_rebooting_instances(self, context):
            ...

        @periodic.periodic_task(spacing=lambda self: self.settings.x)
        def _heal_something(self, context):
            ...

and the service runs them::

    scheduler = periodic.PeriodicScheduler(
        periodic.tasks_of(manager), context_factory=get_admin_context,
        fuzzy_delay=CONF.periodic_fuzzy_delay)
    scheduler.start()
    ...
    scheduler.stop()

Each task runs on its own thread, every ``spacing`` seconds (measured from
the end of the previous run, so a run never overlaps the previous one of
the same task), after a random initial delay of up to ``fuzzy_delay``
seconds so that hosts started together do not hit the database at once.
An exception is logged and the task runs again next time.
"""

import dataclasses
import random
import threading
import time
import typing

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

_SPACING_ATTR = '_periodic_spacing'
_IMMEDIATE_ATTR = '_periodic_run_immediately'


def periodic_task(spacing=None, run_immediately=False):
    """Mark a method ``f(self, context)`` as a periodic task.

    ``spacing``: seconds between the end of a run and the start of the
    next one; ``None`` means ``[DEFAULT] periodic_interval``; a callable
    taking the manager is evaluated when the scheduler starts (per-host
    settings); a value <= 0 disables the task. ``run_immediately``: first
    run right at start (plus the fuzzy delay) instead of after one spacing.
    Always call it: ``@periodic_task()``, not ``@periodic_task``.
    """
    def decorate(func):
        setattr(func, _SPACING_ATTR, spacing)
        setattr(func, _IMMEDIATE_ATTR, run_immediately)
        return func

    return decorate


@dataclasses.dataclass(frozen=True)
class Task:
    name: str
    func: typing.Callable
    spacing: float
    run_immediately: bool = False


def tasks_of(obj, default_spacing=None):
    """The periodic tasks of ``obj`` as ``Task`` values, bound to it.

    Disabled tasks (spacing <= 0) are left out.
    """
    if default_spacing is None:
        from nova.conf import CONF
        default_spacing = CONF.periodic_interval
    tasks = []
    for name in sorted(dir(type(obj))):
        method = getattr(type(obj), name, None)
        if not callable(method) or not hasattr(method, _SPACING_ATTR):
            continue
        spacing = getattr(method, _SPACING_ATTR)
        if spacing is None:
            spacing = default_spacing
        elif callable(spacing):
            spacing = spacing(obj)
        if spacing is None or spacing <= 0:
            LOG.debug('Periodic task %s is disabled', name)
            continue
        tasks.append(Task(name=name, func=getattr(obj, name),
                          spacing=float(spacing),
                          run_immediately=getattr(method, _IMMEDIATE_ATTR)))
    return tasks


class PeriodicScheduler:
    """Runs ``Task`` values, each on its own thread, until ``stop()``.

    ``context_factory()`` builds the context handed to each run.
    ``on_run(task, error)`` is called after every run (tests, metrics).
    ``should_run()``, if given, is asked before each scheduled run; a False
    skips that run (a compute host whose hypervisor is unavailable has
    nothing to sync, and every run would only log the same failure).
    """

    def __init__(self, tasks, context_factory, fuzzy_delay=0.0,
                 on_run=None, name='periodic', rand=None, should_run=None):
        self._tasks = list(tasks)
        self._should_run = should_run
        self._context_factory = context_factory
        self._fuzzy_delay = max(0.0, float(fuzzy_delay))
        self._on_run = on_run
        self._name = name
        self._random = rand or random.Random()
        self._stop = threading.Event()
        self._threads = []

    @property
    def tasks(self):
        return list(self._tasks)

    def start(self):
        if self._threads:
            raise RuntimeError('periodic scheduler already started')
        self._stop.clear()
        for task in self._tasks:
            thread = threading.Thread(
                target=self._loop, args=(task,), daemon=True,
                name='%s-%s' % (self._name, task.name))
            self._threads.append(thread)
            thread.start()

    def stop(self, timeout=None):
        """Stop scheduling and wait for runs in progress to end.

        Returns True when every task thread ended within ``timeout``.
        """
        self._stop.set()
        deadline = None if timeout is None else time.monotonic() + timeout
        ended = True
        for thread in self._threads:
            remaining = (None if deadline is None
                         else max(0.0, deadline - time.monotonic()))
            thread.join(remaining)
            ended = ended and not thread.is_alive()
        self._threads = []
        return ended

    def _first_delay(self, task):
        jitter = self._random.uniform(0, self._fuzzy_delay)
        return jitter if task.run_immediately else task.spacing + jitter

    def _loop(self, task):
        delay = self._first_delay(task)
        while not self._stop.wait(delay):
            if self._should_run is None or self._should_run():
                self.run_once(task)
            else:
                LOG.debug('Periodic task %s skipped', task.name)
            delay = task.spacing

    def run_once(self, task):
        """Run ``task`` now in this thread; log (not raise) its failure."""
        error = None
        started = time.monotonic()
        try:
            task.func(self._context_factory())
        except Exception as e:
            error = e
            LOG.exception('Periodic task %s failed', task.name)
        else:
            LOG.debug('Periodic task %(name)s ran in %(secs).3f s',
                      {'name': task.name,
                       'secs': time.monotonic() - started})
        if self._on_run is not None:
            try:
                self._on_run(task, error)
            except Exception:
                LOG.exception('on_run callback failed for %s', task.name)
        return error
