"""A failed spawn on real QEMU: from the failure until the host holds
nothing of the instance, against the same cleanup done by hand.

A ``nova.testing.cluster`` of one compute host (``rows/qemu_cluster.py``)
with ``vif_plugging_timeout = 4``. Its network agent cannot reach nova-api
(``Cluster.set_api_reachable(host, False)``), so the
``network-vif-plugged`` event the new guest waits for (started paused) is
withheld and the spawn fails when the wait times out. Each round:

* project: from the failure (the timestamp of nova-compute's log line
  ``Failed to start the guest`` for that instance, written as the driver
  catches the timeout and before it cleans up) until the host is clean:
  no domain of the instance in libvirt, no tap it made in the host's
  network namespace, no instance directory (polled every 10 ms);
* baseline: a copy of the same domain (its definition and disk files
  taken while the guest waited, see ``qemu_cluster.copy_domain``),
  defined and started paused as nova's was, then removed by hand:
  ``virsh destroy``, ``virsh undefine``, ``rm -rf`` of its directory
  (libvirt removes the tap it made), timed from the first command to the
  end of the last.

5 rounds (``--quick``: 2), each server deleted before the next. Target:
median ratio at most 1.1.
"""

import datetime
import os
import shutil
import time

from rows import common
from rows import qemu_cluster

from nova.virt.libvirt import host as libvirt_host  # noqa: E402

HOST = 'compute1'
VIF_TIMEOUT = 4
LIMIT = 1.1
FAILED = 'Failed to start the guest'


def failure_time(log_file, offset, uuid):
    """Epoch seconds of the ``FAILED`` line of ``uuid`` after ``offset``,
    or None."""
    with open(log_file, 'rb') as f:
        f.seek(offset)
        text = f.read().decode(errors='replace')
    for line in text.splitlines():
        if FAILED in line and uuid in line:
            stamp = datetime.datetime.strptime(line[:23],
                                               '%Y-%m-%d %H:%M:%S.%f')
            return stamp.timestamp()
    return None


def one_round(bench, client, hypervisor, n):
    entry = bench.entry(HOST)
    taps_before = bench.taps(HOST)
    offset = os.path.getsize(entry.log_file)
    uuid = bench.post_server(client, 'bench-failed-%d' % n)
    # While the guest waits (paused) for its event: a copy of it.
    common.wait_until(lambda: bench.has_domain(HOST, uuid), 60,
                      'domain of %s' % uuid, interval=0.05)
    path, name = bench.copy_domain(HOST, uuid, 'failed-%d' % n)
    directory = bench.instance_dir(HOST, uuid)

    def clean():
        return (hypervisor.find_guest(uuid) is None
                and not os.path.exists(directory)
                and not bench.taps(HOST) - taps_before)
    common.wait_until(clean, 60 + VIF_TIMEOUT, 'host clean of %s' % uuid,
                      interval=0.01)
    cleaned = time.time()
    failed = failure_time(entry.log_file, offset, uuid)
    if failed is None:
        raise RuntimeError('no "%s" line for %s in %s'
                           % (FAILED, uuid, entry.log_file))
    project = cleaned - failed

    uri = entry.libvirt_uri
    bench.virsh(HOST, 'define', path)
    bench.virsh(HOST, 'start', '--paused', name)
    copy_dir = os.path.join(entry.storage_dir, name)
    started = time.perf_counter()
    for command in ('destroy', 'undefine'):
        qemu_cluster.timed_run(['virsh', '-c', uri, command, name])
    shutil.rmtree(copy_dir)
    baseline = time.perf_counter() - started
    bench.remove_copy(HOST, name)

    bench.wait_server(client, uuid, 'ERROR')
    bench.delete_servers(client, [uuid])
    return project, baseline


def run(quick):
    rounds = 2 if quick else 5
    with qemu_cluster.BenchCluster(
            1, vif_plugging_timeout=VIF_TIMEOUT) as bench:
        client = bench.client()
        hypervisor = libvirt_host.Host(bench.entry(HOST).libvirt_uri, HOST)
        bench.cluster.set_api_reachable(HOST, False)
        try:
            results = [one_round(bench, client, hypervisor, n)
                       for n in range(rounds)]
        finally:
            hypervisor.close()
    return [common.ratio_line(
        'failed spawn (vif-plugged withheld), real QEMU: failure -> host '
        'clean vs by hand', [p for p, _b in results],
        [b for _p, b in results], LIMIT)]
