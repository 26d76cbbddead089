"""Evacuate a whole host and wait for each instance's outcome.

The Compute API has no host-evacuate endpoint: the workflow runs in the
client, over the REST API only, and is both ``nova host-evacuate HOST
--wait`` and a Python API for scripts::

    from nova.cli import client, host_evacuate
    api = client.Client('http://127.0.0.1:8774/v2.1', 'admin:admin')
    api.negotiate('latest')
    report = host_evacuate.evacuate_host(api, 'compute1', max_concurrent=4)
    for item in report.instances:
        print(item.uuid, item.outcome, item.host, item.attempts_text(),
              item.message)
    raise SystemExit(0 if report.succeeded else 1)

What it does:

* Checks first, changing nothing: the host has a nova-compute service,
  which is down (or forced down); a named ``target_host`` exists, is not
  the source and is up and enabled (unless ``force``); the options are
  valid for the microversion.
* Requests the evacuation of every instance of the host (``GET
  /servers/detail?host=HOST&all_tenants=1``), at most ``max_concurrent``
  at a time. The first attempt goes where the conductor chooses (or to
  ``target_host``).
* Decides each attempt's outcome from the REST API only: the newest
  evacuation migration of the instance (``GET
  /os-migrations?instance_uuid=...``) created by this attempt, ``done``
  or ``completed`` is done, ``failed`` (once the instance has no task any
  more) is failed; the server's ``host``, status and ``fault`` (or, when
  the instance is not in ERROR, the error event of the attempt's action in
  ``os-instance-actions``) say where it is and why it failed.
* Retries an instance whose target failed once, on a target chosen here:
  an up, enabled nova-compute service (``GET /os-services``) other than
  the source, every target that already failed for this instance and
  every skipped target, the one this run loads least (servers it held at
  the start plus this run's evacuations to it); it is passed as the
  evacuate action's ``host``. The retry keeps the instance's slot, so the
  bound holds for first attempts and retries alike. A target that fails
  twice in a row (its attempts in the order their failures are seen; a
  success in between resets the count) is skipped for the rest of the run:
  neither retries nor later first attempts go there (those are then given
  a target chosen here as well, since the conductor does not know about
  the skip). With no target left the instance is failed, saying so. An
  evacuation the conductor could not place at all (no host with room) is
  not retried elsewhere: that would bypass the conductor's capacity check.
* A named target (the retry's, or one chosen after a skip) is taken as
  told by the conductor, without its capacity check: only the first
  attempts the conductor places are checked for room.
* Outcomes: ``done``; ``failed`` (its attempts failed, or no target was
  left); ``refused`` (the API refused the first request, e.g. the instance
  is in a state that cannot be evacuated; not retried); after ``timeout``
  seconds ``in-progress`` for those still running and ``not-started`` for
  those never requested.
"""

import dataclasses
import datetime
import time

from nova.cli import client as client_mod
from nova.cli import servers as servers_mod
from nova.model import binaries

DONE = 'done'
FAILED = 'failed'
REFUSED = 'refused'
IN_PROGRESS = 'in-progress'
NOT_STARTED = 'not-started'
ENDED = (DONE, FAILED, REFUSED)

# Who chose an attempt's target.
BY_CONDUCTOR = 'conductor'
BY_OPERATOR = 'operator'
BY_CLIENT = 'client'

MAX_ATTEMPTS = 2
SKIP_AFTER_FAILURES = 2
DEFAULT_MAX_CONCURRENT = 4
DEFAULT_POLL_INTERVAL = 2.0

COMPUTE_BINARY = binaries.COMPUTE
EVACUATION = 'evacuation'
MIGRATION_DONE = ('done', 'completed')
MIGRATION_FAILED = 'failed'


UsageError = client_mod.UsageError


