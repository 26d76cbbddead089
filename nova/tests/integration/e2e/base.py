"""End-to-end tests against a real cluster (``nova.testing.cluster``).

Each test module has one test class deriving from ``ClusterTestCase``; the
class brings up one cluster (``cluster_hosts`` compute hosts,
``shared_groups`` sharing storage) for all its tests and brings it down
at the end, also when a test or the start failed, then asserts that
nothing is left behind: no process, network namespace, tap, mount or file.

Tests act only through the ``nova`` CLI (``self.nova(...)``) or the REST
API (``self.api``), and observe each host independently of the service
through ``cluster.json``: ``virsh -c <host URI>``, ``ip -n <host netns>
link`` and the host's storage directory (``self.observe``). Every
observation is printed, so a failing test's output says what each host
held before and after.

``watch_disks()`` samples, until the end of the test, which disk files
every QEMU process of every host holds open (``/proc/<pid>/fd``, files
told apart by inode, since every host sees its storage at the same path)
and fails the test if one disk stayed open in two QEMU processes at once
(doc/source/cleanup.rst, invariant 6) longer than a refused start takes
to exit.
"""

import dataclasses
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from nova.testing import cluster as cluster_mod
from nova.testing.cluster import cli as cluster_cli
from nova.testing.cluster import guest as cluster_guest
from nova.testing.cluster import net as cluster_net
from nova.testing.cluster import services as cluster_services
from nova.testing import procs
from nova.tests import base

NOVA_TIMEOUT = 120
POLL = 0.5
# The files of an instance directory a QEMU opens read-write.
DISK_NAMES = ('disk', 'disk.eph0', 'disk.swap')
E2E_ROOT = os.path.join(tempfile.gettempdir(), 'nova-e2e')

_VIRSH_ROW = re.compile(r'^\s*(\S+)\s+(\S+)\s+(.+?)\s*$')


@dataclasses.dataclass
class HostView:
    """What one host holds, seen from outside its nova-compute."""
    host: str
    # domain name -> state ('running', 'shut off'); None: libvirtd down
    domains: dict | None
    taps: list
    bridge_present: bool
    bridge_ports: list
    instance_files: dict | None     # name -> size; None: no directory

    def domain_of(self, uuid):
        for name, state in (self.domains or {}).items():
            if uuid in name:
                return state
        return None

    def text(self):
        domains = ('? (libvirtd down)' if self.domains is None
                   else self.domains or '{}')
        return ('  %s: domains %s; taps %s; bridge %s%s; instance dir %s'
                % (self.host, domains, self.taps or '[]',
                   'present' if self.bridge_present else 'MISSING',
                   ' ports %s' % self.bridge_ports if self.bridge_present
                   else '', 'absent' if self.instance_files is None
                   else self.instance_files))


def sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            digest.update(chunk)
    return digest.hexdigest()


def sha256_files(directory, names=None):
    """{relative path: sha256} of the files under ``directory`` (only the
    ``names`` given, when given; missing ones are left out)."""
    found = {}
    if names is not None:
        for name in names:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                found[name] = sha256(path)
        return found
    for root, _dirs, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, directory)] = sha256(path)
    return found


class _Sampler:
    """A thread sampling the cluster every ``interval`` s (``_run``) from
    ``start()`` until ``stop()``, which returns the problems it
    recorded."""

    name = 'sampler'

    def __init__(self, cluster, interval):
        self.cluster = cluster
        self.interval = interval
        self.problems = []
        self.samples = 0
        self.failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=self.name)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=10)
        return self.problems

    def _run(self):
        while not self._stop.wait(self.interval):
            try:
                snapshot = self.snapshot()
            except Exception as e:      # a host going down meanwhile
                self.failures += 1
                print('%s: sample failed: %s' % (self.name, e))
                continue
            self.samples += 1
            self._check(snapshot)

    def snapshot(self):
        raise NotImplementedError

    def _check(self, snapshot):
        raise NotImplementedError


