"""What the host claim lease costs, and that it keeps hosts from overbooking.

Several ``TargetChooser`` objects, each with its own in-process lock, stand
for separate processes (nova-api, conductors). Each places new instances
(``place_new``: choose, take the host's lease, read its usage again, write
the row) on hosts whose ``compute_nodes`` rows leave room for fewer
instances than are requested, so the last slots are fought over.

Run::

    .venv/bin/python benchmarks/claims.py [--choosers K] [--requests N]
        [--hosts H] [--slots S] [--database-url URL]

Prints the placement latency alone and under contention, how many
requests were placed and refused, and each host's use against its room.
Without ``--database-url`` it uses a new SQLite file.
"""

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from nova.conf import CONF  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402
from nova import exception  # noqa: E402
from nova.model import hardware  # noqa: E402
from nova import objects  # noqa: E402
from nova.scheduler import target  # noqa: E402
from nova.scheduler import usage  # noqa: E402
from nova.tests.fixtures import database as dbf  # noqa: E402

MEMORY_MB = 512


def _figures(label, seconds):
    ms = sorted(s * 1000 for s in seconds)
    print('  %-28s n %4d  median %6.2f ms  p95 %6.2f ms  max %6.2f ms' % (
        label, len(ms), statistics.median(ms), ms[int(0.95 * (len(ms) - 1))],
        ms[-1]))


def _place(chooser, ctx, flavor, name, latencies, outcome):
    instance = objects.Instance(ctx, display_name=name, flavor=flavor)
    started = time.perf_counter()
    try:
        host = chooser.place_new(ctx, instance)
    except exception.NoValidHost:
        outcome.append(None)
        return
    finally:
        latencies.append(time.perf_counter() - started)
    outcome.append(host)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--choosers', type=int, default=4)
    parser.add_argument('--requests', type=int, default=60,
                        help='placements under contention, in all')
    parser.add_argument('--hosts', type=int, default=3)
    parser.add_argument('--slots', type=int, default=15,
                        help='instances each host has room for')
    parser.add_argument('--database-url')
    args = parser.parse_args()

    logging.getLogger('nova').setLevel(logging.CRITICAL)
    tmp = tempfile.mkdtemp(prefix='nova-bench-claims-')
    try:
        CONF([], project='nova', default_config_files=[])
        CONF.set_override('state_path', tmp)
        db_api.configure(args.database_url or 'sqlite:///' + os.path.join(
            tmp, 'nova.sqlite'))
        migration.db_sync()
        ctx = nova_context.get_admin_context()
        flavor = dbf.make_flavor(ctx, memory_mb=MEMORY_MB)
        hosts = ['claim%d' % i for i in range(args.hosts)]
        for host in hosts:
            dbf.make_service(ctx, host)
            objects.ComputeNode.create_or_update(ctx, host, (
                hardware.HostResources(
                    hypervisor_hostname=host, vcpus=1000,
                    memory_mb=MEMORY_MB * args.slots, local_gb=100000)))

        print('database: %s' % db_api.safe_url(str(db_api.get_engine().url)))
        print('placement latency (choose, lease, re-read usage, write):')
        alone = []
        for i in range(10):
            _place(target.TargetChooser(), ctx, flavor, 'alone%d' % i,
                   alone, [])
        _figures('one chooser', alone)

        choosers = [target.TargetChooser() for _ in range(args.choosers)]
        latencies, outcome = [], []
        start = threading.Barrier(len(choosers))

        def run(chooser, index):
            start.wait()
            for j in range(index, args.requests, len(choosers)):
                _place(chooser, ctx, flavor, 'vm%d' % j, latencies, outcome)
        threads = [threading.Thread(target=run, args=(c, i))
                   for i, c in enumerate(choosers)]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - started
        _figures('%d choosers at once' % len(choosers), latencies)

        room = args.hosts * args.slots - len(alone)
        placed = [h for h in outcome if h is not None]
        print('contended: %d requests for %d free slots: placed %d, '
              'refused %d, wall %.2f s' % (
                  args.requests, room, len(placed),
                  len(outcome) - len(placed), wall))
        overbooked = False
        for host in hosts:
            used = usage.usage(ctx, host).memory_mb // MEMORY_MB
            overbooked |= used > args.slots
            print('  %s: %d of %d slots used' % (host, used, args.slots))
        print('overbooked: %s' % ('YES' if overbooked else 'no'))
    finally:
        db_api.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
