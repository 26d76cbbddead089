"""How long the compute manager's operations take on one host.

The real ComputeManager with the FakeDriver (real instance directories
under a temporary instances_path) and SQLite, so the figures are the
manager's own cost: state table, lock, action event, compare-and-swap
saves, fault recording. No hypervisor time is included.

Run::

    .venv/bin/python benchmarks/lifecycle.py [--instances N]

Prints one line per operation: calls, total seconds, milliseconds per call.
"""

import argparse
import collections
import logging
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from nova.compute import manager as compute_manager  # noqa: E402
from nova.conf import CONF  # noqa: E402
from nova.conf import host_settings  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.db import api as db_api  # noqa: E402
from nova.db import migration  # noqa: E402
from nova.model import network as network_model  # noqa: E402
from nova.model import vm_states  # noqa: E402
from nova import objects  # noqa: E402
from nova.tests.fixtures import driver_contract as contract  # noqa: E402
from nova.virt import fake  # noqa: E402

BRIDGE = 'br-bench'


def network_info(n):
    network = network_model.Network(id='net', label='bench', bridge=BRIDGE)
    return network_model.NetworkInfo([network_model.VIF(
        id='00000000-0000-4000-8000-%012d' % n,
        address='fa:16:3e:00:%02x:%02x' % (n // 256 % 256, n % 256),
        network=network, active=False)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--instances', type=int, default=50)
    args = parser.parse_args()

    # The failing operations log their faults; only the figures matter.
    logging.getLogger('nova').setLevel(logging.CRITICAL)
    tmp = tempfile.mkdtemp(prefix='nova-bench-')
    try:
        CONF([], project='nova', default_config_files=[])
        CONF.set_override('state_path', tmp)
        db_api.configure('sqlite:///' + os.path.join(tmp, 'nova.sqlite'))
        migration.db_sync()
        settings = host_settings.HostSettings(
            host='bench1', instances_path=os.path.join(tmp, 'instances'),
            bridges=(BRIDGE,), vif_plugging_timeout=30)
        # The network backend answers each plug at once.
        virtapi = contract.NetworkBackendVirtAPI()
        driver = fake.FakeDriver(virtapi, settings)
        manager = compute_manager.ComputeManager(settings, driver=driver)
        manager.init_host()
        ctx = nova_context.get_admin_context()
        timings = collections.defaultdict(float)

        def timed(name, call, *a, **kw):
            started = time.perf_counter()
            try:
                call(nova_context.get_admin_context(), *a, **kw)
            finally:
                timings[name] += time.perf_counter() - started

        instances = []
        for n in range(args.instances):
            instance = objects.Instance(
                ctx, user_id='u', project_id='p', display_name='b%d' % n,
                vm_state=vm_states.BUILDING, image_ref='img').create()
            timed('build', manager.build_and_run_instance, instance,
                  image_meta={}, network_info=network_info(n))
            instances.append(instance)
        for instance in instances:
            timed('stop', manager.stop_instance, instance)
        for instance in instances:
            timed('start', manager.start_instance, instance)
        for instance in instances:
            timed('reboot_hard', manager.reboot_instance, instance, 'HARD')
        for instance in instances:
            timed('suspend', manager.suspend_instance, instance)
        for instance in instances:
            timed('resume', manager.resume_instance, instance)
        driver.fail_at('power_off', times=None)
        for instance in instances:
            try:
                timed('stop_failing', manager.stop_instance, instance)
            except Exception:
                pass
        driver.clear_failures()
        started = time.perf_counter()
        manager2 = compute_manager.ComputeManager(settings, driver=driver)
        manager2.init_host()
        timings['init_host (all)'] = time.perf_counter() - started
        for instance in instances:
            timed('delete', manager.terminate_instance, instance)

        print('%-16s %6s %9s %9s' % ('operation', 'calls', 'total s',
                                     'ms/call'))
        for name, total in timings.items():
            calls = 1 if name.startswith('init_host') else args.instances
            print('%-16s %6d %9.3f %9.2f' % (name, calls, total,
                                             1000 * total / calls))
    finally:
        db_api.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
