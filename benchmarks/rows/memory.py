"""Resident memory (``VmRSS`` from ``/proc/<pid>/status``) of the services.

* ``nova-compute`` alone (``.venv/bin/nova-compute``, its own process):
  host ``compute1`` on libvirt's test driver whose node file holds 100
  running domains, the 100 instances idle in a new SQLite database
  (``benchmarks/init_host.py`` writes both), ``inproc://`` RPC (nobody
  else to talk to). Read 3 s after its first heartbeat, that is after
  ``init_host``.
* The import footprint of nova-compute: a Python that imports
  ``nova.cmd.compute``, ``libvirt`` and ``pyroute2`` and does nothing
  (what no instance count changes).
* ``nova-all`` of the embedded default (``rows/nova_all.py``), with its
  API worker process (the RSS of both, summed): idle (3 s
  after both hosts are up); after 100 boots over the REST API (100 live
  servers); after deleting them; and after 1,000 create/delete cycles in
  all (batches of 100 booted, then deleted), each read 3 s after the last
  server is ACTIVE or gone.

Targets: nova-compute at most 80 MiB with 100 instances; nova-all grows
by at most 0.1 MiB per booted-then-deleted server over the 1,000 cycles:
memory follows the servers that exist, not those that ever did.
``--quick``: 30 instances and 200 cycles.
"""

import os
import sqlite3
import subprocess
import sys
import time

from rows import common
from rows import nova_all

import init_host  # noqa: E402  (benchmarks/init_host.py)

from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402

INSTANCES = 100
CYCLES = 1000
SETTLE = 3.0
COMPUTE_MB = 80.0
PER_CYCLE_MB = 0.1
# What nova-compute loads before it serves anything.
IMPORTS = ('nova.cmd.compute', 'libvirt', 'pyroute2')
COMPUTE_CONF = """[DEFAULT]
host = %(host)s
state_path = %(state)s
transport_url = inproc://
debug = false
[libvirt]
connection_uri = test://%(node)s
[database]
connection = %(database)s
"""


class NovaCompute(nova_all.NovaAll):
    """``nova-compute`` of one test-driver host, alone."""

    binary = 'nova-compute'

    def conf_text(self):
        return COMPUTE_CONF % {
            'host': init_host.HOST, 'state': self.state,
            'database': self.database, 'node': self.node_path}

    @property
    def node_path(self):
        return os.path.join(self.state, 'node.xml')

    def prepare(self, servers=0):
        import uuid
        uuids = [str(uuid.uuid4()) for _ in range(servers)]
        db_api.configure(self.database)
        try:
            migration.db_sync()
            init_host._rows(uuids)
        finally:
            db_api.dispose()
        init_host._node_with_domains(self.node_path, uuids)

    def _ready(self, hosts):
        path = self.database[len('sqlite:///'):]
        with sqlite3.connect(path) as connection:
            row = connection.execute(
                'SELECT report_count FROM services WHERE host = ? AND '
                '"binary" = ?', (init_host.HOST, self.binary)).fetchone()
        return row is not None and row[0] > 0


def settled_rss(process):
    time.sleep(SETTLE)
    return process.rss_mb()


def compute_alone(count):
    with NovaCompute() as compute:
        compute.prepare(servers=count)
        compute.start()
        rss = settled_rss(compute)
    return common.Line(
        'RSS nova-compute alone, %d instances (test driver)' % count,
        '%.1f MiB' % rss, target='<= %g MiB' % COMPUTE_MB,
        met=common.verdict(rss <= COMPUTE_MB))


def boot_many(cloud, client, prefix, count):
    return [cloud.boot(client, '%s-%d' % (prefix, n))[1]
            for n in range(count)]


def import_footprint():
    """RSS of a Python that only imports what nova-compute loads."""
    code = ('import %s\n'
            'print(open("/proc/self/status").read())' % ', '.join(IMPORTS))
    output = subprocess.run(
        [sys.executable, '-W', 'ignore', '-c', code], cwd=common.TOP,
        check=True, capture_output=True, text=True).stdout
    rss = next(int(line.split()[1]) for line in output.splitlines()
               if line.startswith('VmRSS:')) / 1024.0
    return common.Line(
        'RSS of the imports alone (%s)' % ', '.join(IMPORTS),
        '%.1f MiB' % rss)


def nova_all_growth(count, cycles):
    with nova_all.NovaAll() as cloud:
        cloud.prepare()
        cloud.start()
        client = cloud.client()
        cloud.image_id()
        idle = settled_rss(cloud)
        servers = boot_many(cloud, client, 'bench-rss', count)
        live = settled_rss(cloud)
        cloud.delete_and_wait(client, servers)
        deleted = settled_rss(cloud)
        done = count
        while done < cycles:
            batch = min(count, cycles - done)
            servers = boot_many(cloud, client, 'bench-churn-%d' % done,
                                batch)
            cloud.delete_and_wait(client, servers)
            done += batch
        churned = settled_rss(cloud)
    per_server = (live - idle) / count
    per_cycle = (churned - idle) / cycles
    return [
        common.Line(
            'RSS nova-all: idle, %d live, deleted' % count,
            '%.1f / %.1f / %.1f MiB' % (idle, live, deleted),
            'idle %.1f MiB' % idle, '%+.2f MiB/live server' % per_server),
        common.Line(
            'RSS nova-all after %d create/delete cycles' % cycles,
            '%.1f MiB' % churned, 'idle %.1f MiB' % idle,
            '%+.3f MiB/cycle' % per_cycle,
            '<= %g MiB/cycle' % PER_CYCLE_MB,
            common.verdict(per_cycle <= PER_CYCLE_MB))]


def run(quick):
    count = 30 if quick else INSTANCES
    cycles = 200 if quick else CYCLES
    return [compute_alone(count), import_footprint(),
            *nova_all_growth(count, cycles)]
