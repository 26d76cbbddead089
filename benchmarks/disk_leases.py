"""What disk leases cost on domain start, measured on the real cluster.

Brings up a ``nova.testing.cluster`` of two compute hosts: compute1 with
libvirt's lock manager (``lock_manager = "lockd"``, its own virtlockd
leasing every disk on the disk file itself), compute2 without. On each,
one TCG domain on a qcow2 overlay of the cluster's guest image (in the
host's own storage) is started and destroyed again and again through the
libvirt driver's ``Host``/``Guest``, the two ways the driver starts a
guest:

* ``start``: ``virDomainCreate`` (leases taken as the vCPUs start);
* ``paused + resume``: started paused, then resumed, as the driver does
  while it waits for ``network-vif-plugged`` (the leases are taken by the
  resume).

Run as root (``tools/bootstrap`` installs what it needs)::

    .venv/bin/python benchmarks/disk_leases.py [--runs N]

Prints, per host, the median and the mean in milliseconds, the
difference of the medians (the cost of the leases) and the run-to-run
spread it must be read against. Runs alternate between the hosts.
"""

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from nova.testing import cluster as cluster_mod  # noqa: E402
from nova.testing import hypervisor  # noqa: E402
from nova.virt.libvirt import host as libvirt_host  # noqa: E402

WITH, WITHOUT = 'compute1', 'compute2'


def _timed(call):
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000.0


class Bench:
    """One domain on host ``name`` of the cluster, started and stopped."""

    def __init__(self, cluster, name):
        entry = cluster.record.host(name)
        directory = os.path.join(entry.storage_dir, 'bench')
        os.makedirs(directory, exist_ok=True)
        disk = os.path.join(directory, 'disk')
        image = os.path.join(cluster.layout.guest, 'bootsector.qcow2')
        subprocess.run(['qemu-img', 'create', '-f', 'qcow2', '-b', image,
                        '-F', 'qcow2', disk], check=True,
                       capture_output=True)
        self.host = libvirt_host.Host(entry.libvirt_uri, name)
        self.guest = self.host.define_guest(hypervisor.domain_xml(
            'bench-' + name, uuid.uuid4(), disk, memory_mib=32))
        self.times = {'start': [], 'paused + resume': []}
        self.guest.launch()         # warm-up: caches, first QEMU exec
        self.guest.poweroff()

    def _paused_then_resumed(self):
        self.guest.launch(pause=True)
        self.guest.resume()

    def run_once(self):
        self.times['start'].append(_timed(self.guest.launch))
        self.guest.poweroff()
        self.times['paused + resume'].append(
            _timed(self._paused_then_resumed))
        self.guest.poweroff()

    def close(self):
        try:
            self.guest.undefine()
        finally:
            self.host.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=30)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    reason = cluster_mod.unavailable_reason()
    if reason:
        print('cannot run a cluster here: %s' % reason)
        return 1
    base_dir = tempfile.mkdtemp(prefix='nova-bench-leases-')
    spec = cluster_mod.ClusterSpec(base_dir=base_dir, hosts=2,
                                   hosts_without_leases=(WITHOUT,))
    cluster = cluster_mod.Cluster(spec)
    os.chmod(base_dir, 0o755)
    benches = []
    try:
        cluster.up(reclaim_first=False)
        benches = [Bench(cluster, WITH), Bench(cluster, WITHOUT)]
        # Interleaved, so that drift (the machine's other load) falls on
        # both hosts alike.
        for _ in range(args.runs):
            for bench in benches:
                bench.run_once()
        results = {WITH: benches[0].times, WITHOUT: benches[1].times}
    finally:
        for bench in benches:
            bench.close()
        cluster.down()
        if os.path.isdir(base_dir):
            os.rmdir(base_dir)
    print('domain start on the cluster, %d runs each (ms)' % args.runs)
    print('%-18s %-22s %8s %8s' % ('how', 'host', 'median', 'mean'))
    for how in ('start', 'paused + resume'):
        for name, label in ((WITH, 'compute1 (lockd)'),
                            (WITHOUT, 'compute2 (no leases)')):
            values = results[name][how]
            print('%-18s %-22s %8.1f %8.1f' % (
                how, label, statistics.median(values),
                statistics.fmean(values)))
        cost = (statistics.median(results[WITH][how])
                - statistics.median(results[WITHOUT][how]))
        spread = statistics.stdev(results[WITHOUT][how])
        print('%-18s %-22s %8.1f   (run-to-run stdev without leases '
              '%.1f)' % (how, 'cost of leases', cost, spread))
    return 0


if __name__ == '__main__':
    sys.exit(main())
