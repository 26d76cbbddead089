"""Booting many servers at once: servers per second on the embedded
default.

One ``nova-all`` of the embedded default (``rows/nova_all.py``), empty,
its network ``public`` on a /16 (the default /24 holds 253 ports), its
REST API in one worker process (the default ``osapi_compute_workers``).
8 client threads (``nova.cli.client``, REST) share 1,000 boots
(``--quick``: 100): each thread posts a server, waits until it is ACTIVE
(polling ``GET /servers/<id>`` every 50 ms), then posts the next. The
figure is the number of servers over the time from the first request to
the last server seen ACTIVE.

No baseline; target: at least 25 servers/s. To say what each guarantee
costs, the same boots on a new ``nova-all`` started without it
(``GUARANTEES``; benchmark only, ``rows/guarantees.py``), and once without
all of them, each right after a run with everything; the ratio column is
the rate without over the rate of that run with. Last, the same boots
with the API on nova-all's own threads (``osapi_compute_workers = 0``),
right after one more run with the default. The row's figure is the
median of the runs with everything (5; each run takes about a minute in
full).
"""

import statistics
import threading

from rows import common
from rows import guarantees
from rows import nova_all

THREADS = 8
# Each thread polls its server this often: 8 threads at 10 ms would be
# 800 GETs a second taken from the builds.
POLL = 0.05
TARGET = 25.0
# What each guarantee costs here (rows/guarantees.py): the nova-all is
# started again without it, and without all of them.
GUARANTEES = ('token_checks', 'file_fsync', 'sqlite_sync')
# 1,000 live servers need more addresses than the default's /24.
CIDR = '172.24.0.0/16'


def measure(count, switched_off=(), api_workers=None):
    """Seconds from the first request to the last of ``count`` servers
    ACTIVE, on a new nova-all started without ``switched_off`` (with
    ``api_workers``: that ``osapi_compute_workers``)."""
    with guarantees.services_started_without(switched_off), \
            nova_all.NovaAll(api_workers=api_workers) as cloud:
        cloud.prepare(cidr=CIDR)
        cloud.start()
        cloud.image_id()
        claimed = iter(range(count))
        lock = threading.Lock()
        failed = threading.Event()

        def worker():
            client = cloud.client()
            while not failed.is_set():
                with lock:
                    n = next(claimed, None)
                if n is None:
                    return
                try:
                    cloud.boot(client, 'bench-rate-%d' % n, interval=POLL)
                except Exception:
                    failed.set()        # the others stop too
                    raise

        return common.run_threads([worker] * THREADS)


def run(quick):
    count = 100 if quick else 1000
    # NOTE: this machine's rate drifts between runs of the same code by
    # more than a guarantee costs (14.8 and 21.2 servers/s within the
    # hour), so each run without a guarantee is paired with a run with
    # everything, just before it, and the row's figure is the median of
    # all the runs with everything.
    pairs = []
    for names in guarantees.one_by_one_then_all(GUARANTEES):
        with_all = count / measure(count)
        pairs.append((names, with_all, count / measure(count, names)))
    # What the API's own process buys: the same boots with the API on
    # nova-all's threads, right after a run with the default.
    default = count / measure(count)
    threads = count / measure(count, api_workers=0)
    rates = [with_all for _names, with_all, _without in pairs] + [default]
    rate = statistics.median(rates)
    lines = [common.Line(
        'boot %d servers, %d client threads, embedded' % (count, THREADS),
        '%.1f servers/s (median of %d runs: %s)' % (
            rate, len(rates), ', '.join('%.1f' % r for r in rates)),
        target='>= %g servers/s' % TARGET,
        met=common.verdict(rate >= TARGET))]
    for names, with_all, without in pairs:
        lines.append(common.Line(
            guarantees.without_label(names), '%.1f servers/s' % without,
            '%.1f servers/s with it, the run before' % with_all,
            '%.2fx' % (without / with_all)))
    lines.append(common.Line(
        '  the same with the API on nova-all\'s own threads '
        '(osapi_compute_workers = 0)', '%.1f servers/s' % threads,
        '%.1f servers/s with one API worker, the run before' % default,
        '%.2fx' % (threads / default)))
    return lines
