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

Where the CPU goes, per boot, from the first request to the last server
ACTIVE (medians of the runs with everything): the whole machine's
(``/proc/stat``), the ``nova-all`` process's, its API worker's, and this
process's (the 8 clients, whose polling the API worker serves too). The
phase table (``nova.phases``) comes from one more run with debug logging,
which logs every phase mark and so runs slower: its rate is shown, not
counted.
"""

import dataclasses
import statistics
import threading
import time

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


@dataclasses.dataclass
class Run:
    count: int
    # From the first request to the last server ACTIVE.
    seconds: float
    # CPU seconds over the same time: the machine's, nova-all's, its API
    # workers', this process's (the clients).
    machine_cpu: float
    nova_all_cpu: float
    api_cpu: float
    clients_cpu: float
    # Phase traces of the boots (with ``debug`` only).
    traces: list

    @property
    def rate(self):
        return self.count / self.seconds

    def per_boot_ms(self, seconds):
        return seconds * 1000.0 / self.count


def measure(count, switched_off=(), api_workers=None, debug=False):
    """``count`` boots (a ``Run``) on a new nova-all started without
    ``switched_off`` (with ``api_workers``: that
    ``osapi_compute_workers``; with ``debug``: debug logging, and the
    boots' phases)."""
    with guarantees.services_started_without(switched_off), \
            nova_all.NovaAll(api_workers=api_workers, debug=debug) as cloud:
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

        since = time.time()
        machine, (nova, api), clients = (common.machine_cpu_seconds(),
                                         cloud.cpu_seconds(),
                                         time.process_time())
        seconds = common.run_threads([worker] * THREADS)
        machine_after, (nova_after, api_after), clients_after = (
            common.machine_cpu_seconds(), cloud.cpu_seconds(),
            time.process_time())
        traces = (common.traces_in_logs(cloud.state, since,
                                        'api.create_received')
                  if debug else [])
        return Run(count, seconds, machine_after - machine,
                   nova_after - nova, api_after - api,
                   clients_after - clients, traces)


def run(quick):
    count = 100 if quick else 1000
    # NOTE: this machine's rate drifts between runs of the same code by
    # more than a guarantee costs (14.8 and 21.2 servers/s within the
    # hour), so each run without a guarantee is paired with a run with
    # everything, just before it, and the row's figure is the median of
    # all the runs with everything.
    pairs = []
    runs = []
    for names in guarantees.one_by_one_then_all(GUARANTEES):
        runs.append(measure(count))
        pairs.append((names, runs[-1].rate, measure(count, names).rate))
    # What the API's own process buys: the same boots with the API on
    # nova-all's threads, right after a run with the default.
    runs.append(measure(count))
    default = runs[-1].rate
    threads = measure(count, api_workers=0).rate
    traced = measure(count, debug=True)
    rates = [run.rate for run in runs]
    rate = statistics.median(rates)
    lines = [common.Line(
        'boot %d servers, %d client threads, embedded' % (count, THREADS),
        '%.1f servers/s (median of %d runs: %s)' % (
            rate, len(rates), ', '.join('%.1f' % r for r in rates)),
        target='>= %g servers/s' % TARGET,
        met=common.verdict(rate >= TARGET),
        phases=common.phase_table(traced.traces) or None)]

    def cpu_ms(of):
        return statistics.median(run.per_boot_ms(of(run)) for run in runs)

    lines.append(common.Line(
        '  CPU per boot, from the first request to the last ACTIVE '
        '(medians of those runs)',
        'machine %.1f ms: nova-all %.1f ms, its API worker %.1f ms, '
        'the %d clients %.1f ms' % (
            cpu_ms(lambda r: r.machine_cpu), cpu_ms(lambda r: r.nova_all_cpu),
            cpu_ms(lambda r: r.api_cpu), THREADS,
            cpu_ms(lambda r: r.clients_cpu))))
    lines.append(common.Line(
        '  the phases below: one more run, with debug logging (slower; '
        'not counted)', '%.1f servers/s' % traced.rate))
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
