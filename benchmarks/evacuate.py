"""How long booting onto a host and evacuating it, as a whole, take.

Three compute hosts in one process, as ``nova/tests/functional/
evacuate_harness.py`` runs them: the real ``nova.service.Service``,
``ComputeManager`` and ``LibvirtDriver`` per host on libvirt's test driver
(one node file and one ``instances_path`` each), the real conductor
service and compute API, the in-process ``inproc://`` RPC transport (as
``nova-all``) and a real SQLite database. The network backend answers
every plug at once (the fixtures' ``NetworkBackendVirtAPI``), so no
network latency is included.

Scenario: boot N+1 instances on host ``a`` through the compute API, one
after the other; ``a`` dies (its compute service stops) and the operator
forces its service down. One instance is evacuated to ``b`` while ``b``
lacks the port's bridge (it fails and ``b`` cleans up), then again once
the bridge is back. Then host-evacuate of ``a`` (``POST
/os-host-evacuations`` over the real REST API served on 127.0.0.1; the
conductor runs it) moves the other N.

Then ``nova host-evacuate HOST --wait`` (``nova.cli.host_evacuate``)
twice, each time from a new host holding N instances, with ``b``, ``c``
and ``d`` as targets: once with every target working, once with ``b``
lacking the bridge (its evacuations fail, are retried on ``c`` or ``d``
by the conductor, and ``b`` is skipped once it failed twice in a row).
Its wall time is from the request to the moment the client has seen the
run end (so it includes up to one poll interval of the conductor and one
of the client).

Run::

    .venv/bin/python benchmarks/evacuate.py [--instances N] [--workers W]
        [--poll-interval S]

Prints figures only. Evacuation times are read from the migration rows
(the time of the write that marked them done or failed) against the wall
clock when the request was made; boot times are polled (every 5 ms).
"""

import argparse
import collections
import contextlib
import logging
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings

# oslo.messaging imports oslo.service, whose eventlet backend warns at
# import time; nothing here uses eventlet.
warnings.filterwarnings('ignore', module='oslo_service')

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from nova.api import wsgi as api_wsgi  # noqa: E402
from nova.cli import client as client_mod  # noqa: E402
from nova.cli import host_evacuate  # noqa: E402
from nova.compute import api as compute_api  # noqa: E402
from nova.compute import manager as compute_manager  # noqa: E402
from nova.compute import rpcapi as compute_rpcapi  # noqa: E402
from nova.conductor import manager as conductor_manager  # noqa: E402
from nova.conductor import rpcapi as conductor_rpcapi  # noqa: E402
from nova.conf import CONF  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova.db import api as db_api  # noqa: E402
from nova.db import migration as db_migration  # noqa: E402
from nova.network import api as network_api  # noqa: E402
from nova import objects  # noqa: E402
from nova.objects import base as obj_base  # noqa: E402
from nova.objects import flavor_catalog  # noqa: E402
from nova.objects import migration as migration_obj  # noqa: E402
from nova import rpc  # noqa: E402
from nova.scheduler import target as target_mod  # noqa: E402
from nova import service as nova_service  # noqa: E402
from nova.tests.fixtures import libvirt_host as fixtures  # noqa: E402

BRIDGE = fixtures.DEFAULT_BRIDGE
CIDR = '10.0.0.0/16'
FLAVOR_MEMORY_MB = 64
POLL_SECONDS = 0.005
WAIT_SECONDS = 120
ENDED = (migration_obj.DONE, migration_obj.FAILED, migration_obj.COMPLETED)


def percentile(values, pct):
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100.0 * len(ordered)) - 1)]


def wait_for(predicate, what):
    deadline = time.monotonic() + WAIT_SECONDS
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError('gave up waiting for %s' % what)
        time.sleep(POLL_SECONDS)


