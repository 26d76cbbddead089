"""``POST /servers``: client time to the 202, as the number of servers
grows.

For each N (0, then 1,000, 5,000, 10,000; ``--quick``: 0, 200, 1,000) a
new ``nova-all`` of the embedded default (``rows/nova_all.py``: one
process, ``inproc://`` RPC, noauth2, two hosts on libvirt's test driver,
SQLite) starts with N live servers already in its database and on its
hosts. A client in this process (``nova.cli.client``, a new connection
per request, as the ``nova`` CLI) then boots servers one after the other:
it times ``POST /servers`` from the request to the 202, then waits until
the server is ACTIVE before the next one, so that no build runs while a
request is timed. The first three boots of each process warm it up and
are not counted.

Baseline: the same at 0 servers, in the same run. Target: the median at
each N at most 1.2 times the baseline's.
"""

import statistics

from rows import common
from rows import nova_all

LIMIT = 1.2
WARM_UP = 3


def measure(servers, posts):
    """Seconds to the 202 of ``posts`` boots with ``servers`` there."""
    with nova_all.NovaAll() as cloud:
        cloud.prepare(servers=servers)
        cloud.start()
        client = cloud.client()
        times = []
        for n in range(WARM_UP + posts):
            elapsed, _uuid = cloud.boot(client, 'bench-post-%d' % n)
            if n >= WARM_UP:
                times.append(elapsed)
        return times


def run(quick):
    levels = (200, 1000) if quick else (1000, 5000, 10000)
    posts = 15 if quick else 50
    baseline = measure(0, posts)
    lines = [common.Line('POST /servers to 202, embedded, 0 servers',
                         common.spread(baseline), '(baseline)')]
    for servers in levels:
        times = measure(servers, posts)
        value = common.ratio(statistics.median(times),
                             statistics.median(baseline))
        lines.append(common.Line(
            'POST /servers to 202, embedded, %d servers' % servers,
            common.spread(times), 'same at 0 servers: median %s'
            % common.seconds(statistics.median(baseline)),
            '%.2fx' % value, 'ratio <= %g' % LIMIT,
            common.verdict(value <= LIMIT)))
    return lines
