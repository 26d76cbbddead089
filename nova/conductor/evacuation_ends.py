"""Wake-ups for host-evacuate's watchers when a target says an evacuation
ended.

Host-evacuate watches each evacuation it requested until its migration
and instance rows say it ended (``evacuation_watch``). Reading them every
``[conductor] host_evacuate_poll_interval`` alone leaves each slot idle for
half an interval on average after its evacuation ended: with 4 slots and
1 s, a 20-instance host took 5 ticks more than its evacuations did. So the
target, once its rebuild returned, casts ``evacuation_ended`` to every
conductor (fanout), and the conductor watching that migration reads its
rows at once.

A wake-up is a hint, never a verdict: the watcher decides from the rows it
reads afterwards, as it does on a tick. A lost cast (a target that died,
an older compute, a capped RPC version) costs only the wait until the next
tick, which stays as the backstop.

Example::

    ends = EndSignals()
    with ends.expecting(migration_uuid) as woken:
        while True:
            woken.clear()                  # before the read, not after
            if ended(read_rows()):
                break
            woken.wait(poll_interval)
    ends.ended(migration_uuid)             # the RPC endpoint, elsewhere
"""

import contextlib
import threading
from typing import Iterator


class EndSignals:
    """The migrations this conductor is watching, each with the event its
    watcher sleeps on."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waiting: dict[str, list[threading.Event]] = {}

    @contextlib.contextmanager
    def expecting(self, migration_uuid: str) -> Iterator[threading.Event]:
        """The event set when ``migration_uuid`` is said to have ended
        (or every watcher is woken); registered until the block exits.

        Register before the first read of the rows, and clear the event
        before each read, so that an end said between a read and the wait
        is not missed."""
        event = threading.Event()
        with self._lock:
            self._waiting.setdefault(migration_uuid, []).append(event)
        try:
            yield event
        finally:
            with self._lock:
                events = self._waiting.get(migration_uuid, [])
                if event in events:
                    events.remove(event)
                if not events:
                    self._waiting.pop(migration_uuid, None)

    def ended(self, migration_uuid: str) -> bool:
        """Wake whoever watches ``migration_uuid``; whether anyone did
        (a conductor that runs no host-evacuate of it ignores it)."""
        with self._lock:
            events = list(self._waiting.get(migration_uuid, ()))
        for event in events:
            event.set()
        return bool(events)

    def wake_all(self) -> None:
        """Wake every watcher (the conductor is stopping)."""
        with self._lock:
            events = [e for found in self._waiting.values() for e in found]
        for event in events:
            event.set()

    def watched(self) -> set[str]:
        with self._lock:
            return set(self._waiting)