@dataclasses.dataclass
class Attempt:
    """One evacuation request of an instance."""
    target: str | None           # the named or chosen target; None: none
    chosen_by: str               # BY_CONDUCTOR, BY_OPERATOR or BY_CLIENT
    outcome: str = IN_PROGRESS   # DONE, FAILED, REFUSED or IN_PROGRESS
    migration_id: int | None = None
    migration_status: str | None = None
    request_id: str | None = None
    message: str | None = None

    def text(self) -> str:
        if self.outcome == REFUSED and self.migration_id is None:
            return '%s refused' % (self.target or 'request')
        return '%s %s' % (self.target or '(no target)',
                          self.outcome.replace('-', ' '))


@dataclasses.dataclass
class InstanceOutcome:
    """What became of one instance of the host."""
    uuid: str
    name: str | None
    outcome: str
    host: str | None             # where the instance is now
    status: str | None           # its server status now
    status_before: str | None
    attempts: list = dataclasses.field(default_factory=list)
    message: str | None = None   # why it failed (every failed attempt)

    @property
    def migrations(self) -> list:
        """The ids of this run's evacuation migrations, oldest first."""
        return [a.migration_id for a in self.attempts
                if a.migration_id is not None]

    @property
    def retried(self) -> bool:
        return len(self.attempts) > 1

    def attempts_text(self) -> str:
        return ', '.join(a.text() for a in self.attempts) or '-'


@dataclasses.dataclass
class Progress:
    """Counts at one moment of a run (for a progress display)."""
    host: str
    total: int
    done: int
    failed: int
    refused: int
    in_progress: int
    waiting: int
    retried: int
    elapsed: float

    @property
    def ended(self) -> int:
        return self.done + self.failed + self.refused

    @property
    def eta(self) -> float | None:
        """Seconds left, from the average time per ended instance."""
        if not self.ended:
            return None
        return self.elapsed / self.ended * (self.total - self.ended)


@dataclasses.dataclass
class Report:
    host: str
    instances: list
    skipped_targets: dict        # target -> why
    elapsed: float
    timed_out: bool = False
    interrupted: bool = False

    @property
    def succeeded(self) -> bool:
        """Every instance done (also when the host held none), and the
        run was not interrupted."""
        return (not self.interrupted
                and all(i.outcome == DONE for i in self.instances))

    def count(self, outcome) -> int:
        return sum(1 for i in self.instances if i.outcome == outcome)


class TargetHealth:
    """Consecutive failures per target; skipped from the second."""

    def __init__(self, skip_after=SKIP_AFTER_FAILURES):
        self.skip_after = skip_after
        self.consecutive = {}
        self.skipped = {}

    def record(self, target, succeeded: bool) -> bool:
        """Count an attempt's end on ``target``; True if it is skipped
        from now on."""
        if target is None:
            return False
        if succeeded:
            self.consecutive[target] = 0
            return False
        self.consecutive[target] = self.consecutive.get(target, 0) + 1
        if (self.consecutive[target] >= self.skip_after
                and target not in self.skipped):
            self.skipped[target] = ('failed %d times in a row'
                                    % self.consecutive[target])
            return True
        return False


