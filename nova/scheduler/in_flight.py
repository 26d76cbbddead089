"""The claims one process has chosen and is still writing.

Many choices run at once in one process: a host-evacuate's workers in the
conductor, the API's concurrent creates. Each reads the database, picks
the roomiest host and writes its claim under that host's lease. Without
knowing of each other, choices that read the database before any of them
wrote would all pick the same host, then queue on its lease and crowd it
while others stay empty. This ledger is what they know of each other:

* a choice that picks a host records its claim here (``pick``), and ends
  it once the claim is written or given up (``done``);
* a pick counts, for each candidate, the memory of the claims still being
  written, and of those ended since its own database read began (that
  read may have missed them), and ranks the candidates by what is left.

It only orders candidates. Whether a host has room is the database's to
say: the choice's read, then the re-read under the host's lease before
the claim is written. A claim counted twice (in the read and here) makes a
host look fuller than it is, so it is ranked later, never refused.

Example::

    ledger = InFlight()
    with ledger.reading() as read:
        candidates = ...            # read the database
        host, claim = ledger.pick(read, candidates, order, need)
    try:
        ...                         # write the claim under host's lease
    finally:
        ledger.done(claim)
"""

import contextlib
import dataclasses
import itertools
import threading
from typing import Callable, Iterator, Sequence


@dataclasses.dataclass
class Claim:
    host: str
    memory_mb: int
    ended: int | None = None     # the ledger's sequence number at its end


class InFlight:
    """One per placing object (``target.TargetChooser``), shared by its
    threads."""

    def __init__(self):
        self._lock = threading.Lock()
        self._sequence = itertools.count()
        self._claims: list[Claim] = []
        # The sequence number at which each running read began.
        self._reads: set[int] = set()

    @contextlib.contextmanager
    def reading(self) -> Iterator[int]:
        """Around a choice's database read and its ``pick``."""
        with self._lock:
            read = next(self._sequence)
            self._reads.add(read)
        try:
            yield read
        finally:
            with self._lock:
                self._reads.discard(read)
                self._forget_ended()

    def pick(self, read: int, candidates: Sequence, order: Callable,
             memory_mb: int) -> tuple[str, Claim]:
        """The first of ``candidates`` by ``order(candidate, counted_mb)``
        (``counted_mb``: the memory of the claims this ledger counts on
        it), recorded as a claim of ``memory_mb`` on that host."""
        with self._lock:
            counted: dict[str, int] = {}
            for claim in self._claims:
                if claim.ended is None or claim.ended > read:
                    counted[claim.host] = (counted.get(claim.host, 0)
                                           + claim.memory_mb)
            best = min(candidates,
                       key=lambda c: order(c, counted.get(c.host, 0)))
            claim = Claim(host=best.host, memory_mb=memory_mb)
            self._claims.append(claim)
            return best.host, claim

    def done(self, claim: Claim) -> None:
        """``claim`` is written (the database counts it now) or given up."""
        with self._lock:
            claim.ended = next(self._sequence)
            self._forget_ended()

    def claims(self) -> list[Claim]:
        """The claims the ledger still holds (for tests)."""
        with self._lock:
            return list(self._claims)

    def _forget_ended(self) -> None:
        # An ended claim matters only to reads that began before it ended.
        oldest = min(self._reads, default=None)
        self._claims = [c for c in self._claims
                        if c.ended is None
                        or (oldest is not None and c.ended > oldest)]
