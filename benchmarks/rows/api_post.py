"""``POST /servers``: client time to the 202, as the number of servers
grows.

For each N (0, 1,000, 5,000, 10,000; ``--quick``: 0, 200, 1,000) a
``nova-all`` of the embedded default (``rows/nova_all.py``: its API in
one worker process, ``inproc://`` RPC, noauth2, two hosts on libvirt's
test driver, SQLite)
starts with N live servers already in its database and on its hosts; all
of them run at once. A client in this process (``nova.cli.client``, a
new connection per request, as the ``nova`` CLI) then boots servers on
each in turn (round-robin, so that drift falls on every N alike): it
times ``POST /servers`` from the request to the 202, then waits until the
server is ACTIVE before the next request, so that no build runs while a
request is timed. The first three rounds warm the processes up and are
not counted. 50 rounds (``--quick``: 15).

Baseline: the same at 0 servers, in the same run. Target: the median at
each N at most 1.2 times the baseline's.
"""

import contextlib
import statistics

from rows import common
from rows import nova_all

LIMIT = 1.2
WARM_UP = 3


def run(quick):
    levels = (0, 200, 1000) if quick else (0, 1000, 5000, 10000)
    posts = 15 if quick else 50
    with contextlib.ExitStack() as stack:
        clouds = []
        for servers in levels:
            cloud = stack.enter_context(nova_all.NovaAll())
            cloud.prepare(servers=servers)
            cloud.start()
            clouds.append((cloud, cloud.client()))
        times = {servers: [] for servers in levels}
        for n in range(WARM_UP + posts):
            # Round-robin: whatever else the machine does falls on every
            # N alike.
            for servers, (cloud, client) in zip(levels, clouds):
                elapsed, _uuid = cloud.boot(client, 'bench-post-%d' % n)
                if n >= WARM_UP:
                    times[servers].append(elapsed)
    baseline = times[0]
    lines = [common.Line('POST /servers to 202, embedded, 0 servers',
                         common.spread(baseline), '(baseline)')]
    for servers in levels[1:]:
        value = common.ratio(statistics.median(times[servers]),
                             statistics.median(baseline))
        lines.append(common.Line(
            'POST /servers to 202, embedded, %d servers' % servers,
            common.spread(times[servers]), 'same at 0 servers: median %s'
            % common.seconds(statistics.median(baseline)),
            '%.2fx' % value, 'ratio <= %g' % LIMIT,
            common.verdict(value <= LIMIT)))
    return lines
