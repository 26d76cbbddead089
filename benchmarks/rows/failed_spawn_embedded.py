"""A failed spawn on the embedded default (libvirt's test driver): from
the failure until the host holds nothing of the instance, against the
same cleanup done by hand.

The in-process cloud of ``benchmarks/evacuate.py`` (``open_cloud``), one
compute host with ``vif_plugging_timeout = 1`` whose network backend
withholds every ``network-vif-plugged`` event (the fixtures'
``NetworkBackendVirtAPI`` with ``deliver = False``, as the functional
tests do), so every build's spawn times out waiting, its guest started
paused. Each round, one server is created through the compute API:

* project: the driver's cleanup of the failed start
  (``LibvirtDriver._cleanup_failed_start``, timed by wrapping it while
  the row runs: it starts as the failure is caught and the host is clean
  when it returns, checked afterwards: no domain, no plugged VIF, no
  instance directory);
* baseline: a copy of the same domain (its XML taken while the guest
  waited, and every file of its instance directory: the disk, its
  ``disk.info``, the console log, the attempt's stamp), defined and
  started paused on the same host, then removed by hand through the
  same libvirt connection: destroy, undefine, ``rm -rf`` of its
  directory. The copies are written to disk (``fsync``) before the
  clock starts, as the instance's own files were and as any file a
  host kept longer than the kernel's writeback delay (30 s) is: on this
  ext4, removing a file still only in the page cache costs 0.02-0.04
  ms, removing one already on disk 0.26-1.2 ms (the journal records the
  freed blocks), so a baseline of unwritten copies would time a cleanup
  no host ever does.

30 rounds (``--quick``: 3): each takes about a second (the wait), and
removing a few files of a few milliseconds varies from run to run with
the file system journal's state. Target: median ratio at most 1.1. Test-driver
calls are in process and take microseconds, so both figures are the
software's own cost; ``failed_spawn`` measures the same on real QEMU.
"""

import os
import shutil
import time

from rows import common
from rows import guarantees

import evacuate  # noqa: E402  (benchmarks/evacuate.py)

from nova import context as nova_context  # noqa: E402
from nova.virt.libvirt import driver as libvirt_driver  # noqa: E402

LIMIT = 1.1
# What each guarantee costs here (rows/guarantees.py).
GUARANTEES = ('file_fsync',)
# The baseline's copies are written to disk even when the project's
# fsyncs are switched off (that patches os.fsync in this process).
_fsync = os.fsync
VIF_TIMEOUT = 1


def copy_on_disk(directory, copy_dir):
    """Every regular file of ``directory`` copied into ``copy_dir``, each
    copy and ``copy_dir`` written to disk."""
    for entry in os.scandir(directory):
        if not entry.is_file(follow_symlinks=False):
            continue
        target = os.path.join(copy_dir, entry.name)
        shutil.copy2(entry.path, target)
        with open(target, 'rb') as f:
            _fsync(f.fileno())
    descriptor = os.open(copy_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _fsync(descriptor)
    finally:
        os.close(descriptor)


def one_round(cloud, sim, meter, n):
    instance = cloud.api.create(nova_context.get_admin_context(),
                                'bench-failed-%d' % n, cloud.image.id, '1')
    common.wait_until(lambda: instance.uuid in sim.domain_uuids(), 30,
                      'the guest of %s' % instance.uuid, interval=0.005)
    # While the guest waits for its event: a copy of it.
    name = 'bench-copy-%d' % n
    directory = sim.instance_dir(instance.uuid)
    copy_dir = os.path.join(sim.settings.instances_path, name)
    os.makedirs(copy_dir)
    text, _disks = common.copied_xml(
        sim.driver.host.find_guest(instance.uuid).get_xml(), name,
        directory, copy_dir, evacuate.BRIDGE)
    copy_on_disk(directory, copy_dir)

    common.wait_until(
        lambda: cloud.instance(instance.uuid).task_state is None,
        30 + VIF_TIMEOUT, 'the build of %s' % instance.uuid, interval=0.01)
    (project,) = meter.durations['_cleanup_failed_start'][n:]
    ports = {vif.id for vif in cloud.instance(instance.uuid).network_info}
    if (instance.uuid in sim.domain_uuids() or ports & sim.plugged_vifs()
            or os.path.exists(directory)):
        raise RuntimeError('the failed spawn of %s left the host unclean'
                           % instance.uuid)

    guest = sim.driver.host.define_guest(text)
    guest.launch(pause=True)
    started = time.perf_counter()
    guest.poweroff()
    guest.undefine()
    shutil.rmtree(copy_dir)
    baseline = time.perf_counter() - started
    return project, baseline


def measure(rounds):
    """(project, baseline) seconds of each of ``rounds`` failed spawns in
    a new cloud."""
    with evacuate.open_cloud(rounds) as cloud, common.MethodTimer(
            libvirt_driver.LibvirtDriver,
            ('_cleanup_failed_start',)) as meter:
        sim = cloud.start_compute('a', vif_plugging_timeout=VIF_TIMEOUT)
        sim.virtapi.deliver = False
        return [one_round(cloud, sim, meter, n) for n in range(rounds)]


def run(quick):
    rounds = 3 if quick else 30
    results = measure(rounds)
    lines = [common.ratio_line(
        'failed spawn (vif-plugged withheld), embedded: failure -> host '
        'clean vs by hand', [p for p, _b in results],
        [b for _p, b in results], LIMIT)]
    # What the cleanup's fsyncs cost (the directories written to disk
    # once the files are gone, before the journal that would redo the
    # cleanup after a crash is removed): the same in this process with
    # them switched off (benchmark only).
    with guarantees.switched_off(*GUARANTEES):
        without = measure(rounds)
    lines.append(common.without_line(GUARANTEES, [p for p, _b in without],
                                     [b for _p, b in without]))
    return lines
