"""One compute operation in a process of its own, to be killed with SIGKILL
at a crash point (``nova/crashpoint.py``).

``python -m nova.tests.functional.crash_child SPEC.json`` builds the
simulated host the spec describes (the same node file and instances_path
as the test's in-process host, with the domains and plugged VIFs that host
held), starts its compute manager (``init_host``, as a service starting
would), then runs the operation:

* ``build``: ``build_and_run_instance`` of the spec's instance;
* ``evacuate``: ``rebuild_instance(recreate=True)`` with the spec's
  migration (this host is the target);
* ``rebuild``: a same-host ``rebuild_instance`` of the spec's instance,
  from its own image; the request is made as the API makes it (task state
  ``rebuilding``, a ``rebuild`` action) only after ``init_host``, which
  would otherwise end it at once as a rebuild a restart cut short;
* ``init_host``: nothing more: the crash point is inside ``init_host``
  (a returning source's cleanup);
* ``reap``: one run of the orphan reaper, as its periodic task runs.

The process sets ``[fault_injection] crash_point`` and is expected to die
at it; exiting normally means the point was never reached (exit status 3).
With no crash point the test kills the process itself, from outside, at a
moment it chooses (in the middle of writing a disk, which no crash point
can stop inside: ``qemu-img`` writes it).

With ``stall_point`` instead (``[fault_injection] stall_point``) the
process stops itself (SIGSTOP) at the point, as a host cut off from the
control plane or hung on its storage would, and goes on when the test
sends SIGCONT: a target the operator gave up on that comes back. Just
before it stops it writes what its hypervisor holds to the spec's
``held`` file (nothing changes while it is stopped). Once continued, it
finishes the operation (an exception, such as the ``AttemptSuperseded``
of an attempt that lost its token, is logged: it is what the test
expects), writes the hypervisor's domains and VIFs to ``dump`` with the
crash points it passed after the stall and the error it ended with, runs
the orphan reaper once (the periodic task of the service that goes on
running) and writes them again to ``reaped``; then it exits with status
0 (3 if it never reached the stall point).

Why a hook dumps state before the kill: libvirt's test driver keeps its
domains in this process, while a real libvirtd (and the taps it made)
outlives nova-compute. Just before the SIGKILL the hook writes this host's
domains and plugged VIFs to the spec's ``dump`` file, and the test starts
the restarted host with them: what a real hypervisor would still hold. A
process killed from outside runs no hook: it writes the dump once
``init_host`` is done, before the operation starts, which is what the
hypervisor still holds as long as the kill comes before the operation
plugs a VIF or defines a domain (the only moments tests kill it at).
"""

import json
import logging
import os
import sys

from nova.compute import manager as compute_manager
from nova.compute import rebuild_request
from nova.conf import CONF
from nova import context as nova_context
from nova import crashpoint
from nova.db import api as db_api
from nova.image import store as image_store
from nova.model import network as network_model
from nova.model import task_states
from nova import objects
from nova.tests.fixtures import libvirt_host as fixtures

EXIT_NOT_REACHED = 3
EXIT_RESUMED = 0


def held_by(sim):
    """What the simulated hypervisor holds: domains and plugged VIFs."""
    return {
        'domains': [[guest.get_xml(), guest.get_power_state()]
                    for guest in sim.driver.host.list_guests()],
        'vifs': sorted([uuid, port] for uuid, ports in
                       sim.driver.plugged_vifs_by_instance().items()
                       for port in ports),
    }


def _dump(sim, path, **extra):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(dict(held_by(sim), **extra), f)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def build_host(spec):
    """The simulated host of ``spec``, not connected yet."""
    from nova.tests.functional import evacuate_harness
    sim = fixtures.make_host(
        spec['base_dir'], spec['host'],
        instances_path=spec['instances_path'],
        image_store_path=spec['image_store_path'], connect=False,
        bridges=tuple(spec['bridges']),
        vif_plugging_timeout=spec['vif_plugging_timeout'],
        **spec.get('settings', {}))
    if spec['domains']:
        evacuate_harness.node_with_domains(
            sim.node_path, [tuple(d) for d in spec['domains']], True)
    sim.driver.vif_driver.restore(spec['vifs'])
    return sim