class Cloud:
    """The services of one run, and what they need to be stopped."""

    def __init__(self, tmp, instances):
        self.tmp = tmp
        self.ctx = nova_context.get_admin_context()
        self.services = []
        self.hosts = {}
        # Each host has room for every instance of the run, so capacity
        # never decides where an evacuation goes (only free memory does).
        # (b, c and d receive the instances of three host evacuations.)
        self.cpus = max(4, instances)
        self.memory_mb = max(8192,
                             4 * FLAVOR_MEMORY_MB * (instances + 1))
        self.images = fixtures.make_image_store(tmp)
        self.image = fixtures.add_disk_image(self.images, tmp, size_mb=1)
        self.flavor = flavor_catalog.create(
            self.ctx, '1', 'bench', FLAVOR_MEMORY_MB, 1, 1)
        network_api.API().create_network(self.ctx, 'public', BRIDGE, CIDR)
        self.chooser = target_mod.TargetChooser()
        self.api = compute_api.API(
            compute_rpcapi.ComputeAPI(), conductor_rpcapi.ConductorAPI(),
            image_api=self.images, host_chooser=self.chooser)

    def _start_service(self, host, binary, topic, manager):
        # Heartbeats every 10 s keep b and c up however long a run takes.
        service = nova_service.Service(host, binary, topic, manager,
                                       periodic_enable=False,
                                       report_interval=10)
        service.start()
        self.services.append(service)
        return service

    def start_conductor(self):
        manager = conductor_manager.ConductorManager(
            compute_rpcapi.ComputeAPI(), chooser=self.chooser)
        self._start_service('conductor', 'nova-conductor', 'conductor',
                            manager)

    def start_compute(self, name, vif_plugging_timeout=5):
        sim = fixtures.make_host(
            self.tmp, name, image_store_path=self.images.path,
            connect=False, bridges=(BRIDGE,),
            vif_plugging_timeout=vif_plugging_timeout)
        fixtures.write_node_xml(sim.node_path, cpus=self.cpus,
                                memory_mb=self.memory_mb)
        manager = compute_manager.ComputeManager(sim.settings,
                                                 driver=sim.driver)
        service = self._start_service(name, 'nova-compute', 'compute',
                                      manager)
        self.hosts[name] = (sim, service)
        return sim

    def kill(self, name):
        """The host's compute service dies; the operator forces it down."""
        _sim, service = self.hosts[name]
        service.stop()
        row = objects.Service.get_by_host_and_binary(self.ctx, name,
                                                     'nova-compute')
        row.forced_down = True
        row.save()

    def stop(self):
        for service in reversed(self.services):
            service.stop()
        if self.server is not None:
            self.server.stop()

    server = None

    def rest_client(self):
        """A REST client of the API, served on 127.0.0.1 from now on."""
        if self.server is None:
            self.server = api_wsgi.serve(
                api_wsgi.make_app(self.api, image_store=self.images),
                '127.0.0.1', 0)
        client = client_mod.Client(self.server.url, 'admin:admin',
                                   timeout=WAIT_SECONDS)
        client.negotiate('latest')
        return client

    def set_enabled(self, name, enabled):
        row = objects.Service.get_by_host_and_binary(self.ctx, name,
                                                     'nova-compute')
        row.disabled = not enabled
        row.save()

    # -- reading -------------------------------------------------------------

    def instance(self, uuid):
        return objects.Instance.get_by_uuid(self.ctx, uuid)

    def migration(self, uuid):
        return objects.Migration.get_by_uuid(self.ctx, uuid)

    def ended(self, migration_uuid):
        """The migration ended and its instance has no task any more."""
        migration = self.migration(migration_uuid)
        return (migration.status in ENDED
                and self.instance(migration.instance_uuid).task_state
                is None)

    def leftovers(self, name, instance):
        """(domain, VIFs, instance directory) of ``instance`` on host."""
        sim, _service = self.hosts[name]
        ports = {vif.id for vif in instance.network_info}
        return (instance.uuid in sim.domain_uuids(),
                len(ports & sim.plugged_vifs()),
                os.path.exists(sim.instance_dir(instance.uuid)))

    # -- operations --------------------------------------------------------

    def boot(self, n):
        """Boot through the compute API; seconds to active, no task."""
        started = time.perf_counter()
        instance = self.api.create(nova_context.get_admin_context(),
                                   'bench-%d' % n, self.image.id, '1')
        wait_for(lambda: self.instance(instance.uuid).task_state is None,
                 'build of %s' % instance.uuid)
        elapsed = time.perf_counter() - started
        instance = self.instance(instance.uuid)
        if instance.vm_state != 'active':
            raise RuntimeError('%s ended %s' % (instance.uuid,
                                                instance.vm_state))
        return instance, elapsed

    def evacuate(self, instance, host):
        """Evacuate one instance to ``host``; (migration, seconds from
        the request to the write that ended the migration)."""
        requested = obj_base.utcnow()
        migration = self.api.evacuate(nova_context.get_admin_context(),
                                      self.instance(instance.uuid),
                                      host=host)
        wait_for(lambda: self.ended(migration.uuid),
                 'evacuation %s' % migration.uuid)
        migration = self.migration(migration.uuid)
        return migration, (migration.updated_at - requested).total_seconds()


