"""A short lease on one compute host's claims, shared by every process.

Placing an instance on a host is two steps: read what the host already
holds, then write the claim (a new instance's row on that host, or an
evacuation's ``dest_compute``). Two processes doing this for one host at
once could each see the last slot free and both take it. Several
processes place: nova-api places new instances, nova-conductor chooses
evacuation targets, and a deployment may run several of each. A lock in
one process cannot stop the others; this lease can::

    with host_lease.hold(context, 'compute1') as lease:
        ...  # read the host's usage
        lease.end_with(lambda lease: migration.save(and_give_back=lease))

A lease is the row of ``host_claim_leases`` whose key is the host. It is
taken by an INSERT (the primary key lets exactly one of two succeed), or,
when its holder died while holding it, by an UPDATE of the expired row. It
is given back by a DELETE that names the holder. The take is its own
short transaction, so this works alike on SQLite and PostgreSQL and never
holds a database lock while the holder reads usage in other sessions.

The give-back is best made in the transaction that writes the claim
(``Lease.give_back_in``, ``Lease.end_with``): one write transaction fewer
per claim, and a fence. A holder that stalled past ``LEASE_SECONDS`` may
have lost its lease to another claimer, who then read the host's usage
without this claim in it; the DELETE finds no row of this holder, and
the claim rolls back with it (``HostClaimLeaseLost``) instead of being
written beside the other. Given back on its own (``hold``'s exit without
``end_with``), a lost lease is only logged. A claim made under two leases
(its host's and its server group's, whose members another claimer of the
group would read) gives both back in its transaction (``end_together``).

A claim takes milliseconds. ``LEASE_SECONDS`` only bounds how long a host
stays blocked after its holder crashed. Every process must use a clock
that is right to within that bound: a clock far ahead would take over a
live lease.
"""

import contextlib
import dataclasses
import datetime
import random
import time
import uuid

from oslo_log import log as logging
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import fields

LOG = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
# How long a claimer waits for another process's claim on the same host.
DEFAULT_WAIT_SECONDS = 10.0
_POLL_SECONDS = (0.005, 0.05)

_table = control_models.HostClaimLease


def try_take(context, host: str, holder: str,
             lease_seconds: float = LEASE_SECONDS) -> bool:
    """Take the lease on ``host`` for ``holder`` if it is free or expired.

    Returns whether ``holder`` holds it now.
    """
    taken = take_free_or_expired(_table, _table.host, host, holder,
                                 lease_seconds)
    if taken == TAKEN_OVER:
        LOG.warning('Took over the expired claim lease on host %s', host)
    return taken is not None


NEW = 'new'
TAKEN_OVER = 'taken over'


def take_free_or_expired(table, key_column, key: str, holder: str,
                         seconds: float) -> str | None:
    """Take the lease row of ``table`` whose ``key_column`` is ``key``
    for ``holder``, for ``seconds``: ``NEW`` when there was none,
    ``TAKEN_OVER`` when it had expired, None when another holds it.

    For any lease table of (key, ``holder``, ``expires_at``) rows.
    """
    now = fields.utcnow()
    expires = now + datetime.timedelta(seconds=seconds)
    try:
        with db_api.writing() as connection:
            connection.execute(sa.insert(table.__table__).values(
                {key_column.key: key, 'holder': holder,
                 'expires_at': expires}))
        return NEW
    except sa_exc.IntegrityError:
        pass
    # Held, or left behind by a holder that died: only an expired lease
    # may be taken over, and of two takers the UPDATE lets one win.
    with db_api.writing() as connection:
        taken = connection.execute(
            sa.update(table.__table__)
            .where(key_column == key, table.expires_at < now)
            .values(holder=holder, expires_at=expires)).rowcount
    return TAKEN_OVER if taken else None


def _give_back_in(connection, host: str, holder: str) -> bool:
    return bool(connection.execute(
        sa.delete(_table.__table__)
        .where(_table.host == host, _table.holder == holder)).rowcount)


def give_back(context, host: str, holder: str) -> bool:
    """Release ``holder``'s lease on ``host``; False if it was not held.

    A lease that expired and was taken over by another process is theirs
    and is left alone.
    """
    with db_api.writing() as connection:
        deleted = _give_back_in(connection, host, holder)
    if not deleted:
        LOG.warning('The claim lease on host %s was taken over before it '
                    'was given back: this claim took longer than %s s',
                    host, LEASE_SECONDS)
    return bool(deleted)


def holder_of(context, host: str) -> str | None:
    """Who holds the lease on ``host`` now (expired or not); None if nobody.
    """
    with db_api.reading() as connection:
        return connection.scalars(sa.select(_table.holder).where(
            _table.host == host)).one_or_none()


@dataclasses.dataclass
class Lease:
    """The lease ``hold`` holds for its body."""
    host: str
    holder: str
    # Given back by the claim's own transaction (end_with).
    ended: bool = False

    def give_back_in(self, connection) -> None:
        """Give the lease back in ``connection``'s write transaction, the
        one that writes the claim: both commit, or neither.

        ``HostClaimLeaseLost`` when this holder no longer holds it
        (another took it over once it expired): the caller's transaction
        must roll back, since the claim it writes may not be counted by
        the new holder's.
        """
        if not _give_back_in(connection, self.host, self.holder):
            raise exception.HostClaimLeaseLost(host=self.host,
                                               seconds=LEASE_SECONDS)

    def end_with(self, write) -> None:
        """``write(self)``: a write transaction that calls
        ``give_back_in``. Once it returned (committed), ``hold`` does not
        give the lease back again; when it raised, its transaction rolled
        back and ``hold`` gives the lease back as usual."""
        end_together(write, self)


@dataclasses.dataclass(frozen=True)
class Together:
    """Leases one claim was made under (a host's, and the server group's
    whose policy it keeps), given back in the claim's transaction: the
    claim is written only if every one of them is still held."""
    leases: tuple[Lease, ...]

    def give_back_in(self, connection) -> None:
        for lease in self.leases:
            lease.give_back_in(connection)


def end_together(write, *leases: Lease | None) -> None:
    """``write(given_back)``, ``given_back`` being the one lease held, the
    ``Together`` of several, or None when none is (a None in ``leases``
    is a lease not held), as ``Lease.end_with``: once ``write`` returned,
    every one of them is ended."""
    held = tuple(lease for lease in leases if lease is not None)
    write(Together(held) if len(held) > 1 else held[0] if held else None)
    for lease in held:
        lease.ended = True


@contextlib.contextmanager
def hold(context, host: str, wait: float = DEFAULT_WAIT_SECONDS,
         lease_seconds: float = LEASE_SECONDS):
    """Hold the lease on ``host`` for the body (a ``Lease``); wait up to
    ``wait`` seconds. Given back at the end, unless the body gave it back
    in its claim's transaction (``Lease.end_with``).

    Raises ``HostClaimBusy`` when another holder keeps it that long; the
    body then does not run.
    """
    holder = str(uuid.uuid4())
    deadline = time.monotonic() + wait
    while not try_take(context, host, holder, lease_seconds):
        if time.monotonic() >= deadline:
            raise exception.HostClaimBusy(host=host, seconds=wait)
        # Jittered: two waiters must not poll in lockstep.
        time.sleep(random.uniform(*_POLL_SECONDS))
    lease = Lease(host, holder)
    try:
        yield lease
    finally:
        if not lease.ended:
            give_back(context, host, holder)