class StallWatch:
    """Writes the hypervisor's state just before the process stops itself
    at ``point``, and records the points it passes once continued."""

    def __init__(self, sim, point, path):
        self.sim = sim
        self.point = point
        self.path = path
        self.stalled = False
        self.after = []

    def __call__(self, name):
        if self.stalled:
            self.after.append(name)
        elif name == self.point:
            # crashpoint.reached stops the process right after this.
            _dump(sim=self.sim, path=self.path)
            self.stalled = True


def run_operation(manager, context, spec):
    operation = spec['operation']
    if operation == 'build':
        instance = objects.Instance.get_by_uuid(context, spec['instance'])
        image = image_store.ImageStore(spec['image_store_path']).get(
            spec['image'])
        manager.build_and_run_instance(
            context, instance, image_meta=image,
            network_info=network_model.NetworkInfo.coerce(
                spec['network_info']))
    elif operation == 'evacuate':
        instance = objects.Instance.get_by_uuid(context, spec['instance'])
        migration = objects.Migration.get_by_uuid(context,
                                                  spec['migration'])
        manager.rebuild_instance(
            context, instance, request=rebuild_request.RebuildRequest(
                recreate=True, image_ref=instance.image_ref,
                migration=migration))
    elif operation == 'rebuild':
        instance = objects.Instance.get_by_uuid(context, spec['instance'])
        instance.task_state = task_states.REBUILDING
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(context, instance.uuid,
                                            'rebuild')
        manager.rebuild_instance(
            context, instance, request=rebuild_request.RebuildRequest(
                recreate=False, image_ref=instance.image_ref))
    elif operation == 'reap':
        manager._reap_orphans(context)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0]) as f:
        spec = json.load(f)
    logging.basicConfig(filename=spec['log'], level=logging.INFO,
                        format='%(asctime)s %(name)s %(levelname)s '
                               '%(message)s')
    log = logging.getLogger(__name__)
    CONF([], project='nova', default_config_files=[])
    CONF.set_override('crash_point', spec['crash_point'],
                      group='fault_injection')
    stall_point = spec.get('stall_point')
    CONF.set_override('stall_point', stall_point, group='fault_injection')
    db_api.configure(spec['database'])
    sim = build_host(spec)
    crashpoint.before_kill(lambda: _dump(sim, spec['dump']))
    watch = None
    if stall_point:
        watch = StallWatch(sim, stall_point, spec['held'])
        crashpoint.observe(watch)
    manager = compute_manager.ComputeManager(sim.settings, driver=sim.driver)
    context = nova_context.get_admin_context()
    manager.init_host()
    if spec['crash_point'] is None and not stall_point:
        _dump(sim, spec['dump'])
    if watch is None:
        run_operation(manager, context, spec)
        log.error('crash point %s was not reached', spec['crash_point'] or
                  '(none: the test was to kill this process)')
        return EXIT_NOT_REACHED
    error = None
    try:
        run_operation(manager, context, spec)
    except Exception as e:
        log.exception('The operation ended with an error')
        error = '%s: %s' % (type(e).__name__, e)
    if not watch.stalled:
        log.error('stall point %s was not reached', stall_point)
        return EXIT_NOT_REACHED
    after = list(watch.after)
    _dump(sim, spec['dump'], after=after, error=error)
    # The service of a host that comes back without a restart goes on,
    # and its periodic reaper runs.
    manager._reap_orphans(context)
    _dump(sim, spec['reaped'], after=after, error=error)
    return EXIT_RESUMED


if __name__ == '__main__':
    sys.exit(main())
