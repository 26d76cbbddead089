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
* baseline: a copy of the same domain (its XML and disk taken while the
  guest waited), defined and started paused on the same host, then
  removed by hand through the same libvirt connection: destroy,
  undefine, ``rm -rf`` of its directory.

10 rounds (``--quick``: 3). Target: median ratio at most 1.1. Test-driver
calls are in process and take microseconds, so both figures are the
software's own cost; ``failed_spawn`` measures the same on real QEMU.
"""

import os
import shutil
import time

from rows import common

import evacuate  # noqa: E402  (benchmarks/evacuate.py)

from nova import context as nova_context  # noqa: E402
from nova.virt.libvirt import driver as libvirt_driver  # noqa: E402

LIMIT = 1.1
VIF_TIMEOUT = 1


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
    text, files = common.copied_xml(
        sim.driver.host.find_guest(instance.uuid).get_xml(), name,
        directory, copy_dir, evacuate.BRIDGE)
    for relative in files:
        shutil.copy2(os.path.join(directory, relative),
                     os.path.join(copy_dir, relative))

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


def run(quick):
    rounds = 3 if quick else 10
    with evacuate.open_cloud(rounds) as cloud, common.MethodTimer(
            libvirt_driver.LibvirtDriver,
            ('_cleanup_failed_start',)) as meter:
        sim = cloud.start_compute('a', vif_plugging_timeout=VIF_TIMEOUT)
        sim.virtapi.deliver = False
        results = [one_round(cloud, sim, meter, n) for n in range(rounds)]
    return [common.ratio_line(
        'failed spawn (vif-plugged withheld), embedded: failure -> host '
        'clean vs by hand', [p for p, _b in results],
        [b for _p, b in results], LIMIT)]