@dataclasses.dataclass
class _Work:
    server: dict
    status_before: str | None
    attempts: list = dataclasses.field(default_factory=list)
    known_migrations: set = dataclasses.field(default_factory=set)
    outcome: str | None = None
    notes: list = dataclasses.field(default_factory=list)
    # The last poll's error, if it failed (cleared by the next success).
    poll_error: str | None = None

    @property
    def uuid(self):
        return self.server['id']

    @property
    def current(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None


def _parse_time(text):
    for fmt in ('%Y-%m-%dT%H:%M:%SZ', '%Y-%m-%dT%H:%M:%S.%f',
                '%Y-%m-%dT%H:%M:%S'):
        try:
            return datetime.datetime.strptime(text, fmt)
        except (TypeError, ValueError):
            continue
    return None


def _last_error_line(traceback_text):
    """``NoValidHost: no host ...`` from a formatted traceback."""
    lines = [line.strip() for line in (traceback_text or '').splitlines()
             if line.strip()]
    if not lines:
        return None
    kind, sep, rest = lines[-1].partition(': ')
    if sep and ' ' not in kind:
        return '%s: %s' % (kind.rsplit('.', 1)[-1], rest)
    return lines[-1]


class HostEvacuation:
    """One host-evacuate run; ``run()`` returns its ``Report``.

    ``on_progress(Progress)`` is called after every round of requests and
    polls. ``clock`` and ``sleep`` default to ``time.monotonic`` and
    ``time.sleep``.
    """

    def __init__(self, client, host, max_concurrent=DEFAULT_MAX_CONCURRENT,
                 poll_interval=DEFAULT_POLL_INTERVAL, timeout=None,
                 target_host=None, on_shared_storage=False, force=False,
                 on_progress=None, clock=time.monotonic, sleep=time.sleep):
        if isinstance(max_concurrent, bool) or not isinstance(
                max_concurrent, int) or max_concurrent < 1:
            raise UsageError('max_concurrent must be a whole number of at '
                             'least 1, not %r' % (max_concurrent,))
        if not poll_interval or poll_interval <= 0:
            raise UsageError('poll_interval must be more than 0 seconds')
        if timeout is not None and timeout <= 0:
            raise UsageError('timeout must be more than 0 seconds')
        if force and not target_host:
            raise UsageError('force needs a named target host')
        self.client = client
        self.host = host
        self.max_concurrent = max_concurrent
        self.poll_interval = poll_interval
        self.timeout = timeout
        self.target_host = target_host
        self.on_shared_storage = on_shared_storage
        self.force = force
        self.on_progress = on_progress
        self.clock = clock
        self.sleep = sleep
        self.health = TargetHealth()
        self._pending = []
        self._active = []
        self._finished = []
        self._services = None
        self._base_load = {}
        self._started = None
        self._timed_out = False

    # -- checks, before anything changes ---------------------------------

    def _compute_services(self, host=None):
        services = self.client.get('/os-services', query={
            'host': host, 'binary': COMPUTE_BINARY})['services']
        return [s for s in services if s.get('binary') == COMPUTE_BINARY
                and (host is None or s.get('host') == host)]

    def check(self) -> list:
        """Validate the run; the servers of the host, by id."""
        # Raises CommandError for options the microversion refuses.
        self._body(self.target_host, self.force)
        source = self._compute_services(self.host)
        if not source:
            raise UsageError('No compute host named %s (no %s service on '
                             'it).' % (self.host, COMPUTE_BINARY))
        if source[0].get('state') == 'up':
            raise client_mod.CommandError(
                'The %s service of %s is up: evacuating needs it down '
                '(a failed host), or forced down (nova service-force-down '
                '%s %s) once the host is fenced.'
                % (COMPUTE_BINARY, self.host, self.host, COMPUTE_BINARY))
        if self.target_host:
            if self.target_host == self.host:
                raise UsageError('The target host %s is the host being '
                                 'evacuated.' % self.target_host)
            target = self._compute_services(self.target_host)
            if not target:
                raise UsageError('No compute host named %s (no %s service '
                                 'on it).' % (self.target_host,
                                              COMPUTE_BINARY))
            if not self.force and not self._usable(target[0]):
                raise client_mod.CommandError(
                    'The target host %s is not usable: its %s service is '
                    '%s and %s.' % (self.target_host, COMPUTE_BINARY,
                                    target[0].get('state'),
                                    target[0].get('status')))
        servers = self.client.get('/servers/detail', query={
            'host': self.host, 'all_tenants': '1'})['servers']
        return sorted(servers, key=lambda s: s['id'])

    @staticmethod
    def _usable(service) -> bool:
        return (service.get('state') == 'up'
                and service.get('status') == 'enabled')

    def _body(self, target, force):
        return servers_mod.evacuate_body(self.client, target,
                                         self.on_shared_storage, force)

    # -- the run -------------------------------------------------------------

    def run(self) -> Report:
        servers = self.check()
        self._started = self.clock()
        self._pending = [_Work(server=s, status_before=s.get('status'))
                         for s in servers]
        while True:
            if (self.timeout is not None
                    and (self._active or self._pending)
                    and self.clock() - self._started >= self.timeout):
                self._timed_out = True
                break
            self._fill()
            self._notify()
            if not self._active and not self._pending:
                break
            self.sleep(self.poll_interval)
            self._services = None
            for work in list(self._active):
                try:
                    self._check_attempt(work)
                    work.poll_error = None
                except client_mod.ClientException as e:
                    # The API did not answer this time; ask again at the
                    # next poll (a failure seen is not counted twice).
                    work.poll_error = str(e)
                if work.outcome is not None:
                    self._active.remove(work)
                    self._finished.append(work)
        if self._timed_out:
            self._refresh_servers(self._active)
        return self.report()

    def _refresh_servers(self, works):
        """Where those still in progress are, as the run ends."""
        for work in works:
            try:
                work.server = self.client.get(
                    '/servers/%s' % work.uuid)['server']
            except client_mod.ClientException:
                pass

    def progress(self) -> Progress:
        ended = [w.outcome for w in self._finished]
        return Progress(
            host=self.host,
            total=len(self._finished) + len(self._active)
            + len(self._pending),
            done=ended.count(DONE), failed=ended.count(FAILED),
            refused=ended.count(REFUSED), in_progress=len(self._active),
            waiting=len(self._pending),
            retried=sum(1 for w in self._finished + self._active
                        if len(w.attempts) > 1),
            elapsed=self._elapsed())

    def _elapsed(self):
        return 0.0 if self._started is None else self.clock() - self._started

    def _notify(self):
        if self.on_progress is not None:
            self.on_progress(self.progress())

    def report(self, interrupted=False) -> Report:
        """The outcome of every instance so far (also mid-run, e.g. after
        an interruption: those not ended are in progress or not started)."""
        why = ('the --timeout of %s s was reached' % self.timeout
               if self._timed_out else 'interrupted' if interrupted
               else 'the run stopped')
        items = []
        for work in self._finished + self._active + self._pending:
            outcome = work.outcome
            notes = list(work.notes)
            if outcome is None and work.attempts:
                outcome = IN_PROGRESS
                current = work.current
                notes.append('still %s on %s when %s' % (
                    current.migration_status or 'requested',
                    current.target or 'a target the conductor chooses',
                    why))
                if work.poll_error:
                    notes.append('last poll: %s' % work.poll_error)
            elif outcome is None:
                outcome = NOT_STARTED
                notes.append('not requested: %s first' % why)
                if work.poll_error:
                    notes.append('last try: %s' % work.poll_error)
            items.append(InstanceOutcome(
                uuid=work.uuid, name=work.server.get('name'),
                outcome=outcome,
                host=work.server.get('OS-EXT-SRV-ATTR:host'),
                status=work.server.get('status'),
                status_before=work.status_before,
                attempts=list(work.attempts),
                message=self._message(work, notes)))
        items.sort(key=lambda i: i.uuid)
        return Report(host=self.host, instances=items,
                      skipped_targets=dict(self.health.skipped),
                      elapsed=self._elapsed(), timed_out=self._timed_out,
                      interrupted=interrupted)

    @staticmethod
    def _message(work, notes):
        lines = []
        for attempt in work.attempts:
            if attempt.outcome in (FAILED, REFUSED) and attempt.message:
                lines.append('%s: %s' % (attempt.target, attempt.message)
                             if attempt.target else attempt.message)
        lines += notes
        return '\n'.join(lines) or None

    # -- starting attempts ------------------------------------------------

    def _fill(self):
        while self._pending and len(self._active) < self.max_concurrent:
            work = self._pending[0]
            try:
                self._first_attempt(work)
            except client_mod.ClientException as e:
                # Choosing its target needed the API, which did not
                # answer: nothing was requested; again at the next round.
                work.poll_error = str(e)
                return
            self._pending.pop(0)
            if work.outcome is None:
                self._active.append(work)
            else:
                self._finished.append(work)

    def _first_attempt(self, work):
        if (self.target_host
                and self.target_host not in self.health.skipped):
            self._start(work, self.target_host, BY_OPERATOR)
        elif self.target_host or self.health.skipped:
            target = self._choose(work)
            if target is None:
                self._finish(work, FAILED, note='not evacuated: %s'
                             % self._nothing_left(work))
                return
            self._start(work, target, BY_CLIENT)
        else:
            self._start(work, None, BY_CONDUCTOR)
        if work.current.outcome == REFUSED:
            self._finish(work, REFUSED)

    def _evacuations(self, uuid) -> list:
        """The instance's evacuation migrations, newest first."""
        migrations = self.client.get('/os-migrations', query={
            'instance_uuid': uuid,
            'migration_type': EVACUATION})['migrations']
        return sorted((m for m in migrations
                       if m.get('instance_uuid') == uuid
                       and m.get('migration_type', EVACUATION)
                       == EVACUATION),
                      key=lambda m: m['id'], reverse=True)

    def _start(self, work, target, chosen_by):
        """Request an attempt. Raises ClientException, having requested
        nothing, when the API does not answer before the request."""
        known = {m['id'] for m in self._evacuations(work.uuid)}
        attempt = Attempt(target=target, chosen_by=chosen_by)
        work.attempts.append(attempt)
        work.known_migrations = known
        body = self._body(target, self.force and chosen_by == BY_OPERATOR)
        try:
            _status, response, _answer = self.client.request(
                'POST', '/servers/%s/action' % work.uuid, body=body)
        except client_mod.ConnectionRefused as e:
            # No answer: the request may have been taken all the same.
            # If it made a migration, that one is followed.
            try:
                taken = any(m['id'] not in work.known_migrations
                            for m in self._evacuations(work.uuid))
            except client_mod.ClientException:
                taken = False
            if not taken:
                attempt.outcome = REFUSED
                attempt.message = str(e)
            return
        except client_mod.ClientException as e:
            attempt.outcome = REFUSED
            attempt.message = str(e)
            return
        attempt.request_id = response.getheader('X-OpenStack-Request-ID')

    # -- following attempts -------------------------------------------------

    def _check_attempt(self, work):
        """Follow the current attempt; on its failure, retry or end.

        Raises ClientException when the API does not answer; calling it
        again then carries on where it stopped."""
        attempt = work.current
        if attempt.outcome == FAILED:
            # Its failure was seen and counted; the retry was not made.
            self._retry_or_fail(work)
            return
        mine = [m for m in self._evacuations(work.uuid)
                if m['id'] not in work.known_migrations]
        if not mine:
            return
        migration = mine[0]
        attempt.migration_id = migration['id']
        attempt.migration_status = migration.get('status')
        attempt.target = migration.get('dest_compute') or attempt.target
        status = attempt.migration_status
        if status not in MIGRATION_DONE and status != MIGRATION_FAILED:
            return
        try:
            server = self.client.get('/servers/%s' % work.uuid)['server']
        except client_mod.NotFound:
            attempt.outcome = FAILED
            attempt.message = 'the server was deleted meanwhile'
            self._finish(work, FAILED)
            return
        if status in MIGRATION_DONE:
            work.server = server
            attempt.outcome = DONE
            self.health.record(attempt.target, True)
            if (work.status_before == 'SHUTOFF'
                    and server.get('status') != 'SHUTOFF'):
                work.notes.append(
                    'was SHUTOFF before the evacuation, is %s now'
                    % server.get('status'))
            self._finish(work, DONE)
            return
        if server.get('OS-EXT-STS:task_state') is not None:
            return          # the failure is still being cleaned up
        work.server = server
        attempt.outcome = FAILED
        attempt.message = self._why(server, migration, attempt)
        self.health.record(attempt.target, False)
        self._retry_or_fail(work)

    def _why(self, server, migration, attempt) -> str:
        fault = server.get('fault') or {}
        if server.get('status') == 'ERROR' and fault.get('message'):
            created = _parse_time(fault.get('created'))
            since = _parse_time(migration.get('created_at'))
            if (created is None or since is None
                    or created >= since.replace(microsecond=0)):
                return fault['message']
        if attempt.request_id:
            try:
                action = self.client.get(
                    '/servers/%s/os-instance-actions/%s'
                    % (server['id'], attempt.request_id))['instanceAction']
            except client_mod.ClientException:
                action = {}
            for event in reversed(action.get('events') or []):
                if event.get('result') == 'Error':
                    line = _last_error_line(event.get('traceback'))
                    if line:
                        return line
        return 'the evacuation failed (no fault recorded)'

    def _retry_or_fail(self, work):
        attempt = work.current
        if len(work.attempts) >= MAX_ATTEMPTS:
            self._finish(work, FAILED)
            return
        if attempt.target is None:
            self._finish(work, FAILED, note='not retried: the conductor '
                                            'found no target for it')
            return
        target = self._choose(work)
        if target is None:
            self._finish(work, FAILED, note='not retried: %s'
                         % self._nothing_left(work))
            return
        self._start(work, target, BY_CLIENT)
        if work.current.outcome == REFUSED:
            self._finish(work, FAILED)

    def _finish(self, work, outcome, note=None):
        work.outcome = outcome
        if note:
            work.notes.append(note)

    # -- choosing targets -----------------------------------------------

    def _usable_targets(self) -> list:
        if self._services is None:
            self._services = self._compute_services()
        return sorted(s['host'] for s in self._services
                      if self._usable(s) and s.get('host') != self.host)

    def _failed_for(self, work) -> set:
        return {a.target for a in work.attempts
                if a.target and a.outcome in (FAILED, REFUSED)}

    def _load(self, host) -> int:
        if host not in self._base_load:
            try:
                self._base_load[host] = len(self.client.get(
                    '/servers/detail', query={
                        'host': host, 'all_tenants': '1'})['servers'])
            except client_mod.ClientException:
                self._base_load[host] = 0
        ours = sum(1 for w in self._finished + self._active
                   for a in w.attempts
                   if a.target == host and a.outcome in (DONE, IN_PROGRESS))
        return self._base_load[host] + ours

    def _choose(self, work) -> str | None:
        excluded = self._failed_for(work) | set(self.health.skipped)
        candidates = [h for h in self._usable_targets()
                      if h not in excluded]
        if not candidates:
            return None
        return min(candidates, key=lambda h: (self._load(h), h))

    def _nothing_left(self, work) -> str:
        failed = self._failed_for(work)
        reasons = ['%s failed for it' % h for h in sorted(failed)]
        reasons += ['%s skipped (%s)' % (h, why) for h, why in
                    sorted(self.health.skipped.items()) if h not in failed]
        self._usable_targets()
        for service in sorted(self._services, key=lambda s: s['host']):
            if service['host'] != self.host and not self._usable(service):
                reasons.append('%s %s' % (service['host'], ', '.join(
                    word for word in (
                        'down' if service.get('state') != 'up' else None,
                        service.get('status')
                        if service.get('status') != 'enabled' else None)
                    if word)))
        if not reasons:
            reasons = ['no other compute host']
        return 'no target left: ' + '; '.join(reasons)


def evacuate_host(client, host, **kwargs) -> Report:
    """Run a ``HostEvacuation`` (same arguments) and return its report."""
    return HostEvacuation(client, host, **kwargs).run()