def summary(values):
    return 'median %6.3f s  p95 %6.3f s  max %6.3f s' % (
        statistics.median(values), percentile(values, 95), max(values))


def run(cloud, instances, poll_interval):
    figures = []

    def say(line):
        figures.append(line)

    a = cloud.start_compute('a')
    booted = [cloud.boot(n) for n in range(instances + 1)]
    boot_times = [elapsed for _instance, elapsed in booted]
    probe = booted[0][0]
    # b and c come up once everything sits on a.
    cloud.start_compute('b')
    cloud.start_compute('c')
    cloud.start_conductor()
    say('boot (API create -> active), %d instances, one at a time:'
        % len(boot_times))
    say('  median %6.3f s  p95 %6.3f s' % (
        statistics.median(boot_times), percentile(boot_times, 95)))

    cloud.kill('a')
    del a

    # The evacuation-leftovers bug: the target lacks the port's bridge.
    b = cloud.hosts['b'][0]
    b.remove_bridge(BRIDGE)
    failed, failed_s = cloud.evacuate(probe, 'b')
    domain, vifs, directory = cloud.leftovers('b',
                                              cloud.instance(probe.uuid))
    b.add_bridge(BRIDGE)
    retried, retry_s = cloud.evacuate(probe, 'b')
    say('failing evacuation (b lacks bridge %s), request -> migration %s:'
        % (BRIDGE, failed.status))
    say('  %6.3f s; left on b: domain %s, VIFs %d, instance dir %s'
        % (failed_s, 'yes' if domain else 'no', vifs,
           'yes' if directory else 'no'))
    say('retry to b with the bridge back, request -> migration %s:'
        % retried.status)
    say('  %6.3f s; instance now on %s'
        % (retry_s, cloud.instance(probe.uuid).host))

    client = cloud.rest_client()
    requested = obj_base.utcnow()
    started = time.perf_counter()
    report = host_evacuate.evacuate_host(client, 'a', wait=False,
                                         poll_interval=poll_interval)
    call_s = time.perf_counter() - started
    accepted = [a.migration_uuid for i in report.instances
                for a in i.attempts[:1] if a.migration_uuid]
    report = host_evacuate.follow(client, report.id, lambda r: r.ended,
                                  poll_interval)
    total_s = time.perf_counter() - started

    migrations = [cloud.migration(uuid) for uuid in accepted]
    done = [m for m in migrations if m.status == migration_obj.DONE]
    from_request = [(m.updated_at - requested).total_seconds()
                    for m in done]
    from_accepted = [(m.updated_at - m.created_at).total_seconds()
                     for m in done]
    landed = collections.Counter(cloud.instance(m.instance_uuid).host
                                 for m in done)
    say('host-evacuate of a, %d instances, %d workers:'
        % (len(report.instances), CONF.conductor.host_evacuate_workers))
    say('  accepted %d, done %d, failed %d, refused %d'
        % (len(accepted), len(done),
           sum(1 for m in migrations if m.status == migration_obj.FAILED),
           report.count(host_evacuate.REFUSED)))
    if done:
        say('  per instance, request -> done:     %s'
            % summary(from_request))
        say('  per instance, accepted -> done:    %s'
            % summary(from_accepted))
    say('  POST -> every first attempt made:  %6.3f s' % call_s)
    say('  wall time, request -> run ended:   %6.3f s' % total_s)
    say('  landed: %s' % ', '.join('%s %d' % (host, landed[host])
                                   for host in ('b', 'c')))

    cloud.start_compute('d')
    for source, broken in (('e', None), ('f', 'b')):
        say(wait_run(cloud, client, source, instances, broken,
                     poll_interval))
    return figures


