"""A real multi-host cluster on one machine.

``Cluster(spec).up()`` brings up, on loopback, a PostgreSQL database, a
RabbitMQ broker, nova-api and nova-conductor (the "controller"), and
``spec.hosts`` compute hosts, each a ``cluster_host.ClusterHost``: its own
network and mount namespaces, libvirtd + virtlogd + virtlockd (disk
leases), storage (private, or
one directory shared by a group of hosts, standing in for NFS) and its
own nova-compute running inside the host. ``down()`` stops everything by
PID and removes every file, namespace and device it made. ``fail(host)``
and ``revive(host)`` kill a host as a power loss would and boot it again.
``restart_compute(host, crash_point=...)`` runs a host's nova-compute
once with ``[fault_injection] crash_point`` set; the owner notices when a
nova-compute exits, reaps it and records how (``wait_for_compute_exit``).
``mount_shared(host, group)`` mounts another storage over a host's
``instances_path`` while it runs, as a late NFS mount. ``partition(host)``
and ``heal(host)`` cut a host's nova-compute off the control plane (its
guests run on) and let it come back without a restart; a nova-compute
run with ``restart_compute(host, stall_point=...)`` stops itself at that
point (``[fault_injection] stall_point``): ``wait_for_compute_stall(host)``
records it partitioned, and ``heal(host)`` lets it go on;
``restart_libvirtd(host)`` restarts its libvirtd alone.

The process that calls ``up()`` owns the cluster (the hosts' namespace
holders stop their hosts by themselves if it dies). ``tools/cluster``
runs a small supervisor process as that owner; tests own their cluster
directly. Everything is described in ``cluster.json`` (see
``cluster_record``); ``reclaim(base_dir)`` stops and removes a cluster
whose owner died, from that record alone, so ``up`` after a crash works.

Example::

    cluster = Cluster(ClusterSpec(base_dir='/tmp/c', hosts=2))
    cluster.up()
    try:
        cluster.record.host('compute1').libvirt_uri
        cluster.fail('compute1'); cluster.revive('compute1')
    finally:
        cluster.down()
"""

import json
import os
import shutil
import subprocess
import sys
import threading
import time

from oslo_log import log as logging

from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import forward as cluster_forward
from nova.testing.cluster import guest as cluster_guest
from nova.testing.cluster import host as cluster_host
from nova.testing.cluster import record as cluster_record
from nova.testing.cluster import services as cluster_services
from nova.testing.cluster import teardown as cluster_reclaim
from nova.testing import glance as glance_mod
from nova.testing import hypervisor
from nova.testing import keystone as keystone_mod
from nova.testing import masakari as masakari_mod
from nova.testing import postgresql
from nova.testing import procs
from nova.testing import rabbitmq

LOG = logging.getLogger(__name__)

ClusterSpec = cluster_config.ClusterSpec
ClusterError = cluster_services.ClusterError
ClusterBusy = cluster_reclaim.ClusterBusy
MARKER = cluster_reclaim.MARKER
claim_directory = cluster_reclaim.claim_directory
reclaim = cluster_reclaim.reclaim
remove_files = cluster_reclaim.remove_files

SERVICE_TIMEOUT = 120
API_TIMEOUT = 60


def control_plane_unavailable_reason():
    """Why PostgreSQL or RabbitMQ cannot run here, or None."""
    return postgresql.missing_reason() or rabbitmq.available()


def unavailable_reason():
    """Why a cluster cannot run here, or None."""
    reason = (hypervisor.unavailable_reason()
              or control_plane_unavailable_reason())
    if reason:
        return reason
    for name in ('ip', 'mountpoint'):
        if shutil.which(name) is None:
            return '%s is not installed' % name
    return None


free_port = rabbitmq.free_port


def _in_thread(function):
    """Start ``function`` in a thread; the returned join() re-raises."""
    outcome = {}

    def target():
        try:
            outcome['value'] = function()
        except BaseException as e:      # re-raised by join()
            outcome['error'] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def join():
        thread.join()
        if 'error' in outcome:
            raise outcome['error']
        return outcome.get('value')
    return join


