"""What a compute host's start costs with many instances on it.

One simulated host on libvirt's test driver (its node file defines N
running domains) whose N instances are rows of a new SQLite database,
every one idle and recorded as running: a host that restarts with all its
guests as they were. Times the reconciliation ``init_host`` runs
(``driver.get_power_states()`` then ``host_init.init_instances``, with the
query of the host's instances) and counts its SQL statements; hypervisor
calls are the test driver's, in process.

Run::

    .venv/bin/python benchmarks/init_host.py [--instances 500,2000,10000]
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

from nova.compute import host_init  # noqa: E402
from nova.compute import locks  # noqa: E402
from nova.compute import operation  # noqa: E402
from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402
from nova.db import models  # noqa: E402
from nova import objects  # noqa: E402
from nova.tests.fixtures import database as dbf  # noqa: E402
from nova.tests.fixtures import libvirt_host  # noqa: E402

HOST = 'compute1'
DOMAIN = ("<domain type='test'><name>instance-{uuid}</name>"
          "<uuid>{uuid}</uuid><memory>1024</memory><vcpu>1</vcpu>"
          "<os><type>hvm</type></os><devices/></domain>")


def _node_with_domains(path, uuids):
    """A test-driver node file that holds ``uuids`` as running domains."""
    libvirt_host.write_node_xml(path, cpus=64, memory_mb=10 ** 6)
    with open(path) as f:
        node = f.read()
    domains = ''.join(DOMAIN.format(uuid=u) for u in uuids)
    with open(path, 'w') as f:
        f.write(node.replace('</node>', domains + '</node>'))


def _rows(uuids):
    flavor = objects.Flavor('1', 'm1.tiny', 1, 1, 1)
    rows = [{'uuid': u, 'host': HOST, 'node': HOST, 'vm_state': 'active',
             'power_state': 1, 'flavor': flavor.to_dict(),
             'flavor_vcpus': flavor.vcpus,
             'flavor_memory_mb': flavor.memory_mb,
             'flavor_disk_gb': flavor.disk_gb, 'deleted': False}
            for u in uuids]
    with db_api.get_engine().begin() as connection:
        for start in range(0, len(rows), 5000):
            connection.execute(sa.insert(models.Instance.__table__).values(
                rows[start:start + 5000]))


def measure(count, runs):
    directory = tempfile.mkdtemp(prefix='nova-bench-init-host-')
    try:
        db_api.configure('sqlite:///' + os.path.join(directory, 'n.sqlite'))
        migration.db_sync()
        ctx = dbf.admin_context()
        uuids = [str(uuid.uuid4()) for _ in range(count)]
        _rows(uuids)
        host = libvirt_host.make_host(directory, HOST, connect=False)
        _node_with_domains(host.node_path, uuids)
        # A new connection starts from the node file's content.
        host.driver.init_host(HOST)
        compute = operation.ComputeHost(host=HOST, settings=host.settings,
                                        driver=host.driver,
                                        virtapi=host.virtapi)
        runner = operation.Runner(compute, locks.InstanceLocks())
        statements = []
        sa.event.listen(db_api.get_engine(), 'before_cursor_execute',
                        lambda *args: statements.append(1))
        times = []
        for _ in range(runs):
            del statements[:]
            started = time.perf_counter()
            instances = objects.Instance.get_by_host(ctx, HOST)
            states = host.driver.get_power_states()
            host_init.init_instances(compute, runner, instances,
                                     power_states=states)
            times.append(time.perf_counter() - started)
        assert len(states) == count, (len(states), count)
        host.close()
        return times, len(statements)
    finally:
        db_api.dispose()
        shutil.rmtree(directory, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--instances', default='500,2000,10000')
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    print('init_host reconciliation, libvirt test driver, SQLite, all '
          'instances idle (median of %d runs)' % args.runs)
    print('%10s %10s %12s' % ('instances', 'seconds', 'statements'))
    for count in (int(n) for n in args.instances.split(',')):
        times, statements = measure(count, args.runs)
        print('%10d %10.3f %12d' % (count, statistics.median(times),
                                    statements))


if __name__ == '__main__':
    main()
