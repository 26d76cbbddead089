"""Resident memory (``VmRSS`` from ``/proc/<pid>/status``) of the services.

* ``nova-compute`` alone (``.venv/bin/nova-compute``, its own process):
  host ``compute1`` on libvirt's test driver whose node file holds 100
  running domains, the 100 instances idle in a new SQLite database
  (``benchmarks/init_host.py`` writes both), ``inproc://`` RPC (nobody
  else to talk to). Read 3 s after its first heartbeat, that is after
  ``init_host``.
* ``nova-all`` of the embedded default (``rows/nova_all.py``): idle (3 s
  after both hosts are up); after 100 boots over the REST API (100 live
  servers); after deleting them; and after another 100 boots and deletes
  (churn), each read 3 s after the last server is ACTIVE or gone.

Targets: nova-compute at most 100 MiB. nova-all: the growth over idle
with 100 live servers at most 1 MiB a server, and after the churn no
more than with the 100 live (plus 2 MiB): memory follows the servers
that exist, not those that ever did. ``--quick``: 30 instead of 100.
"""

import os
import sqlite3
import time

from rows import common
from rows import nova_all

import init_host  # noqa: E402  (benchmarks/init_host.py)

from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402

INSTANCES = 100
SETTLE = 3.0
COMPUTE_MB = 100.0
PER_SERVER_MB = 1.0
SLACK_MB = 2.0
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


def nova_all_growth(count):
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
        servers = boot_many(cloud, client, 'bench-churn', count)
        cloud.delete_and_wait(client, servers)
        churned = settled_rss(cloud)
    per_server = (live - idle) / count
    ok = per_server <= PER_SERVER_MB and churned <= live + SLACK_MB
    return common.Line(
        'RSS nova-all: idle, %d live, deleted, after churn' % count,
        '%.1f / %.1f / %.1f / %.1f MiB' % (idle, live, deleted, churned),
        'idle %.1f MiB' % idle,
        '%+.2f MiB/server' % per_server,
        '<= %g MiB/server; churn <= live + %g MiB'
        % (PER_SERVER_MB, SLACK_MB), common.verdict(ok))


def run(quick):
    count = 30 if quick else INSTANCES
    return [compute_alone(count), nova_all_growth(count)]