class Cluster:

    def __init__(self, spec):
        self.spec = spec
        self.layout = cluster_config.Layout(spec.base_dir)
        self.ports = None
        self.record = None
        self.forwarder = cluster_forward.LoopbackForwarder()
        self.hosts = {}
        self.postgres = None
        self.rabbit = None
        self.keystone = None
        self.masakari = None
        self.glance = None
        self._glance_image_id: str | None = None
        self.api = None
        self.conductor = None
        self.hamonitor = None
        self._lock = threading.RLock()
        self._stop_watching = threading.Event()
        self._watcher = None

    # -- bringing it up --------------------------------------------------

    def up(self, reclaim_first=True):
        """Start everything; on failure stop what started, then raise.

        A cluster left in the same directory by a dead owner is reclaimed
        first (``reclaim_first=False``: the caller already did).
        """
        reason = unavailable_reason()
        if reason:
            raise ClusterError('cannot run a cluster here: %s' % reason)
        began = time.monotonic()
        if reclaim_first:
            reclaim(self.spec.base_dir)
        with self._lock:
            try:
                self._up()
            except BaseException:
                LOG.exception('Cluster in %s failed to start; stopping it '
                              '(its logs stay in %s until the next up or '
                              'down)', self.spec.base_dir, self.layout.logs)
                self.down(keep_logs=True)
                raise
            self.record.timings['up'] = round(time.monotonic() - began, 2)
            self.record.state = 'up'
            self.save()
        LOG.info('Cluster in %s up in %.1f s', self.spec.base_dir,
                 self.record.timings['up'])
        return self

    def _up(self):
        layout, spec = self.layout, self.spec
        claim_directory(spec.base_dir)
        for directory in (layout.etc, layout.logs,
                          layout.images, layout.guest, layout.hosts,
                          layout.instances_path, layout.controller_state):
            os.makedirs(directory, exist_ok=True)
        # PostgreSQL runs as its own user: it must traverse base_dir.
        os.chmod(spec.base_dir, 0o755)
        epmd, dist = free_port(), free_port()
        self.ports = cluster_config.Ports(
            postgres=free_port(), rabbitmq=free_port(), rabbitmq_epmd=epmd,
            rabbitmq_dist=dist, api=free_port(),
            keystone=free_port() if spec.keystone else 0,
            masakari=free_port() if spec.masakari else 0,
            glance=free_port() if spec.glance else 0)
        ports = self.ports
        self.record = cluster_record.ClusterRecord(
            base_dir=spec.base_dir, owner=procs.ProcessRecord.of(os.getpid()),
            api_url=cluster_config.api_url(ports),
            api_token=cluster_config.ADMIN_TOKEN,
            database_url=cluster_config.database_url(ports),
            host_database_url=cluster_config.host_database_url(layout,
                                                               ports),
            transport_url=cluster_config.transport_url(ports),
            ports=dict(vars(ports)), network=spec.network,
            bridge=spec.bridge, flavor_id=spec.flavor_id)
        self.save()
        self._write_configs()

        self.rabbit = rabbitmq.RabbitMQServer(
            layout.rabbitmq, ports.rabbitmq, epmd_port=ports.rabbitmq_epmd,
            dist_port=ports.rabbitmq_dist)
        self.record.rabbitmq_node = self.rabbit.nodename
        self.postgres = postgresql.PostgreSQLServer(layout.postgres,
                                                    port=ports.postgres)
        rabbit_started = _in_thread(self._start_rabbit)
        db_ready = _in_thread(self._start_database)
        keystone_ready = (_in_thread(self._start_keystone) if spec.keystone
                          else (lambda: None))
        try:
            timings = self.record.timings
            t = time.monotonic()
            for name in spec.host_names():
                self._start_host_hypervisor(name)
            timings['hypervisors'] = round(time.monotonic() - t, 2)
        finally:
            db_ready()
            rabbit_started()
            keystone_ready()
        if self._glance_image_id is not None:
            # The hosts boot Glance's copy of the guest image.
            self.record.image_id = self._glance_image_id
        self.save()
        self._start_services()
        if spec.masakari:
            self._start_masakari()
            self.save()

    def _start_masakari(self):
        """Masakari on the cluster's PostgreSQL (a database of its own),
        RabbitMQ and Keystone, and a failover segment ``cluster``
        (recovery method ``auto``) holding every compute host: Masakari
        accepts each after asking the Compute API that it runs a
        nova-compute."""
        t = time.monotonic()
        self.postgres.create_database('masakari')
        self.masakari = masakari_mod.MasakariServer(
            self.layout.masakari, self.keystone,
            self.postgres.url_of('masakari'),
            cluster_config.transport_url(self.ports),
            port=self.ports.masakari)
        try:
            self.masakari.start()
        finally:
            self.record.processes.update(self.masakari.records)
        segment = self.masakari.create_segment('cluster', 'auto')
        for name in self.spec.host_names():
            self.masakari.add_host(segment['uuid'], name)
        self.record.masakari_url = self.masakari.url
        self.record.masakari_segment = segment['uuid']
        self.record.timings['masakari'] = round(time.monotonic() - t, 2)

    def _start_keystone(self):
        """The cluster's Keystone: nova-api's service user, a member of
        another project, the compute endpoint in the catalog, the
        clients' clouds.yaml, and a token for the harness's own API
        client."""
        t = time.monotonic()
        ports, layout = self.ports, self.layout
        self.keystone = keystone_mod.KeystoneServer(
            layout.keystone, port=ports.keystone).start()
        self.record.processes['keystone'] = procs.ProcessRecord.of(
            self.keystone.pid)
        for user, password, project in (cluster_config.SERVICE_USER,
                                        cluster_config.DEMO_USER):
            self.keystone.add_user(user, password, project=project,
                                   role='admin' if project == 'service'
                                   else 'member')
        self.keystone.add_endpoint('compute', 'nova',
                                   cluster_config.api_url(ports))
        if self.spec.glance:
            self._start_glance()
        else:
            # The image store as the Image service shows it (nova-api's
            # /image), for the clients' image lookups.
            self.keystone.add_endpoint('image', 'images',
                                       cluster_config.image_url(ports))
        _write(layout.clouds_yaml, cluster_config.clouds_yaml(
            ports, keystone_mod.ADMIN_PASSWORD))
        self.record.keystone_url = cluster_config.keystone_url(ports)
        self.record.clouds_yaml = layout.clouds_yaml
        self.record.api_token = self.keystone.token()
        self.record.timings['keystone'] = round(time.monotonic() - t, 2)

    def _start_glance(self):
        """The cluster's Glance, the image service in the catalog, with
        the guest image uploaded (public, as the admin)."""
        t = time.monotonic()
        assert self.keystone is not None
        self.glance = glance_mod.GlanceServer(
            self.layout.glance, self.keystone, port=self.ports.glance).start()
        self.record.processes['glance'] = procs.ProcessRecord.of(
            self.glance.pid)
        image = cluster_guest.write_image(
            os.path.join(self.layout.glance, 'bootsector.qcow2'))
        self._glance_image_id = self.glance.upload(
            self.keystone.token(), self.spec.image_name, image,
            'qcow2')['id']
        self.record.timings['glance'] = round(time.monotonic() - t, 2)

    def _write_configs(self):
        layout, spec, ports = self.layout, self.spec, self.ports
        _write(layout.conf('controller'),
               cluster_config.controller_conf(spec, layout, ports))
        for name in spec.host_names():
            uri = hypervisor.LibvirtHost(name, layout.hosts).uri
            _write(layout.conf(name), cluster_config.host_conf(
                spec, layout, ports, name, uri))

    def _start_rabbit(self):
        t = time.monotonic()
        self.rabbit.start()
        self.record.processes['rabbitmq'] = self.rabbit.beam
        if self.rabbit.epmd is not None:
            self.record.processes['epmd'] = self.rabbit.epmd
        self.record.timings['rabbitmq'] = round(time.monotonic() - t, 2)

    def _start_database(self):
        t = time.monotonic()
        self.postgres.start()
        self.record.processes['postgres'] = procs.ProcessRecord.of(
            self.postgres.pid)
        image = cluster_guest.write_image(
            os.path.join(self.layout.guest, 'bootsector.qcow2'))
        spec = self.spec
        argv = [sys.executable, '-m', 'nova.testing.cluster.catalog',
                '--config-file', self.layout.conf('controller'),
                '--flavor', '%s:%s:%d' % (spec.flavor_id, spec.flavor_name,
                                          spec.flavor_memory_mb),
                '--network', '%s:%s:%s' % (spec.network, spec.bridge,
                                           spec.network_cidr),
                '--image', '%s:%s' % (spec.image_name, image)]
        result = subprocess.run(argv, capture_output=True, text=True,
                                timeout=120)
        with open(self.layout.log('catalog'), 'w') as f:
            f.write(result.stdout + result.stderr)
        if result.returncode != 0:
            raise ClusterError('preparing the database failed:\n%s'
                               % result.stderr[-3000:])
        made = json.loads(result.stdout.strip().splitlines()[-1])
        self.record.image_id = made['image_id']
        self.record.network_id = made['network_id']
        self.record.timings['database'] = round(time.monotonic() - t, 2)

    def _start_host_hypervisor(self, name):
        # The agents' events need Keystone too when there is one.
        forward = (self.ports.rabbitmq, self.ports.api) + tuple(
            port for port in (self.ports.keystone, self.ports.glance)
            if port)
        host = cluster_host.ClusterHost(self.spec, self.layout, name,
                                        self.forwarder, forward)
        self.hosts[name] = host
        self.record.hosts.append(host.entry)
        self.save()
        host.start_hypervisor()
        self.save()

    def _controller_service(self, binary):
        argv = [cluster_services.venv_bin(binary), '--config-file',
                self.layout.conf('controller'), '--log-file',
                self.layout.log(binary)]
        proc = cluster_services.ServiceProcess.start(
            binary, argv, self.layout.log(binary + '.stdout'))
        self.record.processes[binary] = proc.record
        return proc

    def _start_services(self):
        t = time.monotonic()
        self.api = self._controller_service('nova-api')
        self.conductor = self._controller_service('nova-conductor')
        if self.spec.hamonitor:
            self.hamonitor = self._controller_service('nova-hamonitor')
        for host in self.hosts.values():
            host.start_compute()
        self.save()
        client = self.api_client()
        try:
            cluster_services.wait_until(client.answers, API_TIMEOUT,
                                        'nova-api answers',
                                        alive=self.api.alive)
        except ClusterError:
            raise self.api.failure('did not answer')
        self._wait_up(self.conductor, cluster_config.CONTROLLER_HOST,
                      'nova-conductor')
        for name, host in self.hosts.items():
            self._wait_up(host.compute, name, 'nova-compute')
        self.record.timings['services'] = round(time.monotonic() - t, 2)
        self._start_watching()

    def _wait_up(self, proc, host, binary, newer_than=None):
        try:
            self.api_client().wait_for_service(
                host, binary, SERVICE_TIMEOUT, newer_than=newer_than,
                alive=proc.alive)
        except ClusterError as e:
            raise proc.failure(str(e))

    # -- using it ----------------------------------------------------------

    def api_client(self):
        return cluster_services.ApiClient(self.record.api_url,
                                          self.record.api_token)

    def host(self, name) -> cluster_host.ClusterHost:
        try:
            return self.hosts[name]
        except KeyError:
            raise ClusterError('no host %s (hosts: %s)'
                               % (name, ', '.join(self.hosts)))

    def save(self):
        if self.record is not None and os.path.isdir(self.spec.base_dir):
            self.record.save(self.layout.record)

    def fail(self, name):
        """Host ``name`` dies (see ``ClusterHost.fail``)."""
        with self._lock:
            host = self.host(name)
            host.fail()
            self.save()

    def fence(self, name) -> bool:
        """Power host ``name`` off as ``fail`` does, as a fence agent
        would; False when it was off already (still a success: a fence
        agent asked twice must not fail the second time)."""
        with self._lock:
            host = self.host(name)
            if host.entry.state == 'failed':
                return False
            host.fail()
            self.save()
            return True

    def revive(self, name, wait=True, crash_point=None, options=None,
               stall_point=None):
        """Host ``name`` boots again; with ``wait``, until its
        nova-compute has run ``init_host`` and heartbeats (or, with a
        ``crash_point``, until it died there if that comes first).
        ``crash_point``, ``stall_point`` and ``options`` hold for this
        nova-compute run only (``cluster_config.compute_overrides``).
        Returns the ``last_exit`` entry when it died, else None."""
        overrides = cluster_config.compute_overrides(crash_point, options,
                                                     stall_point)
        with self._lock:
            host = self.host(name)
            began = cluster_services.utcnow()
            t = time.monotonic()
            host.revive(overrides)
            self.save()
            died = None
            if wait:
                died = self._wait_started(host, began)
            LOG.info('Host %s revived in %.1f s', name,
                     time.monotonic() - t)
            return died

    def stop_compute(self, name):
        """Host ``name``'s nova-compute alone stops (SIGTERM, then
        SIGKILL); libvirtd and the guests run on, and the controller
        still reaches libvirtd. ``restart_compute`` starts it again."""
        with self._lock:
            self.host(name).stop_compute()
            self.save()

    def restart_compute(self, name, wait=True, crash_point=None,
                        options=None, stall_point=None):
        """Stop host ``name``'s nova-compute (SIGTERM) and start it again,
        with ``crash_point``, ``stall_point`` and ``options`` for this run
        only (none: its plain nova.conf). The hypervisor and the guests
        keep running. ``wait`` as for ``revive``; the ``last_exit`` entry
        when it died, else None. A run with a ``stall_point`` stops itself
        there: ``wait_for_compute_stall``, then ``heal``."""
        overrides = cluster_config.compute_overrides(crash_point, options,
                                                     stall_point)
        with self._lock:
            host = self.host(name)
            if host.entry.state == 'failed':
                raise ClusterError('host %s failed; revive it' % name)
            host.stop_compute()
            self.save()
            began = cluster_services.utcnow()
            host.start_compute(overrides)
            self.save()
            if wait:
                return self._wait_started(host, began)
            return None

    def _wait_started(self, host, began):
        """Until the new nova-compute heartbeats after ``began``; when it
        runs with a crash point and dies first, its ``last_exit``."""
        crash_point = host.entry.compute_overrides.get(
            'fault_injection', {}).get('crash_point')
        client = self.api_client()

        def up_or_dead():
            if not host.compute.alive():
                return True
            return client.service_is_up(host.name, 'nova-compute',
                                        newer_than=began)
        try:
            cluster_services.wait_until(up_or_dead, SERVICE_TIMEOUT,
                                        'nova-compute on %s up'
                                        % host.name)
        except ClusterError as e:
            raise host.compute.failure(str(e))
        if not host.compute.alive():
            # Reaped first, so that the exit recorded is this run's and
            # not the previous one's.
            host.compute.wait_reaped(SERVICE_TIMEOUT)
        died = host.note_compute_exit()
        if died is not None:
            self.save()
            if not crash_point:
                raise host.compute.failure('exited before it was up')
        return died

    def wait_for_compute_exit(self, name, timeout=SERVICE_TIMEOUT):
        """Until host ``name``'s nova-compute has exited (reaped); its
        ``last_exit`` entry: ``returncode`` -9 and ``cause`` ``crash
        point`` when it killed itself at its crash point."""
        host = self.host(name)
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if host.compute is None or host.compute.popen.poll() \
                        is not None:
                    if host.note_compute_exit() is not None:
                        self.save()
                    return host.entry.last_exit
            if time.monotonic() > deadline:
                raise ClusterError('nova-compute of %s still runs after %s '
                                   's' % (name, timeout))
            time.sleep(cluster_services.POLL)

    def partition(self, name):
        """Host ``name`` loses the control plane (``ClusterHost.partition``:
        its nova-compute stopped, its guests running); the control plane
        sees it down ``service_down_time`` after its last heartbeat."""
        with self._lock:
            self.host(name).partition()
            self.save()

    def wait_for_compute_stall(self, name, timeout=SERVICE_TIMEOUT):
        """Until host ``name``'s nova-compute, run with a ``stall_point``,
        has stopped itself there (SIGSTOP: state ``T`` in /proc); then it
        is recorded partitioned, so ``heal`` continues it.
        ClusterError if it exits first or is still running at the
        timeout."""
        host = self.host(name)
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if host.compute_stopped():
                    host.mark_stalled()
                    self.save()
                    return
                if host.compute is None or \
                        host.compute.popen.poll() is not None:
                    raise ClusterError('nova-compute of %s exited before '
                                       'it stalled: %s'
                                       % (name, host.entry.last_exit))
            if time.monotonic() > deadline:
                raise ClusterError('nova-compute of %s did not stall in %s '
                                   's' % (name, timeout))
            time.sleep(cluster_services.POLL)

    def heal(self, name):
        """Host ``name``'s partition ends: its nova-compute goes on, never
        restarted; it heartbeats again within ``report_interval``."""
        with self._lock:
            self.host(name).heal()
            self.save()

    def restart_libvirtd(self, name):
        """Restart host ``name``'s libvirtd alone (its guests, virtlockd
        and the leases it holds, and nova-compute run on)."""
        with self._lock:
            host = self.host(name)
            if host.entry.state == 'failed':
                raise ClusterError('host %s failed; revive it' % name)
            host.restart_libvirtd()
            self.save()

    def mount_shared(self, name, group):
        """Mount storage group ``group`` (``shared1``, or a host's name:
        the storage that host uses) over host ``name``'s instances_path,
        inside that host only, as an NFS share appearing after the host
        booted (``ClusterHost.mount_storage``). Undone by
        ``unmount_shared`` or ``down``."""
        group = self.spec.resolve_storage_group(group)
        with self._lock:
            self.host(name).mount_storage(self.layout.storage(group), group)
            self.save()

    def unmount_shared(self, name):
        """Undo the newest ``mount_shared`` of host ``name``; the mount
        record it undid."""
        with self._lock:
            mount = self.host(name).unmount_storage()
            self.save()
            return mount

    # -- noticing exits ----------------------------------------------------

    def _start_watching(self):
        self._stop_watching.clear()
        thread = threading.Thread(target=self._watch, daemon=True,
                                  name='cluster-watch')
        thread.start()
        self._watcher = thread

    def _watch(self):
        """Reap every nova-compute that exits on its own (a crash point,
        a crash) as soon as it does, and record how it ended."""
        while not self._stop_watching.wait(cluster_services.POLL):
            # Never wait behind a long revive: try again next round.
            if not self._lock.acquire(timeout=cluster_services.POLL):
                continue
            try:
                noticed = [host.note_compute_exit()
                           for host in self.hosts.values()]
                if any(noticed):
                    self.save()
            except Exception:
                LOG.exception('Watching the nova-compute processes failed')
            finally:
                self._lock.release()

    def set_api_reachable(self, name, reachable):
        """Let host ``name`` reach nova-api, or not: without it, its
        network agent cannot post ``network-vif-plugged`` (the events a
        guest waits for are withheld, as when Neutron cannot notify
        Nova); RPC and the database are not affected."""
        with self._lock:
            host = self.host(name)
            port = self.ports.api
            if reachable and port not in self.forwarder.ports(
                    host.netns.path):
                self.forwarder.add(host.netns.path, port)
            elif not reachable:
                self.forwarder.remove(host.netns.path, port)

    # -- taking it down ----------------------------------------------------

    def down(self, keep_logs=False):
        """Stop everything and remove what up() made (but the logs, with
        ``keep_logs``). Idempotent; every step runs even when an earlier
        one failed (the errors are raised together at the end)."""
        with self._lock:
            began = time.monotonic()
            errors = []

            def step(what, function, *args):
                try:
                    function(*args)
                except Exception as e:
                    LOG.exception('Cluster down: %s failed', what)
                    errors.append('%s: %s' % (what, e))

            self._stop_watching.set()
            if self._watcher is not None:
                self._watcher.join(timeout=5)
                self._watcher = None
            if self.record is not None:
                self.record.state = 'stopping'
                self.save()
            joins = []
            for host in self.hosts.values():
                if host.compute is not None:
                    joins.append(_in_thread(host.stop_compute))
            for proc in (self.hamonitor, self.api, self.conductor):
                if proc is not None:
                    joins.append(_in_thread(proc.stop))
            for join in joins:
                step('stopping a service', join)
            for name, host in self.hosts.items():
                step('stopping host %s' % name, host.stop)
            self.hosts = {}
            if self.masakari is not None:
                step('stopping Masakari', self.masakari.stop)
                self.masakari = None
            step('stopping the forwarder', self.forwarder.stop)
            if self.rabbit is not None:
                step('stopping RabbitMQ', self.rabbit.stop)
            if self.postgres is not None:
                step('stopping PostgreSQL', self.postgres.stop)
            if self.glance is not None:
                step('stopping Glance', self.glance.stop)
            if self.keystone is not None:
                step('stopping Keystone', self.keystone.stop)
            self.api = self.conductor = self.hamonitor = None
            self.rabbit = self.postgres = None
            self.keystone = self.glance = None
            step('removing namespaces',
                 cluster_reclaim.remove_namespaces, self.spec)
            step('removing files', cluster_reclaim.remove_files,
                 self.layout,
                 ('logs', 'supervisor.log') if keep_logs else ())
            self.record = None
            LOG.info('Cluster in %s down in %.1f s', self.spec.base_dir,
                     time.monotonic() - began)
            if errors:
                raise ClusterError('cluster down: ' + '; '.join(errors))


def _write(path, text):
    with open(path, 'w') as f:
        f.write(text)
