"""What crash safety costs: the spawn journal per spawn, and the live
storage checks per evacuation.

On libvirt's test driver (no hypervisor time: the figures are the
project's own), with real files under a temporary instances_path and
SQLite:

* **journal**: N spawns through ``LibvirtDriver.spawn`` with a qcow2
  overlay each; counts the fsyncs per spawn and the time spent in them
  (``os.fsync`` is wrapped to count and time the calls; nothing else is
  changed), and the time spent writing the journal itself;
* **live checks**: what the target of an evacuation does before it
  spawns to decide from fresh evidence (this host's marker read live and
  compared with its recorded identity, the source's recorded identity,
  the instance directory's ownership stamp, the storage-writable check),
  N times, next to the spawn it precedes.

Run::

    .venv/bin/python benchmarks/crash_safety.py [--spawns N]
"""

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from nova.compute import disk_ownership  # noqa: E402
from nova.compute import shared_storage  # noqa: E402
from nova.compute import storage_report  # noqa: E402
from nova.conf import CONF  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402
from nova import objects  # noqa: E402
from nova.tests.fixtures import database as dbf  # noqa: E402
from nova.tests.fixtures import libvirt_host as fixtures  # noqa: E402
from nova.virt import journal  # noqa: E402


class FsyncMeter:
    """Counts and times os.fsync while installed."""

    def __init__(self):
        self.calls = 0
        self.seconds = 0.0
        self._real = os.fsync

    def __call__(self, fd):
        started = time.perf_counter()
        try:
            return self._real(fd)
        finally:
            self.seconds += time.perf_counter() - started
            self.calls += 1

    def __enter__(self):
        os.fsync = self
        return self

    def __exit__(self, *exc):
        os.fsync = self._real


class JournalMeter:
    """Times SpawnJournal._save (every journal write) while installed."""

    def __init__(self):
        self.seconds = 0.0
        self.writes = 0
        self._real = journal.SpawnJournal._save

    def __enter__(self):
        meter = self

        def save(journal_self):
            started = time.perf_counter()
            try:
                return meter._real(journal_self)
            finally:
                meter.seconds += time.perf_counter() - started
                meter.writes += 1
        journal.SpawnJournal._save = save
        return self

    def __exit__(self, *exc):
        journal.SpawnJournal._save = self._real


def ms(values):
    return '%.2f' % (1000 * statistics.median(values))


def bench_spawns(tmp, ctx, count):
    store = fixtures.make_image_store(tmp)
    image = fixtures.add_disk_image(store, tmp, size_mb=1)
    flavor = dbf.make_flavor(ctx, '1', memory_mb=64, vcpus=1, root_gb=1)
    host = fixtures.make_host(tmp, 'bench', image_store_path=store.path,
                              vif_plugging_timeout=0)
    spawn_times = []
    with FsyncMeter() as fsyncs, JournalMeter() as writes:
        for n in range(count):
            instance = objects.Instance(ctx, uuid=None, flavor=flavor,
                                        image_ref=image.id)
            instance.uuid = '%08d-0000-4000-8000-000000000000' % n
            started = time.perf_counter()
            host.driver.spawn(ctx, instance, image,
                              network_info=[])
            spawn_times.append(time.perf_counter() - started)
    host.close()
    print('spawn (test driver, qcow2 overlay): %d spawns, median %s ms'
          % (count, ms(spawn_times)))
    print('  fsyncs per spawn: %.1f, %.2f ms in fsync per spawn'
          % (fsyncs.calls / count, 1000 * fsyncs.seconds / count))
    print('  journal writes per spawn: %.1f, %.2f ms writing the journal '
          '(fsyncs included) per spawn, %.0f%% of the spawn'
          % (writes.writes / count, 1000 * writes.seconds / count,
             100 * writes.seconds / sum(spawn_times)))
    return statistics.median(spawn_times)


def bench_checks(tmp, ctx, count, spawn_median):
    a = fixtures.make_host(tmp, 'a')
    b = fixtures.make_host(tmp, 'b')
    for sim in (a, b):
        dbf.make_service(ctx, sim.name,
                         identity=sim.driver.get_storage_identity())
    reporter = storage_report.StorageReporter('b', b.driver)
    reporter.record_at_start(ctx)
    instance = objects.Instance(ctx, uuid='11111111-2222-4333-8444-'
                                          '555555555555')
    times = []
    for _ in range(count):
        started = time.perf_counter()
        reporter.check_writable()
        own = disk_ownership.live_storage(ctx, 'b', b.driver).identity
        evidence = shared_storage.gather(ctx, 'a', 'b', own)
        shared = shared_storage.decide(evidence, None)
        exists = b.driver.instance_dir_exists(instance)
        stamp = b.driver.read_ownership_stamp(instance) if exists else None
        disk_ownership.on_target(
            instance_launched=True, shared=shared, source='a', host='b',
            identity=own, stamp=stamp, directory_exists=exists)
        times.append(time.perf_counter() - started)
    a.close()
    b.close()
    median = statistics.median(times)
    print('live storage checks per evacuation: median %s ms, p95 %.2f ms '
          '(%d runs); %.1f%% of one test-driver spawn'
          % (ms(times), 1000 * sorted(times)[int(0.95 * len(times))],
             count, 100 * median / spawn_median))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--spawns', type=int, default=50)
    parser.add_argument('--checks', type=int, default=500)
    args = parser.parse_args()
    logging.getLogger('nova').setLevel(logging.CRITICAL)
    tmp = tempfile.mkdtemp(prefix='nova-bench-')
    try:
        CONF([], project='nova', default_config_files=[])
        CONF.set_override('state_path', tmp)
        db_api.configure('sqlite:///' + os.path.join(tmp, 'nova.sqlite'))
        migration.db_sync()
        ctx = nova_context.get_admin_context()
        spawn_median = bench_spawns(tmp, ctx, args.spawns)
        bench_checks(tmp, ctx, args.checks, spawn_median)
    finally:
        db_api.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
