"""What placing one new instance costs as the number of servers grows.

``TargetChooser.place_new`` (what ``POST /servers`` does to choose a host
and write the row) on a new SQLite database with two compute hosts of
ample capacity, after N servers already live on them. The N rows are
written in bulk (setup, not measured; their usage counters then set by
the audit); then ``--placements`` new instances are placed one after the
other and timed. Usage is read from
the hosts' counters (``nova/objects/host_usage.py``), so the cost should
not grow with N; the ratio to the 0-server figure says whether it does.

Run::

    .venv/bin/python benchmarks/placement.py [--servers 0,1000,10000]
        [--placements 50]
"""

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

import sqlalchemy as sa  # noqa: E402

from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402
from nova.db import models  # noqa: E402
from nova.model import hardware  # noqa: E402
from nova import objects  # noqa: E402
from nova.objects import host_usage  # noqa: E402
from nova.scheduler import target  # noqa: E402
from nova.tests.fixtures import database as dbf  # noqa: E402

HOSTS = ('compute1', 'compute2')
FLAVOR = objects.Flavor('1', 'm1.tiny', 64, 1, 1)


def _capacity(context, host):
    return hardware.HostResources(host, 10 ** 6, 10 ** 9, 10 ** 7)


def _bulk_servers(count):
    """``count`` live instance rows, half on each host (setup only)."""
    flavor = FLAVOR.to_dict()
    # The columns objects.Instance writes with the flavor, as it would.
    rows = [{'uuid': str(uuid.uuid4()), 'host': HOSTS[i % 2],
             'node': HOSTS[i % 2], 'vm_state': 'active', 'power_state': 1,
             'flavor': flavor, 'flavor_vcpus': FLAVOR.vcpus,
             'flavor_memory_mb': FLAVOR.memory_mb,
             'flavor_disk_gb': FLAVOR.disk_gb, 'deleted': False}
            for i in range(count)]
    engine = db_api.get_engine()
    with engine.begin() as connection:
        for start in range(0, len(rows), 5000):
            connection.execute(
                sa.insert(models.Instance.__table__).values(
                    rows[start:start + 5000]))
    # The rows bypassed objects.Instance: their counters are set the way
    # a compute host's periodic audit would.
    for host in HOSTS:
        host_usage.audit(host)


def measure(servers, placements):
    directory = tempfile.mkdtemp(prefix='nova-bench-placement-')
    try:
        db_api.configure('sqlite:///' + os.path.join(directory, 'n.sqlite'))
        migration.db_sync()
        ctx = dbf.admin_context()
        for host in HOSTS:
            dbf.make_service(ctx, host)
        _bulk_servers(servers)
        chooser = target.TargetChooser(_capacity)
        times = []
        for n in range(placements):
            instance = objects.Instance(ctx, display_name='new-%d' % n,
                                        flavor=FLAVOR)
            started = time.perf_counter()
            chooser.place_new(ctx, instance)
            times.append(time.perf_counter() - started)
        return times
    finally:
        db_api.dispose()
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--servers', default='0,1000,10000')
    parser.add_argument('--placements', type=int, default=50)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    baseline = None
    print('place_new on SQLite, two hosts, %d placements each (ms)'
          % args.placements)
    print('%10s %9s %9s %7s' % ('servers', 'median', 'p95', 'ratio'))
    for servers in (int(n) for n in args.servers.split(',')):
        ms = sorted(t * 1000 for t in measure(servers, args.placements))
        median = statistics.median(ms)
        baseline = baseline or median
        print('%10d %9.2f %9.2f %6.2fx' % (
            servers, median, ms[int(0.95 * (len(ms) - 1))],
            median / baseline))


if __name__ == '__main__':
    main()
