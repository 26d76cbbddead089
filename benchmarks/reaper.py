"""What one run of the orphan reaper costs on a host with many instances.

One simulated host on libvirt's test driver
(``nova/tests/fixtures/libvirt_host.py``) with N instances spawned
through the real ``LibvirtDriver``: a domain each, a real instance
directory with a qcow2 overlay (made by ``qemu-img``) on one real base
image in ``_base``, and a row each in a new SQLite database.
``nova.compute.reaper.reap`` then runs as the compute manager's periodic
task would, in these states:

* nothing to do: every instance is the host's own, the base image young;
* base old, in use: the base image was last used more than
  ``remove_unused_original_minimum_age_seconds`` ago, so the reaper looks
  for a disk using it (it stops at the first one);
* old unused base: another, unused, old base image is there too, so the
  reaper reads the backing file of every overlay (``qemu-img info``, one
  process per disk) before it removes it (made again before each run);
* the same, as a dry run;
* orphans: one run in which a tenth of the instances were deleted in the
  database, so their domains are powered off and undefined.

Run::

    .venv/bin/python benchmarks/reaper.py [--instances N] [--runs R]

Prints the time the setup took, then per state the median of R runs in
ms per run and ms per instance.
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

from oslo_utils import uuidutils  # noqa: E402

from nova.compute import locks  # noqa: E402
from nova.compute import reap_report  # noqa: E402
from nova.compute import reaper  # noqa: E402
from nova.conf import CONF  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402
from nova.tests.fixtures import database as dbf  # noqa: E402
from nova.tests.fixtures import libvirt_host as fixtures  # noqa: E402
from nova.virt.libvirt import imagecache  # noqa: E402

LONG_AGO = 3 * 24 * 3600


def _age(path):
    when = time.time() - LONG_AGO
    os.utime(path, (when, when))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--instances', type=int, default=1000)
    parser.add_argument('--runs', type=int, default=5)
    args = parser.parse_args()

    logging.getLogger('nova').setLevel(logging.CRITICAL)
    tmp = tempfile.mkdtemp(prefix='nova-bench-reaper-')
    host = None
    try:
        CONF([], project='nova', default_config_files=[])
        CONF.set_override('state_path', tmp)
        db_api.configure('sqlite:///' + os.path.join(tmp, 'nova.sqlite'))
        migration.db_sync()
        ctx = nova_context.get_admin_context()
        images = fixtures.make_image_store(tmp)
        image = fixtures.add_disk_image(images, tmp)
        host = fixtures.make_host(tmp, 'bench1', image_store_path=images.path,
                                  vif_plugging_timeout=30)
        settings, driver = host.settings, host.driver
        dbf.make_service(ctx, 'bench1',
                         identity=driver.get_storage_identity())
        flavor = dbf.make_flavor(ctx)

        started = time.perf_counter()
        instances = []
        for n in range(args.instances):
            instance = dbf.make_instance(
                ctx, 'bench1', flavor=flavor, image_ref=image.id,
                display_name='b%d' % n,
                network_info=fixtures.make_network_info(
                    port_ids=[uuidutils.generate_uuid()]))
            driver.spawn(ctx, instance, image,
                         network_info=instance.network_info)
            instances.append(instance)
        print('setup: %d instances spawned on the libvirt test driver in '
              '%.1f s' % (len(instances), time.perf_counter() - started))

        instance_locks = locks.InstanceLocks()
        base = driver.image_cache.path_for(image.id)
        unused = os.path.join(os.path.dirname(base),
                              imagecache.image_hash('unused image'))

        def run(dry_run=False, before=None):
            times, report = [], None
            for _ in range(args.runs):
                if before is not None:
                    before()
                t0 = time.perf_counter()
                report = reaper.reap(ctx, settings, driver, instance_locks,
                                     dry_run=dry_run)
                times.append(time.perf_counter() - t0)
            return statistics.median(times), report

        def old_unused_base():
            shutil.copyfile(base, unused)
            _age(unused)

        print('%-24s %10s %14s  %s' % ('state', 'ms/run', 'ms/instance',
                                       'what the run did'))

        def show(label, seconds, report):
            did = '%d acted on, %d kept, %d failed' % (
                len(report.acted), len(report.kept), len(report.errors))
            print('%-24s %10.1f %14.3f  %s' % (
                label, 1000 * seconds, 1000 * seconds / len(instances),
                did))

        show('nothing to do', *run())
        _age(base)
        show('base old, in use', *run())
        show('old unused base', *run(before=old_unused_base))
        show('old unused base, dry', *run(dry_run=True,
                                          before=old_unused_base))
        if os.path.exists(unused):
            os.unlink(unused)
        for instance in instances[::10]:
            instance.destroy()
        args.runs, runs = 1, args.runs
        seconds, report = run()
        args.runs = runs
        show('orphans (%d stopped)' % len(
            [f for f in report.acted if f.kind == reap_report.DOMAIN]),
            seconds, report)
    finally:
        if host is not None:
            host.close()
        db_api.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
