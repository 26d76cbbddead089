"""Evacuate a whole host: a client of ``/os-host-evacuations``.

The run itself is the conductor's (``nova/conductor/host_evacuation.py``):
it requests the evacuation of every instance of the failed host, at most
``[conductor] host_evacuate_workers`` at a time, watches each to its end,
retries an instance whose target failed once elsewhere (every target
placed by the conductor's own choice and capacity check) and records each
outcome. This module only starts a run and reads it, and is both ``nova
host-evacuate HOST [--wait]`` and a Python API for scripts::

    from nova.cli import client, host_evacuate
    api = client.Client('http://127.0.0.1:8774/v2.1', 'admin:admin')
    api.negotiate('latest')
    report = host_evacuate.evacuate_host(api, 'compute1')
    for item in report.instances:
        print(item.uuid, item.outcome, item.host, item.attempts_text(),
              item.message)
    raise SystemExit(0 if report.succeeded else 1)

``evacuate_host`` returns when the run has ended (``wait=True``, the
default), or once it has requested every first attempt (``wait=False``).
``timeout`` stops waiting, not the run: the report then shows those still
``in-progress`` or ``not-started``, and the run goes on in the conductor
(``nova host-evacuation-show ID``, or ``show(client, id)``).

Outcomes: ``done``; ``failed`` (its attempts failed, or no target was
left); ``refused`` (the first request's checks refused it, e.g. the
instance is in a state that cannot be evacuated; not retried);
``in-progress`` and ``not-started`` while the run goes on, or when it was
interrupted (its conductor stopped).
"""

import dataclasses
import time

from nova.api.openstack import api_version
from nova.cli import client as client_mod

DONE = 'done'
FAILED = 'failed'
REFUSED = 'refused'
IN_PROGRESS = 'in-progress'
NOT_STARTED = 'not-started'
ENDED = (DONE, FAILED, REFUSED)

# A run's status.
RUN_ENDED = ('finished', 'interrupted')
INTERRUPTED = 'interrupted'

DEFAULT_POLL_INTERVAL = 2.0
PATH = '/os-host-evacuations'

UsageError = client_mod.UsageError


@dataclasses.dataclass
class Attempt:
    """One evacuation request the run made for an instance."""
    target: str | None
    outcome: str
    migration_uuid: str | None = None
    message: str | None = None

    def text(self) -> str:
        if self.outcome == REFUSED and self.migration_uuid is None:
            return '%s refused' % (self.target or 'request')
        return '%s %s' % (self.target or '(no target)',
                          self.outcome.replace('-', ' '))


@dataclasses.dataclass
class InstanceOutcome:
    """What became of one instance of the host (so far)."""
    uuid: str
    outcome: str
    host: str | None
    attempts: list
    message: str | None = None

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
    id: str
    host: str
    status: str                  # the run's: queued, running, finished ...
    instances: list
    skipped_targets: dict        # target -> why
    elapsed: float
    message: str | None = None
    timed_out: bool = False      # the client stopped waiting
    stopped_waiting: bool = False  # interrupted on the client side

    @property
    def interrupted(self) -> bool:
        return self.status == INTERRUPTED or self.stopped_waiting

    @property
    def ended(self) -> bool:
        return self.status in RUN_ENDED

    @property
    def succeeded(self) -> bool:
        """The run ended and every instance is done (also when the host
        held none)."""
        return (self.ended and not self.interrupted
                and all(i.outcome == DONE for i in self.instances))

    @property
    def requested(self) -> bool:
        """Every first attempt was requested (or the run ended)."""
        return self.ended or all(i.outcome != NOT_STARTED
                                 for i in self.instances)

    def count(self, outcome) -> int:
        return sum(1 for i in self.instances if i.outcome == outcome)

    def progress(self) -> Progress:
        return Progress(
            host=self.host, total=len(self.instances),
            done=self.count(DONE), failed=self.count(FAILED),
            refused=self.count(REFUSED), in_progress=self.count(IN_PROGRESS),
            waiting=self.count(NOT_STARTED),
            retried=sum(1 for i in self.instances if i.retried),
            elapsed=self.elapsed)


def _report(run: dict, elapsed: float) -> Report:
    items = [InstanceOutcome(
        uuid=i['uuid'], outcome=i['outcome'], host=i.get('host'),
        attempts=[Attempt(target=a.get('target'), outcome=a['outcome'],
                          migration_uuid=a.get('migration_uuid'),
                          message=a.get('message'))
                  for a in i.get('attempts') or []],
        message=i.get('message')) for i in run.get('instances') or []]
    return Report(id=run['id'], host=run['host'], status=run['status'],
                  instances=items,
                  skipped_targets=dict(run.get('skipped_targets') or {}),
                  elapsed=elapsed, message=run.get('message'))


def start(client, host, target_host=None, on_shared_storage=False) -> dict:
    """``POST /os-host-evacuations``: the new run, as the API shows it.

    ``on_shared_storage`` only below microversion 2.14, as for ``nova
    evacuate``; from 2.14 the hosts find out themselves.
    """
    body = {'host': host}
    if target_host:
        body['target_host'] = target_host
    if on_shared_storage:
        if client.version >= api_version.v('2.14'):
            raise client_mod.CommandError(
                '--on-shared-storage is only supported below microversion '
                '2.14; from 2.14 the hosts find out themselves (use '
                '--os-compute-api-version 2.13 to state it)')
        body['on_shared_storage'] = True
    return client.post(PATH, {'host_evacuation': body})['host_evacuation']


def show(client, evacuation_id, elapsed=0.0) -> Report:
    """The run as it stands now."""
    run = client.get('%s/%s' % (PATH, evacuation_id))['host_evacuation']
    return _report(run, elapsed)


def follow(client, evacuation_id, until, poll_interval=DEFAULT_POLL_INTERVAL,
           timeout=None, on_progress=None, clock=time.monotonic,
           sleep=time.sleep) -> Report:
    """Read the run every ``poll_interval`` seconds until ``until(report)``
    holds, or ``timeout`` seconds have passed (``timed_out``)."""
    started = clock()
    while True:
        report = show(client, evacuation_id, clock() - started)
        if on_progress is not None:
            on_progress(report.progress())
        if until(report):
            return report
        if timeout is not None and clock() - started >= timeout:
            report.timed_out = True
            return report
        sleep(poll_interval)


def evacuate_host(client, host, target_host=None, on_shared_storage=False,
                  wait=True, poll_interval=DEFAULT_POLL_INTERVAL,
                  timeout=None, on_progress=None) -> Report:
    """Start a run and follow it: to its end (``wait``), or until every
    first attempt is requested."""
    if not poll_interval or poll_interval <= 0:
        raise UsageError('poll_interval must be more than 0 seconds')
    if timeout is not None and timeout <= 0:
        raise UsageError('timeout must be more than 0 seconds')
    run = start(client, host, target_host, on_shared_storage)
    return follow(client, run['id'],
                  (lambda r: r.ended) if wait else (lambda r: r.requested),
                  poll_interval=poll_interval, timeout=timeout,
                  on_progress=on_progress)