class DiskWatch(_Sampler):
    """Samples every QEMU process of every host of ``cluster``, every
    ``interval`` s, for the instance disks it holds open; ``problems``
    lists each disk open in the same two QEMU processes for ``settle`` s
    or more.

    NOTE: QEMU opens a disk image before it takes its lock on it, so a
    QEMU that a lease or QEMU's own image lock refuses holds the disk
    open for the moment it takes to exit (about 0.1 s here). That is a
    refused start, not two guests on one disk; ``transient`` counts
    those, and a pair of QEMU processes that keeps the disk open past
    ``settle`` is a problem.
    """

    name = 'disk-watch'

    def __init__(self, cluster, interval=0.1, settle=2.0):
        super().__init__(cluster, interval)
        self.settle = settle
        self.transient = set()
        self._first_seen = {}

    def snapshot(self):
        """{(device, inode): [(host, QEMU pid, path as it sees it)]} of
        the instance disks open in a QEMU process now."""
        found = {}
        for name, host in list(self.cluster.hosts.items()):
            for pid in host.hypervisor.qemu_pids():
                for ident, path in procs.open_files(pid).items():
                    if os.path.basename(path) in DISK_NAMES:
                        found.setdefault(ident, []).append((name, pid,
                                                            path))
        return found

    def _check(self, snapshot):
        now = time.monotonic()
        for ident, users in snapshot.items():
            pids = frozenset(pid for _host, pid, _path in users)
            if len(pids) < 2:
                continue
            first = self._first_seen.setdefault((ident, pids), now)
            if now - first >= self.settle:
                self.problems.append((ident, users))
            else:
                self.transient.add((ident, pids))


class InstanceWatch(_Sampler):
    """Samples, every ``interval`` s until ``stop()``, the QEMU processes
    of every host of the cluster (each process's ``-uuid``, the host told
    by its mount namespace). When one instance has QEMU processes on two
    hosts, each host's libvirtd is asked at once whether its domain runs
    (``virsh domstate``): two running is a problem, in the first sample
    that sees it, however short it lasted (no settling time, unlike
    ``DiskWatch``).

    NOTE: a start that the disk leases refuse execs QEMU (paused, its
    CPUs never started) and libvirt ends it moments later; libvirt never
    reports that domain running. ``refused`` counts those samples.
    """

    name = 'instance-watch'

    def __init__(self, cluster, interval=0.1):
        super().__init__(cluster, interval)
        self.refused = 0
        # uuid -> the hosts its QEMU ran on, over the whole watch
        self.hosts_seen = {}

    def _namespaces(self):
        found = {}
        for name, host in list(self.cluster.hosts.items()):
            try:
                inode = procs.mount_ns_inode(host.hypervisor.ns_pid)
            except Exception:       # a host down: nothing runs there
                continue
            if inode is not None:
                found[inode] = name
        return found

    def snapshot(self):
        """{instance uuid: [(host, QEMU pid)]} now."""
        namespaces = self._namespaces()
        found = {}
        for pid in _all_pids():
            argv = _cmdline(pid).split()
            if not argv or not os.path.basename(argv[0]).startswith(
                    'qemu-system') or '-uuid' not in argv[:-1]:
                continue
            host = namespaces.get(procs.mount_ns_inode(pid))
            if host is None:
                continue
            uuid = argv[argv.index('-uuid') + 1]
            found.setdefault(uuid, []).append((host, pid))
        return found

    def _check(self, snapshot):
        for uuid, users in snapshot.items():
            self.hosts_seen.setdefault(uuid, set()).update(
                host for host, _pid in users)
            if len(users) < 2:
                continue
            running = [(host, pid) for host, pid in users
                       if self._runs(host, uuid)]
            if len(running) > 1:
                self.problems.append((round(time.monotonic(), 2),
                                      uuid, sorted(users)))
            else:
                self.refused += 1
                print('instance watch: %s has QEMU processes %s, '
                      'running on %s only' % (uuid, sorted(users),
                                              running))

    def _runs(self, host, uuid):
        """Whether ``host``'s libvirtd reports the domain running (False
        for a host or a domain that is gone)."""
        try:
            state = self.cluster.host(host).hypervisor.virsh(
                'domstate', 'instance-' + uuid)
        except Exception:
            return False
        return state.strip() == 'running'


