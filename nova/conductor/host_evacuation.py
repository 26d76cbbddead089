"""Host-evacuate: evacuate every instance of a failed host, watch each to
its end, retry once elsewhere.

The API records the run (``nova.objects.host_evacuation``, every instance
``not-started``) and casts it to a conductor, which runs ``Runner.run``
in a thread of its own. The runner only requests evacuations and watches
them; each runs exactly as a single ``nova evacuate`` does
(``compute.api.API.evacuate``, then the conductor's ``evacuate_instance``:
the same checks, target choice and claims as every other placement).

* At most ``[conductor] host_evacuate_workers`` instances at a time; a
  retry keeps its instance's slot.
* First attempts go where the operator said (``target_host``) or where
  the conductor's ``TargetChooser`` puts them.
* An attempt's outcome comes from its migration row and the instance
  (``evacuation_watch``): done, or failed once the instance has no task
  left, with the fault (or the action's error) saying why. The rows are
  read again when the target says the evacuation ended
  (``evacuation_ends``), and every ``host_evacuate_poll_interval``.
* An instance whose attempt failed on a target is retried once, chosen by
  the same ``TargetChooser`` leaving out every target that failed for it
  and every target skipped in this run. A target that fails twice in a
  row (a success in between resets the count) is skipped for the rest of
  the run, for retries and first attempts alike. With no target left the
  instance is ``failed``, saying so; an evacuation the chooser could not
  place at all (no host with room) is not retried.
* Outcomes: ``done``, ``failed``, ``refused`` (the request's checks
  refused it: not retried); a run that stops early (its conductor stopped)
  leaves ``in-progress`` and ``not-started`` and is ``interrupted``.

Example (what the conductor's ``run_host_evacuation`` does)::

    run = run_obj.HostEvacuation.get_by_uuid(ctx, evacuation_uuid)
    if run.take(CONF.host):
        Runner(ctx, run, chooser, compute_rpcapi, local_conductor,
               stopping, ends).run()
"""

from concurrent import futures
import dataclasses
import threading

from oslo_log import log as logging

from nova.compute import api as compute_api
from nova.conductor import evacuation_ends
from nova.conductor import evacuation_watch
from nova.conf import CONF
from nova import context as nova_context
from nova import exception
from nova import objects
from nova.objects import host_evacuation as run_obj
from nova.objects import migration as migration_obj

LOG = logging.getLogger(__name__)

MAX_ATTEMPTS = 2
SKIP_AFTER_FAILURES = 2


class TargetHealth:
    """Consecutive failures per target in one run; skipped from the
    second. Shared by the run's workers."""

    def __init__(self, skip_after=SKIP_AFTER_FAILURES):
        self.skip_after = skip_after
        self._consecutive: dict[str, int] = {}
        self._skipped: dict[str, str] = {}
        self._lock = threading.Lock()

    def record(self, target: str | None, succeeded: bool) -> None:
        if target is None:
            return
        with self._lock:
            if succeeded:
                self._consecutive[target] = 0
                return
            count = self._consecutive.get(target, 0) + 1
            self._consecutive[target] = count
            if count >= self.skip_after and target not in self._skipped:
                self._skipped[target] = 'failed %d times in a row' % count

    def skipped(self) -> dict[str, str]:
        with self._lock:
            return dict(self._skipped)


@dataclasses.dataclass
class _Next:
    """The next attempt of an instance: where, what to leave out, or why
    there is none."""
    target: str | None = None
    exclude: tuple = ()
    none_left: str | None = None


