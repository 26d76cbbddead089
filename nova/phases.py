"""Where an operation spends its time, phase by phase.

An operation (a boot, an evacuation) crosses several threads and, outside
the embedded default, several processes: the API, the conductor, the
target's compute. Each records a *mark* when it reaches a boundary, with
the operation's request id (the same in every process: it travels in the
RPC context) and the wall-clock time (one clock on one machine)::

    phases.mark('api.accepted', context.request_id)
    with phases.bound(context.request_id):     # a compute handler
        ...                                     # crash points mark too

Every crash point (``nova/crashpoint.py``) is such a boundary: they are
already the steps of a spawn and a start, in order. A thread that is
``bound`` to a request marks each point it reaches; unbound, a crash
point marks nothing.

A phase is the time between two consecutive marks of one request, named
by the mark that ends it (``start.after_define``: from the previous mark
until the domain was defined). ``phases_of(marks)`` computes them; the
benchmarks aggregate them per phase (median, p95).

Each mark is kept in a bounded in-process record (``recent()``, for an
in-process reader such as the embedded benchmarks) and logged at debug
level in one parseable line (``parse_log_line``, for a reader of the
logs of several processes). Marking costs a clock read and an append:
the hot paths keep it on.
"""

import collections
import contextlib
import dataclasses
import re
import threading
import time
from typing import Iterable, Iterator

from oslo_log import log as logging

from nova import crashpoint

LOG = logging.getLogger(__name__)

# Enough for the marks of a few hundred operations; older ones go first.
MAX_MARKS = 20000

_LOG_FORMAT = 'phase mark %s %s %.6f'
_LOG_LINE = re.compile(r'phase mark (\S+) (\S+) (\d+\.\d+)')


@dataclasses.dataclass(frozen=True)
class Mark:
    request_id: str
    name: str
    at: float          # time.time()


@dataclasses.dataclass(frozen=True)
class Phase:
    name: str          # the mark that ended it
    seconds: float


@dataclasses.dataclass(frozen=True)
class PhaseStats:
    name: str
    count: int
    median: float
    p95: float


_marks: collections.deque = collections.deque(maxlen=MAX_MARKS)
_bound = threading.local()


def mark(name: str, request_id: str | None = None) -> None:
    """Record that ``request_id`` (default: the request this thread is
    bound to) reached ``name``; nothing when there is no request."""
    request_id = request_id or getattr(_bound, 'request_id', None)
    if not request_id:
        return
    entry = Mark(request_id, name, time.time())
    _marks.append(entry)
    LOG.debug(_LOG_FORMAT, request_id, name, entry.at)


@contextlib.contextmanager
def bound(request_id: str | None) -> Iterator[None]:
    """Within the block, this thread's crash points and ``mark`` calls
    without a request id count for ``request_id``."""
    previous = getattr(_bound, 'request_id', None)
    _bound.request_id = request_id
    try:
        yield
    finally:
        _bound.request_id = previous


def recent(request_id: str | None = None) -> list[Mark]:
    """The marks kept in this process (of one request), oldest first."""
    return [m for m in tuple(_marks)
            if request_id is None or m.request_id == request_id]


def parse_log_line(line: str) -> Mark | None:
    """The mark a log line records, or None."""
    found = _LOG_LINE.search(line)
    if found is None:
        return None
    return Mark(found.group(1), found.group(2), float(found.group(3)))


def phases_of(marks: Iterable[Mark]) -> list[Phase]:
    """The phases of one request's marks, in time order."""
    ordered = sorted(marks, key=lambda m: m.at)
    return [Phase(later.name, later.at - earlier.at)
            for earlier, later in zip(ordered, ordered[1:])]


def by_request(marks: Iterable[Mark]) -> dict[str, list[Mark]]:
    grouped: dict[str, list[Mark]] = collections.defaultdict(list)
    for entry in marks:
        grouped[entry.request_id].append(entry)
    return dict(grouped)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    # Nearest rank, as the benchmarks' other figures.
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def summarize(traces: Iterable[list[Phase]]) -> list[PhaseStats]:
    """Median and p95 of each phase over several operations, in the
    order the phases first appear."""
    # Imported here, not at the top: the services mark phases and never
    # summarize them (the benchmarks do), and statistics imports
    # fractions and decimal with it (about 0.2 MiB in each service).
    import statistics

    seconds: dict[str, list[float]] = {}
    for trace in traces:
        for phase in trace:
            seconds.setdefault(phase.name, []).append(phase.seconds)
    return [PhaseStats(name, len(values), statistics.median(values),
                       _p95(values))
            for name, values in seconds.items()]


crashpoint.observe(lambda name: mark(name))
