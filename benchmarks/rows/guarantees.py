"""The guarantees a row switches off, one at a time, to say what each
costs: in the benchmark only, never in the product.

Each guarantee has a name (``GUARANTEES``) and is switched off either in
this process (``switched_off(name)``, a context manager, for the rows whose
services run in the benchmark's process) or in the services a row starts
(``environment(names)``: the environment to start them with). For those,
``benchmarks/switched_off/sitecustomize.py`` goes on ``PYTHONPATH``: every
Python process started with it applies the same switches as it starts (a
``nova-api``, ``nova-conductor``, ``nova-compute`` or ``nova-all``), and
PostgreSQL's commit sync goes through libpq's ``PGOPTIONS``, which only
its clients read.

Example::

    env = guarantees.environment(['token_checks'])
    with guarantees.switched_off('token_checks'):
        ...
"""

import contextlib
import dataclasses
import os
from typing import Callable
from unittest import mock

# The variable the services' sitecustomize reads: names, comma-separated.
VARIABLE = 'NOVA_BENCH_SWITCHED_OFF'
SITE_DIR = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'switched_off')
_NO_PG_COMMIT_SYNC = '-c synchronous_commit=off'


@dataclasses.dataclass(frozen=True)
class Guarantee:
    name: str
    what: str
    # A patcher (mock.patch...) that switches it off in this process.
    patcher: Callable[[], object]


def _no_token_checks():
    from nova.objects import attempt
    return mock.patch.object(attempt, 'check_current',
                             lambda *args, **kwargs: None)


def _no_file_fsync():
    from nova import fileio
    # os.fsync of this process: the journal's, the files it commits, the
    # stamps (the databases' own syncs are in C, untouched).
    return mock.patch.object(fileio.os, 'fsync', lambda fd: None)


def _sqlite_synchronous_normal():
    from nova.db import api as db_api
    connect = db_api._on_sqlite_connect

    def normal(dbapi_connection, record):
        connect(dbapi_connection, record)
        dbapi_connection.execute('PRAGMA synchronous = NORMAL')
    return mock.patch.object(db_api, '_on_sqlite_connect', normal)


def _no_postgres_commit_sync():
    # libpq reads it at each connect: the connections made afterwards.
    return mock.patch.dict(os.environ, {'PGOPTIONS': _NO_PG_COMMIT_SYNC})


def _no_vif_wait():
    from nova.virt import guest_start
    # No event awaited: the guest starts running at once, unpaused.
    return mock.patch.object(guest_start, 'vif_events',
                             lambda settings, request: [])


GUARANTEES = {g.name: g for g in (
    Guarantee('token_checks',
              'the attempt token read again before each side effect',
              _no_token_checks),
    Guarantee('file_fsync',
              'fsync of the spawn journal, its files and the stamps',
              _no_file_fsync),
    Guarantee('sqlite_sync',
              "SQLite's sync of each commit (synchronous NORMAL instead "
              "of FULL)", _sqlite_synchronous_normal),
    Guarantee('postgres_sync',
              "PostgreSQL's WAL flush at each commit (synchronous_commit "
              "off)", _no_postgres_commit_sync),
    Guarantee('vif_wait',
              'the guest held paused until network-vif-plugged',
              _no_vif_wait),
)}


def one_by_one_then_all(names) -> list[tuple[str, ...]]:
    """The sets of guarantees a row switches off: each of ``names`` alone,
    then all of them."""
    return [(name,) for name in names] + [tuple(names)]


def without_label(names) -> str:
    """The row label of a line measured without ``names``."""
    _named(names)
    return '  the same without %s (benchmark only)' % '; '.join(
        GUARANTEES[name].what for name in names)


def _named(names):
    unknown = set(names) - set(GUARANTEES)
    if unknown:
        raise ValueError('unknown guarantees: %s' % ', '.join(sorted(unknown)))
    return [GUARANTEES[name] for name in names]


@contextlib.contextmanager
def switched_off(*names):
    """Within the block, ``names`` are switched off in this process."""
    with contextlib.ExitStack() as stack:
        for guarantee in _named(names):
            stack.enter_context(guarantee.patcher())
        yield


def apply(names) -> None:
    """Switch ``names`` off in this process for good (the services'
    sitecustomize, as they start)."""
    for guarantee in _named(names):
        guarantee.patcher().start()


def environment(names, base=None) -> dict:
    """The environment (from ``base``, default ``os.environ``) for
    services that start with ``names`` switched off."""
    env = dict(os.environ if base is None else base)
    _named(names)
    if not names:
        return env
    env[VARIABLE] = ','.join(names)
    env['PYTHONPATH'] = os.pathsep.join(
        [SITE_DIR] + [p for p in [env.get('PYTHONPATH')] if p])
    if 'postgres_sync' in names:
        env['PGOPTIONS'] = ' '.join(
            p for p in (env.get('PGOPTIONS'), _NO_PG_COMMIT_SYNC) if p)
    return env


@contextlib.contextmanager
def services_started_without(names):
    """Within the block, the processes this one starts (inheriting its
    environment) start with ``names`` switched off; this process is not
    changed otherwise."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environment(names, saved))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