class QemuWatch:
    """Samples ``host``, every ``interval`` s until ``stop()``, for a QEMU
    process of instance ``uuid``: libvirt's pid file of its domain, and
    any ``qemu-system-*`` process in the host's mount namespace whose
    command line names the domain (one that a refused or stopped start
    ends before libvirt writes its pid file is seen too); every
    ``domain_every``-th sample, and the last one, which ``stop()`` waits
    for, also reads the domain's state with ``domains()``
    (``ClusterTestCase.domains``). ``seen`` lists what was found:
    (seconds since start, what), never expected to grow when the host
    must not start the guest."""

    def __init__(self, cluster, host, uuid, domains, interval=0.1,
                 domain_every=5):
        self.cluster = cluster
        self.host = host
        self.domain = 'instance-' + uuid
        self.domains = domains
        self.interval = interval
        self.domain_every = domain_every
        self.seen = []
        self.samples = 0
        self.failures = 0
        self._began = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='qemu-watch-%s' % host)

    def start(self):
        self._began = time.monotonic()
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(timeout=30)
        return self.seen

    def qemu_now(self):
        """PIDs of the host's QEMU processes of the domain now."""
        hypervisor = self.cluster.host(self.host).hypervisor
        found = set()
        pid = hypervisor.qemu_pid(self.domain)
        if pid is not None:
            found.add(pid)
        inode = procs.mount_ns_inode(hypervisor.ns_pid)
        for pid in procs.pids_in_mount_ns(inode) if inode else ():
            argv = _cmdline(pid).split()
            if argv and os.path.basename(argv[0]).startswith(
                    'qemu-system') and self.domain in ' '.join(argv):
                found.add(pid)
        return sorted(found)

    def _run(self):
        # One sample at the start, then every interval, and a last one
        # once stop() was called: what happened until then is seen.
        while True:
            last = self._stop.is_set()
            self._sample(domain=last or
                         self.samples % self.domain_every == 0)
            if last:
                return
            self._stop.wait(self.interval)

    def _sample(self, domain):
        try:
            found = ['QEMU %d' % pid for pid in self.qemu_now()]
            if domain:
                state = (self.domains(self.host) or {}).get(self.domain)
                if state not in (None, 'shut off'):
                    found.append('domain %s' % state)
        except Exception as e:      # a host going down meanwhile
            self.failures += 1
            print('qemu watch on %s: sample failed: %s' % (self.host, e))
            return
        self.samples += 1
        if found:
            at = round(time.monotonic() - self._began, 2)
            if not self.seen or self.seen[-1][1] != found:
                print('qemu watch on %s at +%.2f s: %s'
                      % (self.host, at, found))
            self.seen.append((at, found))


def _mounts_mentioning(path):
    with open('/proc/self/mountinfo') as f:
        return [line.strip() for line in f if path in line]