class Runner:
    """One run of host-evacuate in the conductor that took it."""

    def __init__(self, context, run: run_obj.HostEvacuation, chooser,
                 compute_rpcapi, local_conductor, stopping: threading.Event,
                 ends: evacuation_ends.EndSignals, poll_interval=None):
        """``local_conductor(exclude)``: the conductor a request hands its
        evacuation to (this one, leaving out ``exclude``); ``stopping``:
        set when the conductor stops, which then wakes ``ends``
        (``evacuation_ends.EndSignals``: the targets' word that an
        evacuation ended)."""
        self.context = context
        self.chooser = chooser
        self.compute_rpcapi = compute_rpcapi
        self.local_conductor = local_conductor
        self.run_row = run
        self.stopping = stopping
        self.poll_interval = (CONF.conductor.host_evacuate_poll_interval
                              if poll_interval is None else poll_interval)
        self.health = TargetHealth()
        self.ends = ends

    # -- the run -------------------------------------------------------------

    def run(self) -> None:
        """Run to the end; never leaves the run ``running`` behind while
        this conductor lives."""
        try:
            self._run()
        except Exception as e:
            LOG.exception('host-evacuate %s stopped', self.run_row.uuid)
            self.run_row.end(run_obj.INTERRUPTED,
                             'interrupted: %s' % exception.message_of(e))

    def _run(self) -> None:
        run = self.run_row
        items = run.instances()
        workers = min(CONF.conductor.host_evacuate_workers,
                      max(1, len(items)))
        LOG.info('host-evacuate %(run)s of %(host)s: %(n)d instances, '
                 '%(w)d at a time', {'run': run.uuid, 'host':
                                     run.source_host, 'n': len(items),
                                     'w': workers})
        with futures.ThreadPoolExecutor(
                max_workers=workers,
                thread_name_prefix='host-evacuate') as pool:
            for future in [pool.submit(self._guarded, item)
                           for item in items]:
                future.result()
        run.skipped_targets = self.health.skipped()
        run.save()
        if self.stopping.is_set():
            run.end(run_obj.INTERRUPTED,
                    run_obj.interrupted_message(CONF.host))
        else:
            run.end(run_obj.FINISHED)
        LOG.info('host-evacuate %(run)s of %(host)s: %(status)s',
                 {'run': run.uuid, 'host': run.source_host,
                  'status': run.status})

    def _guarded(self, item) -> None:
        # One instance's trouble (the database gone for a moment) never
        # stops the others; it is said on its row.
        try:
            self._evacuate(item)
        except Exception as e:
            LOG.exception('host-evacuate of instance %s stopped',
                          item.instance_uuid)
            item.outcome = (run_obj.FAILED if item.attempts
                            else run_obj.NOT_STARTED)
            item.message = self._text(item, [
                'host-evacuate stopped following it: %s'
                % exception.message_of(e)])
            item.save()

    # -- one instance --------------------------------------------------------

    def _evacuate(self, item) -> None:
        attempts: list[run_obj.Attempt] = []
        notes: list[str] = []
        while True:
            if self.stopping.is_set():
                self._leave(item, attempts, notes)
                return
            following = self._next(item, attempts)
            if following.none_left is not None:
                notes.append('%s: %s' % ('not retried' if attempts
                                         else 'not evacuated',
                                         following.none_left))
                self._finish(item, attempts, run_obj.FAILED, notes)
                return
            request_id = nova_context.generate_request_id()
            attempt = self._request(item, following, request_id)
            attempts.append(attempt)
            if attempt.outcome == run_obj.REFUSED:
                self._finish(item, attempts, run_obj.REFUSED
                             if len(attempts) == 1 else run_obj.FAILED,
                             notes)
                return
            self._save(item, attempts, run_obj.IN_PROGRESS, notes)
            self._watch(item, attempt, request_id)
            if attempt.outcome == run_obj.IN_PROGRESS:
                self._leave(item, attempts, notes)
                return
            self.health.record(attempt.target,
                               attempt.outcome == run_obj.DONE)
            if attempt.outcome == run_obj.DONE:
                self._finish(item, attempts, run_obj.DONE, notes)
                return
            if len(attempts) >= MAX_ATTEMPTS:
                self._finish(item, attempts, run_obj.FAILED, notes)
                return
            if attempt.target is None:
                notes.append('not retried: the conductor found no target '
                             'for it')
                self._finish(item, attempts, run_obj.FAILED, notes)
                return

    def _next(self, item, attempts) -> _Next:
        skipped = self.health.skipped()
        named = self.run_row.target_host
        if not attempts and named and named not in skipped:
            return _Next(target=named)
        failed_for = {a.target for a in attempts
                      if a.target and a.outcome in (run_obj.FAILED,
                                                    run_obj.REFUSED)}
        exclude = tuple(sorted(failed_for | set(skipped)))
        if not exclude:
            return _Next()
        try:
            instance = objects.Instance.get_by_uuid(self.context,
                                                    item.instance_uuid)
        except exception.InstanceNotFound:
            return _Next(none_left='the server was deleted meanwhile')
        usable = self.chooser.candidates(
            self.context, instance, self.run_row.on_shared_storage,
            exclude=exclude)
        if usable:
            return _Next(exclude=exclude)
        reasons = ['%s failed for it' % h for h in sorted(failed_for)]
        reasons += ['%s skipped (%s)' % (h, why)
                    for h, why in sorted(skipped.items())
                    if h not in failed_for]
        return _Next(none_left='no target left: ' + '; '.join(reasons))

    def _request(self, item, following: _Next,
                 request_id: str) -> run_obj.Attempt:
        """Request one evacuation, as ``nova evacuate`` would."""
        context = dataclasses.replace(self.context, request_id=request_id)
        try:
            instance = objects.Instance.get_by_uuid(context,
                                                    item.instance_uuid)
        except exception.InstanceNotFound as e:
            return run_obj.Attempt(target=following.target,
                                   outcome=run_obj.REFUSED,
                                   message=exception.message_of(e))
        if instance.host != self.run_row.source_host:
            # It left the failed host since the run was recorded (another
            # evacuation moved it): it is not this run's to move.
            return run_obj.Attempt(
                target=following.target, outcome=run_obj.REFUSED,
                message='the server is on %s now, no longer on %s'
                        % (instance.host, self.run_row.source_host))
        known = {m.uuid for m in self._evacuations(context,
                                                   item.instance_uuid)}
        api = compute_api.API(
            self.compute_rpcapi, self.local_conductor(following.exclude),
            host_chooser=self.chooser)
        try:
            migration = api.evacuate(
                context, instance, host=following.target,
                on_shared_storage=self.run_row.on_shared_storage)
        except Exception as e:
            # Refused by the request's checks (nothing recorded), or
            # accepted and then not placed (its migration says so). Only
            # a request that took the instance (its action is recorded)
            # made a migration: one made meanwhile by another request is
            # not this attempt's.
            taken = objects.InstanceAction.get_by_request_id(
                context, item.instance_uuid, request_id) is not None
            made = [m for m in self._evacuations(context,
                                                 item.instance_uuid)
                    if m.uuid not in known]
            if not taken or not made:
                return run_obj.Attempt(target=following.target,
                                       outcome=run_obj.REFUSED,
                                       message=exception.message_of(e))
            migration = made[-1]
        return run_obj.Attempt(
            target=migration.dest_compute or following.target,
            migration_uuid=migration.uuid)

    @staticmethod
    def _evacuations(context, instance_uuid) -> list:
        found = objects.Migration.get_by_filters(
            context, instance_uuid=instance_uuid,
            migration_type=migration_obj.EVACUATION)
        return found

    def _watch(self, item, attempt, request_id) -> None:
        """Until the attempt ends (or the conductor stops): its rows read
        now, when its target says it ended, and every poll interval."""
        with self.ends.expecting(attempt.migration_uuid) as woken:
            while True:
                # Cleared before the read: an end said during the read
                # wakes the wait below at once.
                woken.clear()
                seen = evacuation_watch.read_attempt(
                    self.context, attempt.migration_uuid, request_id)
                attempt.target = seen.dest_compute or attempt.target
                verdict = evacuation_watch.decide(seen)
                if verdict is not None:
                    attempt.outcome = verdict.outcome
                    attempt.message = verdict.message
                    item.host = seen.host
                    return
                # The conductor sets ``stopping`` before it wakes every
                # watcher: a wake-up cleared above is seen here.
                if self.stopping.is_set():
                    return
                woken.wait(self.poll_interval)
                if self.stopping.is_set():
                    return

    # -- writing the instance's row --------------------------------------

    @staticmethod
    def _text(item, notes) -> str | None:
        lines = ['%s: %s' % (a.target, a.message) if a.target
                 else a.message for a in item.attempt_list()
                 if a.outcome in (run_obj.FAILED, run_obj.REFUSED)
                 and a.message]
        return '\n'.join(lines + list(notes)) or None

    def _save(self, item, attempts, outcome, notes) -> None:
        item.set_attempts(attempts)
        item.outcome = outcome
        item.message = self._text(item, notes)
        item.save()

    def _finish(self, item, attempts, outcome, notes) -> None:
        LOG.info('host-evacuate %(run)s: instance %(uuid)s %(outcome)s',
                 {'run': self.run_row.uuid, 'uuid': item.instance_uuid,
                  'outcome': outcome})
        self._save(item, attempts, outcome, notes)

    def _leave(self, item, attempts, notes) -> None:
        """The conductor is stopping: say where the instance stands."""
        if attempts:
            notes.append('still evacuating to %s when the conductor '
                         'stopped' % (attempts[-1].target
                                      or 'a target the conductor chooses'))
            self._save(item, attempts, run_obj.IN_PROGRESS, notes)
        else:
            notes.append('not requested: the conductor stopped first')
            self._save(item, attempts, run_obj.NOT_STARTED, notes)