def wait_run(cloud, client, source, instances, broken, poll_interval):
    """Boot ``instances`` on a new host ``source``, which dies; then
    ``host_evacuate.evacuate_host`` with ``broken`` lacking the bridge.
    The figures, as lines."""
    targets = ('b', 'c', 'd')
    cloud.start_compute(source)
    for name in targets:
        cloud.set_enabled(name, False)
    try:
        for n in range(instances):
            cloud.boot(n)
    finally:
        for name in targets:
            cloud.set_enabled(name, True)
    cloud.kill(source)
    if broken:
        cloud.hosts[broken][0].remove_bridge(BRIDGE)
    try:
        started = time.perf_counter()
        report = host_evacuate.evacuate_host(client, source,
                                             poll_interval=poll_interval)
        wall_s = time.perf_counter() - started
    finally:
        if broken:
            cloud.hosts[broken][0].add_bridge(BRIDGE)
    landed = collections.Counter(i.host for i in report.instances
                                 if i.outcome == host_evacuate.DONE)
    retried = sum(1 for i in report.instances if i.retried)
    lines = ['host-evacuate %s --wait (REST, run by the conductor), %d '
             'instances, %d workers, --poll-interval %g s, %s:'
             % (source, len(report.instances),
                CONF.conductor.host_evacuate_workers, poll_interval,
                'with %s lacking the bridge' % broken
                if broken else 'every target working')]
    lines.append('  done %d, failed %d, refused %d; retried %d; skipped '
                 'targets: %s'
                 % (report.count(host_evacuate.DONE),
                    report.count(host_evacuate.FAILED),
                    report.count(host_evacuate.REFUSED), retried,
                    ', '.join(sorted(report.skipped_targets)) or 'none'))
    lines.append('  wall time, request -> run seen ended: %6.3f s' % wall_s)
    lines.append('  landed: %s' % ', '.join(
        '%s %d' % (host, landed[host]) for host in targets))
    return '\n'.join(lines)


@contextlib.contextmanager
def open_cloud(instances, workers=None):
    """A ``Cloud`` on a new SQLite database and ``inproc://`` transport in
    a temporary directory; everything stopped and removed at the end."""
    tmp = tempfile.mkdtemp(prefix='nova-bench-evacuate-')
    cloud = None
    try:
        # oslo.messaging needs the global CONF (doc/source/cluster.rst,
        # nova/rpc.py).
        CONF([], project='nova', default_config_files=[])
        CONF.set_override('state_path', tmp)
        CONF.set_override('host', 'conductor')
        if workers is not None:
            CONF.set_override('host_evacuate_workers', workers,
                              group='conductor')
        CONF.set_override('host_evacuate_poll_interval', 0.01,
                          group='conductor')
        # One project boots every instance of the run; Nova's default
        # quotas stop at 10 instances.
        for name in ('instances', 'cores', 'ram'):
            CONF.set_override(name, -1, group='quota')
        db_api.configure('sqlite:///' + os.path.join(tmp, 'nova.sqlite'))
        db_migration.db_sync()
        rpc.init(url='inproc://')
        cloud = Cloud(tmp, instances)
        yield cloud
    finally:
        if cloud is not None:
            cloud.stop()
        rpc.cleanup()
        db_api.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--instances', type=int, default=20,
                        help='instances host-evacuate moves (default 20)')
    parser.add_argument('--workers', type=int, default=None,
                        help='[conductor] host_evacuate_workers (default: '
                             'the option\'s default)')
    parser.add_argument('--poll-interval', type=float, default=0.02,
                        help='host-evacuate --wait --poll-interval '
                             '(default %(default)s s)')
    args = parser.parse_args()

    # The failing evacuation logs its fault; only the figures matter.
    for name in ('nova', 'oslo_messaging'):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    started = time.perf_counter()
    with open_cloud(args.instances, args.workers) as cloud:
        figures = run(cloud, args.instances, args.poll_interval)
    for line in figures:
        print(line)
    print('benchmark wall time: %.1f s' % (time.perf_counter() - started))


if __name__ == '__main__':
    main()