class ClusterTestCase(base.TestCase):

    cluster_hosts = 2
    shared_groups = ()
    vif_plugging_timeout = 20
    vif_plugging_is_fatal = True
    reap_orphans_interval = 600
    # How long a stop waits for the guest to shut down; the cluster's
    # guests ignore the request, so a stop then stays in progress
    # (``powering-off``) that long.
    shutdown_timeout = 0
    hosts_without_leases = ()
    keystone = False
    # nova-hamonitor on the controller (``ClusterSpec.hamonitor``), with
    # the cluster's fence agent unless ``fence_agent`` is False, and
    # Masakari evacuating what it reports with ``masakari``.
    hamonitor = False
    fence_agent = True
    masakari = False

    # -- the class's cluster ----------------------------------------------

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        reason = cluster_mod.unavailable_reason()
        if reason:
            raise unittest.SkipTest('no real cluster here: ' + reason)
        os.makedirs(E2E_ROOT, mode=0o755, exist_ok=True)
        os.chmod(E2E_ROOT, 0o755)
        base_dir = os.path.join(E2E_ROOT, cls.__module__.rsplit('.', 1)[-1])
        cls.spec = cluster_mod.ClusterSpec(
            base_dir=base_dir, hosts=cls.cluster_hosts,
            shared_groups=cls.shared_groups,
            vif_plugging_timeout=cls.vif_plugging_timeout,
            vif_plugging_is_fatal=cls.vif_plugging_is_fatal,
            reap_orphans_interval=cls.reap_orphans_interval,
            shutdown_timeout=cls.shutdown_timeout,
            hosts_without_leases=cls.hosts_without_leases,
            keystone=cls.keystone or cls.masakari, masakari=cls.masakari,
            hamonitor=cls.hamonitor, fence_agent=cls.fence_agent)
        # Taps seen on the hosts; none may outlive the cluster.
        cls.seen_taps = set()
        cls.cluster = cluster_mod.Cluster(cls.spec)
        # Registered before up(): a failed start is cleaned up too, and
        # the leftover check runs after down (cleanups run in reverse).
        cls.addClassCleanup(cls._assert_nothing_left)
        cls.addClassCleanup(cls.cluster.down)
        began = time.monotonic()
        cls.cluster.up()
        print('cluster up in %.1f s: %s' % (time.monotonic() - began,
                                            cls.cluster.record.timings))
        cls.record = cls.cluster.record
        cls.api = cls.cluster.api_client()
        if cls.hamonitor:
            # The monitor's fence agent (``tools/cluster fence``) asks
            # the cluster's owner, this process, over its control socket.
            control = cluster_cli.Supervisor(cluster=cls.cluster)
            cls.addClassCleanup(control.stop)
            control.serve_in_thread()

    @classmethod
    def _assert_nothing_left(cls):
        record_path = cls.cluster.layout.record
        leftovers = []
        if os.path.exists(cls.spec.base_dir):
            leftovers.append('directory %s: %s' % (
                cls.spec.base_dir, os.listdir(cls.spec.base_dir)))
        if os.path.exists(record_path):
            leftovers.append(record_path)
        namespaces = cluster_net.existing('nvc%s-' % cls.spec.tag)
        if namespaces:
            leftovers.append('network namespaces %s' % namespaces)
        mounts = _mounts_mentioning(cls.spec.base_dir)
        if mounts:
            leftovers.append('mounts %s' % mounts)
        # The hosts' taps went with their network namespaces; none may
        # have appeared in the machine's own namespace either. (Taps of
        # other test runs on this machine are not ours to judge.)
        stray_taps = sorted(cls.seen_taps & set(_root_taps()))
        if stray_taps:
            leftovers.append('taps %s' % stray_taps)
        stray = [pid for pid in _all_pids()
                 if cls.spec.base_dir in _cmdline(pid)]
        if stray:
            leftovers.append('processes %s' % {
                pid: _cmdline(pid)[:120] for pid in stray})
        if leftovers:
            raise AssertionError('cluster left behind: ' +
                                 '; '.join(leftovers))
        print('cluster down: no process, namespace, tap, mount or file left')

    def setUp(self):
        super().setUp()
        self.started = time.monotonic()

    def tearDown(self):
        print('%s took %.1f s' % (self.id(), time.monotonic() - self.started))
        super().tearDown()

    # -- acting ------------------------------------------------------------

    def nova(self, *args, check=True):
        """Run the ``nova`` CLI against the cluster; its stdout."""
        argv = [os.path.join(os.path.dirname(sys.executable), 'nova'),
                '--os-endpoint', self.record.api_url,
                '--os-token', self.record.api_token] + list(args)
        result = subprocess.run(argv, capture_output=True, text=True,
                                timeout=NOVA_TIMEOUT)
        print('$ nova %s -> %d\n%s%s' % (' '.join(args), result.returncode,
                                         result.stdout[-1500:],
                                         result.stderr[-1500:]))
        if check and result.returncode != 0:
            self.fail('nova %s failed (%d): %s' % (
                ' '.join(args), result.returncode, result.stderr))
        return result.stdout

    def server(self, uuid):
        return self.api.get('/servers/%s' % uuid)['server']

    def compute_services(self):
        return {s['host']: s for s in self.api.services()
                if s['binary'] == 'nova-compute'}

    def set_enabled(self, host, enabled):
        service = self.compute_services()[host]
        self.api.request('PUT', '/os-services/%s' % service['id'],
                         {'status': 'enabled' if enabled else 'disabled'},
                         microversion='2.53')

    def boot_on(self, host, names, wait=True):
        """Boot servers named ``names`` on ``host``: every other compute
        service is disabled meanwhile, as an operator pins a host without
        availability zones. Returns their UUIDs."""
        others = [h for h in self.compute_services() if h != host]
        for other in others:
            self.set_enabled(other, False)
        uuids = []
        try:
            for name in names:
                self.nova('boot', '--image', self.spec.image_name,
                          '--flavor', self.spec.flavor_id, '--nic',
                          'net-id=%s' % self.record.network_id, name)
                uuids.append(self._uuid_of(name))
        finally:
            for other in others:
                self.set_enabled(other, True)
        if wait:
            for uuid in uuids:
                self.wait_for_server(uuid, status='ACTIVE', host=host)
        return uuids

    def _uuid_of(self, name):
        found = [s['id'] for s in self.api.get('/servers')['servers']
                 if s['name'] == name]
        self.assertEqual(1, len(found), 'servers named %s: %s'
                         % (name, found))
        return found[0]

    def wait_for_server(self, uuid, status=None, host=None, timeout=90):
        """Until the server has no task and the given status and host."""
        deadline = time.monotonic() + timeout
        server = None
        while time.monotonic() < deadline:
            server = self.server(uuid)
            done = server.get('OS-EXT-STS:task_state') is None
            if status is not None:
                done = done and server['status'] == status
            if host is not None:
                done = done and server.get('OS-EXT-SRV-ATTR:host') == host
            if done:
                return server
            if status not in (None, 'ERROR') and server['status'] == 'ERROR':
                self.fail('server %s went to ERROR: %s' % (
                    uuid, server.get('fault')))
            time.sleep(POLL)
        self.print_log_tails(host or server.get('OS-EXT-SRV-ATTR:host'))
        self.fail('server %s not %s on %s after %s s: %s'
                  % (uuid, status, host, timeout, server))

    def print_log_tails(self, host, lines=60):
        """The last ``lines`` of the logs of ``host``'s services and of the
        control plane's, printed (a failure's report shows them: the
        cluster and its logs are gone once the test ends)."""
        logs = self.cluster.layout.logs
        for name in sorted(os.listdir(logs)):
            if host and host in name or not any(
                    h in name for h in self.cluster.hosts):
                with open(os.path.join(logs, name), errors='replace') as f:
                    tail = f.readlines()[-lines:]
                print('--- last %d lines of %s ---\n%s'
                      % (len(tail), name, ''.join(tail)))

    def wait_for_gone(self, uuid, timeout=60):
        """Until ``GET /servers/<uuid>`` answers 404 (deleted)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.server(uuid)
            except cluster_services.ApiError as e:
                if e.code == 404:
                    return
                raise
            time.sleep(POLL)
        self.fail('server %s still there after %s s' % (uuid, timeout))

    def wait_for_compute_state(self, host, state, timeout=None):
        timeout = timeout or self.spec.service_down_time * 3
        self.cluster.api_client().wait_for_state(host, 'nova-compute',
                                                 state, timeout)

    def force_down(self, host, forced=True):
        """Set or clear the service's ``forced_down`` (an operator who
        knows the host is fenced need not wait ``service_down_time``)."""
        service = self.compute_services()[host]
        self.api.request('PUT', '/os-services/%s' % service['id'],
                         {'forced_down': forced}, microversion='2.53')
        print('%s forced_down=%s' % (host, forced))

    def migrations(self, uuid):
        """The server's migrations, oldest first."""
        return sorted((m for m in self.api.get('/os-migrations')[
            'migrations'] if m['instance_uuid'] == uuid),
            key=lambda m: m['id'])

    def wait_for_migration(self, uuid, status, timeout=60):
        """Until the server's newest migration has ``status``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.migrations(uuid)
            if found and found[-1]['status'] == status:
                return found[-1]
            time.sleep(POLL)
        self.fail('latest migration of %s not %s: %s'
                  % (uuid, status, self.migrations(uuid)))

    def fail_host(self, host, force_down=False):
        """The host dies; wait until the control plane sees it down (at
        once with ``force_down``: the operator fenced it; ``revive_host``
        clears the flag)."""
        self.cluster.fail(host)
        if force_down:
            self.force_down(host)
        self.wait_for_compute_state(host, 'down')

    def partition_host(self, host, force_down=False):
        """The host loses the control plane, its guests run on
        (``cluster.partition``); wait until the control plane sees it
        down (at once with ``force_down``)."""
        self.cluster.partition(host)
        print('%s partitioned' % host)
        if force_down:
            self.force_down(host)
        self.wait_for_compute_state(host, 'down')

    def heal_host(self, host):
        """The partition ends (``cluster.heal``); returns once the host's
        nova-compute heartbeats again. A ``forced_down`` stays."""
        offset = os.path.getsize(self.host_entry(host).log_file)
        self.cluster.heal(host)
        print('%s healed' % host)
        self.wait_for_heartbeats(host, 1)
        return offset

    def wait_for_heartbeats(self, host, count):
        """Until ``host`` heartbeat ``count`` more times; its row then."""
        first = self.service_row(host)['report_count']
        deadline = time.monotonic() + count * self.spec.report_interval * 10
        while self.service_row(host)['report_count'] < first + count:
            if time.monotonic() > deadline:
                self.fail('%s did not heartbeat %d times' % (host, count))
            time.sleep(POLL)
        return self.service_row(host)

    def wait_for_log(self, host, text, offset=0, timeout=60):
        """Until the host's nova-compute log says ``text`` after byte
        ``offset``; the line."""
        path = self.host_entry(host).log_file
        deadline = time.monotonic() + timeout
        while True:
            with open(path, 'rb') as f:
                f.seek(offset)
                for line in f.read().decode(errors='replace').splitlines():
                    if text in line:
                        return line
            if time.monotonic() > deadline:
                self.fail('%s never logged %r' % (host, text))
            time.sleep(POLL)

    def watch_disks(self):
        """Start a ``DiskWatch`` over the cluster; the test fails at its
        end if a disk stayed open in two QEMU processes at once."""
        watch = DiskWatch(self.cluster).start()

        def check():
            problems = watch.stop()
            print('disk watch: %d samples, %d disk(s) open in two QEMU '
                  'processes, %d refused start(s) seen opening a disk in '
                  'use' % (watch.samples, len(problems),
                           len(watch.transient)))
            if problems:
                self.fail('a disk was open in two QEMU processes at once: '
                          '%s' % problems[:5])
        self.addCleanup(check)
        return watch

    def watch_instances(self):
        """Start an ``InstanceWatch`` over the cluster; the test fails at
        its end if any sample saw one instance running in two QEMU
        processes."""
        watch = InstanceWatch(self.cluster).start()

        def check():
            problems = watch.stop()
            print('instance watch: %d samples (%d failed), %d with an '
                  'instance running in two QEMU processes, %d with a '
                  'refused start beside a running one' % (
                      watch.samples, watch.failures, len(problems),
                      watch.refused))
            if problems:
                self.fail('an instance ran in two QEMU processes at once: '
                          '%s' % problems[:5])
        self.addCleanup(check)
        return watch

    def watch_qemu(self, host, uuid):
        """Start a ``QemuWatch`` of ``uuid`` on ``host``; stopped at the
        end of the test at the latest. ``stop_qemu_watch`` stops it and
        fails the test if it ever saw the guest run there."""
        watch = QemuWatch(self.cluster, host, uuid, self.domains).start()
        self.addCleanup(watch.stop)
        return watch

    def stop_qemu_watch(self, watch):
        seen = watch.stop()
        print('qemu watch on %s: %d samples (%d failed) in %.1f s, the '
              'guest seen running there %d times'
              % (watch.host, watch.samples, watch.failures,
                 time.monotonic() - watch._began, len(seen)))
        self.assertGreater(watch.samples, 0)
        self.assertEqual([], seen, '%s ran a QEMU or a domain of %s'
                         % (watch.host, watch.domain))

    def lease_holders(self, disk):
        """The hosts whose virtlockd holds a lease (an fcntl lock) on the
        file ``disk`` (a path seen from outside the hosts)."""
        virtlockd = {h.entry.processes['virtlockd'].pid: name
                     for name, h in self.cluster.hosts.items()
                     if 'virtlockd' in h.entry.processes}
        locks = procs.locks_on(disk)
        print('locks on %s: %s' % (disk, locks))
        return sorted(virtlockd.get(lock.pid, 'pid %d' % lock.pid)
                      for lock in locks if lock.kind == 'POSIX')

    def qemu_with_open(self, disk):
        """[(host, QEMU pid)] of the QEMU processes, on every host, that
        hold the file ``disk`` (seen from outside) open: ``ps`` and
        ``lsof`` in each host's namespace."""
        ident = procs.file_id(disk)
        users = DiskWatch(self.cluster).snapshot().get(ident, [])
        return sorted((host, pid) for host, pid, _path in users)

    def revive_host(self, host, **kwargs):
        """``cluster.revive``, clearing ``forced_down`` first."""
        if self.compute_services()[host].get('forced_down'):
            self.force_down(host, False)
        return self.cluster.revive(host, **kwargs)

    # -- the database, read as the services wrote it -------------------------

    @classmethod
    def db_rows(cls, sql, **params):
        """Rows of a query on the cluster's database, as dicts (for what
        the API does not show: port bindings, storage identities)."""
        import sqlalchemy as sa
        engine = cls.__dict__.get('_engine')
        if engine is None:
            engine = sa.create_engine(cls.record.database_url,
                                      poolclass=sa.pool.NullPool)
            cls._engine = engine
        with engine.connect() as conn:
            return [dict(row._mapping)
                    for row in conn.execute(sa.text(sql), params)]

    def ports_of(self, uuid):
        """The instance's ports: uuid, binding_host, status."""
        return self.db_rows(
            'SELECT uuid, binding_host, status FROM ports '
            'WHERE instance_uuid = :uuid ORDER BY uuid', uuid=uuid)

    def assert_ports_bound_to(self, uuid, host):
        ports = self.ports_of(uuid)
        print('ports of %s: %s' % (uuid, ports))
        self.assertTrue(ports, 'instance %s has no port' % uuid)
        self.assertEqual([host] * len(ports),
                         [p['binding_host'] for p in ports], ports)
        return ports

    def taps_of(self, uuid):
        """The tap names the instance's ports get on any host."""
        return sorted(('tap' + port['uuid'])[:14]
                      for port in self.ports_of(uuid))

    def assert_nothing_of_on_busy_host(self, host, uuid, keep_files=False):
        """``assert_nothing_of`` on a host that runs other guests: no
        domain of ``uuid``, none of its ports' taps (the others' may be
        there), no instance directory unless ``keep_files``."""
        view = self.view(host, uuid)
        self.assertIsNone(view.domain_of(uuid), view.text())
        mine = set(self.taps_of(uuid))
        self.assertTrue(mine, 'no port of %s to look for' % uuid)
        self.assertEqual([], sorted(mine & set(view.taps)), view.text())
        if not keep_files:
            self.assertIsNone(view.instance_files, view.text())
        return view

    def service_row(self, host):
        (row,) = self.db_rows(
            'SELECT host, storage_identity, report_count, disabled, '
            'disabled_reason, forced_down FROM services '
            'WHERE host = :host AND "binary" = \'nova-compute\'',
            host=host)
        return row

    # -- observing ---------------------------------------------------------

    def host_entry(self, host):
        return self.cluster.record.host(host)

    def netns(self, host):
        return cluster_net.NetworkNamespace(self.host_entry(host).netns)

    def remove_bridge(self, host):
        self.netns(host).remove_bridge(self.spec.bridge)
        print('removed bridge %s on %s' % (self.spec.bridge, host))

    def restore_bridge(self, host):
        self.netns(host).add_bridge(self.spec.bridge)
        print('restored bridge %s on %s' % (self.spec.bridge, host))

    def instance_dir(self, host, uuid):
        return os.path.join(self.host_entry(host).storage_dir, uuid)

    def domains(self, host):
        """{name: state} from ``virsh list --all`` on the host; None when
        its libvirtd does not answer (a failed host)."""
        entry = self.host_entry(host)
        try:
            out = subprocess.run(
                ['virsh', '-c', entry.libvirt_uri, 'list', '--all'],
                capture_output=True, text=True, timeout=20, check=True
            ).stdout
        except subprocess.CalledProcessError:
            return None
        found = {}
        for line in out.splitlines()[2:]:
            match = _VIRSH_ROW.match(line)
            if match:
                found[match.group(2)] = match.group(3)
        return found

    def domain_disks(self, host, uuid):
        """The disk files the host's domain of ``uuid`` names (its
        persistent definition, read with ``virsh dumpxml --inactive``)."""
        import xml.etree.ElementTree as etree
        out = subprocess.run(
            ['virsh', '-c', self.host_entry(host).libvirt_uri, 'dumpxml',
             '--inactive', 'instance-' + uuid], capture_output=True,
            text=True, timeout=20, check=True).stdout
        return [source.get('file') for source in
                etree.fromstring(out).findall('./devices/disk/source')]

    def host_command(self, host, *argv):
        """Run ``argv`` inside the host (its mount and network
        namespaces), as an operator logged in there; its stdout."""
        result = subprocess.run(
            self.cluster.host(host).ns_command(*argv), capture_output=True,
            text=True, timeout=60)
        print('%s$ %s -> %d\n%s%s' % (
            host, ' '.join(argv), result.returncode, result.stdout,
            result.stderr))
        if result.returncode != 0:
            self.fail('%s on %s failed: %s' % (' '.join(argv), host,
                                               result.stderr))
        return result.stdout

    def storage_files(self, host, pattern):
        """Paths (relative to the host's storage) of every file whose name
        matches ``pattern`` (a regular expression)."""
        root = self.host_entry(host).storage_dir
        found = []
        for directory, _dirs, files in os.walk(root):
            found += [os.path.relpath(os.path.join(directory, name), root)
                      for name in files if re.search(pattern, name)]
        return sorted(found)

    def journals_of(self, host, uuid):
        """{path: content} of the open spawn journals of ``uuid`` that
        ``host`` wrote (``nova/virt/journal.py``; on shared storage other
        hosts' journals lie next to them)."""
        import json
        root = os.path.join(self.host_entry(host).storage_dir, '_journal')
        found = {}
        for name in sorted(os.listdir(root)) if os.path.isdir(root) else ():
            if not (name.startswith(uuid + '.') and name.endswith('.json')):
                continue
            path = os.path.join(root, name)
            try:
                with open(path) as f:
                    content = json.load(f)
            except (OSError, ValueError):
                continue        # gone, or half written, meanwhile
            if content.get('host') == host:
                found[path] = content
        return found

    def stamp_of(self, host, uuid):
        """The ownership stamp of ``uuid``'s directory as ``host`` sees
        it (a dict), or None."""
        import json
        path = os.path.join(self.instance_dir(host, uuid), '.nova-owner')
        try:
            with open(path) as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def quarantined(self, host, uuid):
        """The host's quarantined directories of ``uuid``."""
        root = os.path.join(self.host_entry(host).storage_dir,
                            '_quarantine')
        if not os.path.isdir(root):
            return []
        return sorted(os.path.join(root, name) for name in os.listdir(root)
                      if name.startswith(uuid + '-'))

    def view(self, host, uuid):
        ns = self.netns(host)
        directory = self.instance_dir(host, uuid)
        files = None
        if os.path.isdir(directory):
            files = {name: os.path.getsize(os.path.join(directory, name))
                     for name in sorted(os.listdir(directory))}
        present = ns.has_bridge(self.spec.bridge)
        taps = ns.taps()
        self.seen_taps.update(taps)
        return HostView(host=host, domains=self.domains(host),
                        taps=taps, bridge_present=present,
                        bridge_ports=ns.bridge_ports(self.spec.bridge)
                        if present else [],
                        instance_files=files)

    def observe(self, label, uuid, hosts):
        """Print and return {host: HostView} for ``uuid`` on ``hosts``."""
        views = {host: self.view(host, uuid) for host in hosts}
        print('--- %s (instance %s) ---\n%s' % (
            label, uuid, '\n'.join(v.text() for v in views.values())))
        return views

    def console_banners(self, host, uuid):
        path = os.path.join(self.instance_dir(host, uuid), 'console.log')
        try:
            with open(path, 'rb') as f:
                return f.read().count(cluster_guest.BANNER)
        except FileNotFoundError:
            return 0

    def wait_for_banners(self, host, uuid, count, timeout=30):
        deadline = time.monotonic() + timeout
        while self.console_banners(host, uuid) < count:
            if time.monotonic() > deadline:
                self.fail('console.log of %s on %s shows %d boot(s), not %d'
                          % (uuid, host, self.console_banners(host, uuid),
                             count))
            time.sleep(POLL)

    def assert_running_on(self, host, uuid):
        view = self.view(host, uuid)
        self.assertEqual('running', view.domain_of(uuid), view.text())
        self.assertTrue(view.bridge_ports, view.text())
        return view

    def assert_nothing_of(self, host, uuid, keep_files=False):
        """No domain and no tap of ``uuid`` on ``host``; no instance
        directory unless ``keep_files`` (shared storage)."""
        view = self.view(host, uuid)
        self.assertIsNone(view.domain_of(uuid), view.text())
        self.assertEqual([], view.taps, view.text())
        if not keep_files:
            self.assertIsNone(view.instance_files, view.text())
        return view

    def action_events(self, uuid, action, timeout=30):
        """Events of the newest ``action`` of the server, once each has
        finished: an event ends when the compute's handler returns, a
        moment after the server's task_state is cleared."""
        actions = self.api.get('/servers/%s/os-instance-actions'
                               % uuid)['instanceActions']
        chosen = [a for a in actions if a['action'] == action]
        self.assertTrue(chosen, 'no %s action in %s' % (action, actions))
        newest = max(chosen, key=lambda a: a['start_time'])
        deadline = time.monotonic() + timeout
        while True:
            detail = self.api.get('/servers/%s/os-instance-actions/%s'
                                  % (uuid, newest['request_id']),
                                  microversion='2.51')['instanceAction']
            events = detail.get('events', [])
            if all(e.get('result') is not None for e in events):
                return events
            if time.monotonic() > deadline:
                self.fail('events of %s still unfinished: %s'
                          % (newest['request_id'], events))
            time.sleep(POLL)


def _root_taps():
    return sorted(n for n in os.listdir('/sys/class/net')
                  if os.path.exists(os.path.join('/sys/class/net', n,
                                                 'tun_flags')))


def _all_pids():
    return [int(p) for p in os.listdir('/proc') if p.isdigit()
            and procs.start_time(int(p)) is not None]


def _cmdline(pid):
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().replace(b'\0', b' ').decode(errors='replace')
    except OSError:
        return ''
