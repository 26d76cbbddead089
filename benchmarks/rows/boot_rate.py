"""Booting many servers at once: servers per second on the embedded
default.

One ``nova-all`` of the embedded default (``rows/nova_all.py``), empty,
its network ``public`` on a /16 (the default /24 holds 253 ports).
8 client threads (``nova.cli.client``, REST) share 1,000 boots
(``--quick``: 100): each thread posts a server, waits until it is ACTIVE
(polling ``GET /servers/<id>`` every 50 ms), then posts the next. The
figure is the number of servers over the time from the first request to
the last server seen ACTIVE.

No baseline; target: at least 20 servers/s.
"""

import threading

from rows import common
from rows import nova_all

THREADS = 8
# Each thread polls its server this often: 8 threads at 10 ms would be
# 800 GETs a second taken from the builds.
POLL = 0.05
TARGET = 20.0
# 1,000 live servers need more addresses than the default's /24.
CIDR = '172.24.0.0/16'


def run(quick):
    count = 100 if quick else 1000
    with nova_all.NovaAll() as cloud:
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

        elapsed = common.run_threads([worker] * THREADS)
    rate = count / elapsed
    return [common.Line(
        'boot %d servers, %d client threads, embedded' % (count, THREADS),
        '%.1f servers/s (%.1f s)' % (rate, elapsed), target='>= %g '
        'servers/s' % TARGET, met=common.verdict(rate >= TARGET))]
