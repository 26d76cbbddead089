"""Booting on real QEMU: ``POST /servers`` until the server is ACTIVE,
against ``virsh create`` of the same domain on the same host.

A ``nova.testing.cluster`` of one compute host (``rows/qemu_cluster.py``:
real libvirtd and QEMU (TCG here), PostgreSQL, RabbitMQ, nova-api,
nova-conductor, nova-compute; the 1 MiB ``bootsector`` image, flavor
``m1.nano``, network ``public`` on ``br-nova``). Each round, alternating:

* project: ``POST /servers`` (REST, ``nova.cli.client``), then ``GET
  /servers/<id>`` every 20 ms until ACTIVE with no task; client time from
  the request. It includes what a boot is: scheduling, the port, the
  disk (a qcow2 overlay of the cached image), the domain XML, the tap,
  the guest started paused until ``network-vif-plugged``, then resumed;
* baseline: ``virsh create`` of a copy of that server's own domain XML
  (new name and UUID, its disk files copied beforehand, a tap made by
  libvirt on the same bridge), timed until ``virsh`` returns (the domain
  runs); then destroyed.

The server is deleted (and gone) before the next round. One round first
warms both up (image cache, QEMU's first start) and is not counted.
10 rounds (``--quick``: 3). Target: median ratio at most 1.15.

Then, to say what each guarantee costs on this row, the same rounds in a
new cluster whose services start without it (``GUARANTEES``; benchmark
only, ``rows/guarantees.py``), and once without all of them, each against
its own run's ``virsh create``. Each line also gives the project's time
outside QEMU's launch (every phase but the launch's): QEMU's own launch
(about 300-450 ms here under TCG) varies from one cluster to the next by
more than a guarantee costs, so that figure, not the ratio, says what a
guarantee costs; trust 10 rounds over 3.
"""

import statistics
import time

from rows import common
from rows import guarantees
from rows import qemu_cluster

LIMIT = 1.15
# The first mark of a boot (nova/compute/api.py).
FIRST_MARK = 'api.create_received'
# What each guarantee costs here (rows/guarantees.py): those a boot on
# this cluster pays.
GUARANTEES = ('token_checks', 'file_fsync', 'postgres_sync', 'vif_wait')
# The phase that is QEMU starting the guest (nova/virt/guest_start.py).
LAUNCH_PHASE = 'start.waiting_for_vif_events'


def one_round(bench, client, n):
    started = time.perf_counter()
    uuid = bench.post_server(client, 'bench-boot-%s' % n)
    bench.wait_server(client, uuid, 'ACTIVE')
    project = time.perf_counter() - started
    host = bench.server(client, uuid)['OS-EXT-SRV-ATTR:host']
    path, name = bench.copy_domain(host, uuid, 'boot-%s' % n)
    try:
        baseline = qemu_cluster.timed_run(
            ['virsh', '-c', bench.entry(host).libvirt_uri, 'create', path])
    finally:
        bench.remove_copy(host, name)
    bench.delete_servers(client, [uuid])
    return project, baseline


def measure(rounds, switched_off=()):
    """(project seconds, baseline seconds, phase traces) of ``rounds``
    rounds in a new cluster started without ``switched_off``."""
    with qemu_cluster.BenchCluster(1, switched_off=switched_off) as bench:
        client = bench.client()
        one_round(bench, client, 'warm-up')
        since = time.time()
        results = [one_round(bench, client, n) for n in range(rounds)]
        traces = bench.traces(since, FIRST_MARK)
    return [p for p, _b in results], [b for _p, b in results], traces


def outside_launch(traces):
    """', outside the launch: median X': the project's own time, every
    phase but QEMU's launch (which varies from one cluster to the next by
    more than what a guarantee costs)."""
    own = [sum(p.seconds for p in trace if p.name != LAUNCH_PHASE)
           for trace in traces if trace]
    if not own:
        return ''
    return '; outside the launch: median %s' % common.seconds(
        statistics.median(own))


def run(quick):
    rounds = 3 if quick else 10
    project, baseline, traces = measure(rounds)
    line = common.ratio_line(
        'boot on real QEMU (cluster): POST -> ACTIVE vs virsh create',
        project, baseline, LIMIT)
    line.project += outside_launch(traces)
    line.phases = common.phase_table(traces) or None
    lines = [line]
    for names in guarantees.one_by_one_then_all(GUARANTEES):
        without, its_baseline, its_traces = measure(rounds, names)
        line = common.without_line(names, without, its_baseline)
        line.project += outside_launch(its_traces)
        lines.append(line)
    return lines
