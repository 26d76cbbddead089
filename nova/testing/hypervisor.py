"""Real libvirtd + QEMU hosts on one machine, for integration tests.

A ``LibvirtHost`` is one simulated hypervisor host: a ``virtlogd``, a
``virtlockd`` (libvirt's lock manager, see below) and a ``libvirtd``
running in a private mount namespace in which a per-host tree
is bind-mounted over ``/etc/libvirt``, ``/run/libvirt``,
``/var/lib/libvirt``, ``/var/cache/libvirt`` and ``/var/log/libvirt``.
Several hosts run at once without seeing each other's domains. Clients in
the root namespace reach a host at ``host.uri``.

``instances_path`` is NOT bind-mounted: it is an ordinary directory whose
absolute path is the same inside and outside the namespace, so a compute
driver running in the test process and QEMU running in the namespace see
the same files. Passing one directory to several hosts makes them share
storage.

Disk leases: with ``lock_manager='lockd'`` (the default) libvirtd runs
with ``lock_manager = "lockd"``, and each host's own virtlockd takes an
fcntl lock directly on every disk file a domain uses (the "direct"
lockspace of ``qemu-lockd.conf``) before QEMU starts. Hosts that share a
directory share those locks (one kernel, one inode), exactly as hosts
sharing an NFS export do: a second domain on a disk whose lease another
host's virtlockd holds is refused. The lease lives in virtlockd, not in
libvirtd: it survives ``restart_libvirtd()`` and goes when QEMU dies
(``crash()`` kills every daemon, virtlockd included).
``lock_manager=None`` runs without leases (benchmarks compare the two).

The namespace is held by ``nsholder.py``, which starts the daemons and,
as a child subreaper, reaps them and every QEMU at once (see there why
that makes destroy 0.2 s instead of 1.5 s here); it stops the host by
itself when the test process dies. Everything started is also recorded
(``hostrecord``), so a host is stopped by PID, pid file or
mount-namespace membership, never by process name.

Example::

    with hypervisor.LibvirtHost('compute1', self.tmp) as host:
        conn = libvirt.open(host.uri)
        ...
        host.crash()       # SIGKILL QEMU, libvirtd, virtlogd
        host.restart()     # daemons back; domains shut off (crashed)

``stop()`` then ``start()`` again powers the host back on with the
domains it had defined.
"""

import atexit
import contextlib
import dataclasses
import grp
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from oslo_concurrency import processutils
from oslo_log import log as logging

from nova.testing import hostrecord
from nova.testing import nsholder
from nova.testing import procs

LOG = logging.getLogger(__name__)

SYSTEM_CACHE = '/var/cache/libvirt'
KVM_DEVICE = '/dev/kvm'
REQUIRED_BINARIES = ('libvirtd', 'virtlogd', 'virtlockd', 'virsh',
                     'qemu-system-x86_64', 'qemu-img', 'unshare', 'nsenter',
                     'taskset', 'ip')
LOCK_MANAGERS = (None, 'lockd')

# Per-host subdirectory -> the system directory it is mounted over.
MOUNTS = (
    ('etc', '/etc/libvirt'),
    ('run', '/run/libvirt'),
    ('lib', '/var/lib/libvirt'),
    ('cache', '/var/cache/libvirt'),
    ('log', '/var/log/libvirt'),
)

# NOTE: QEMU runs as root so that it can read and write the disks the
# compute service (root, in the root namespace) creates under
# instances_path, with no chown dance. dynamic_ownership = 0 keeps libvirt
# from changing the ownership of files under instances_path at start and
# restoring it at stop: files the tests compare stay exactly as written.
# cgroup_controllers = [] because every host's libvirtd would otherwise
# create /machine/qemu-<id>-<name>.libvirt-qemu in the one shared cgroup
# tree, and two hosts with the same domain id and name would collide (and
# a crash would leave the cgroup behind). namespaces = [] keeps QEMU in
# the host's mount namespace, so "every process of this host" is exactly
# "every process in that namespace".
QEMU_CONF = """\
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "logd"
"""
# lock_manager: libvirtd asks virtlockd (its socket in /run/libvirt, so
# the host's own) for a lease on each disk before QEMU starts.
QEMU_CONF_LOCKD = 'lock_manager = "lockd"\n'
# Leases on every disk, taken on the disk files themselves (no
# file_lockspace_dir: the "direct" lockspace), so that whoever sees the
# same file sees the same lease.
QEMU_LOCKD_CONF = 'auto_disk_leases = 1\n'
LIBVIRTD_CONF = 'log_outputs = "3:file:/var/log/libvirt/libvirtd.log"\n'
VIRTLOGD_CONF = 'log_outputs = "3:file:/var/log/libvirt/virtlogd.log"\n'
VIRTLOCKD_CONF = 'log_outputs = "3:file:/var/log/libvirt/virtlockd.log"\n'
# Daemon -> the socket it listens on (under run/libvirt), in start order:
# virtlockd before the libvirtd that connects to it.
DAEMON_SOCKETS = (('virtlogd', 'virtlogd-sock'),
                  ('virtlockd', 'virtlockd-sock'),
                  ('libvirtd', 'libvirt-sock'))


def domain_xml(name, uuid, disk_path, memory_mib=64, console_log=None):
    """A minimal TCG domain: one qcow2 disk, optional file serial."""
    serial = ''
    if console_log:
        serial = ("<serial type='file'><source path='%s'/></serial>"
                  % console_log)
    return f"""<domain type='qemu'>
  <name>{name}</name>
  <uuid>{uuid}</uuid>
  <memory unit='MiB'>{memory_mib}</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type><boot dev='hd'/></os>
  <features><acpi/></features>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='{disk_path}'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    {serial}
  </devices>
</domain>"""


class HostStartError(RuntimeError):
    """A simulated host could not be started; the message says why."""


@dataclasses.dataclass
class HostTimings:
    """Seconds spent, measured by start() and restart()."""
    start: float = 0.0        # namespace + both daemons listening
    probe: float = 0.0        # first call needing QEMU capabilities
    restart: float = 0.0      # last restart() after a crash


def unavailable_reason():
    """Why real hosts cannot run here, or None when they can."""
    if os.geteuid() != 0:
        return 'libvirtd hosts need root'
    missing = [b for b in REQUIRED_BINARIES if shutil.which(b) is None]
    if missing:
        return ('not installed: %s (tools/ci-prepare-host installs them)'
                % ', '.join(missing))
    try:
        processutils.execute('unshare', '-m', '--propagation', 'private',
                             'true')
    except processutils.ProcessExecutionError as e:
        return 'cannot create a mount namespace: %s' % e.stderr.strip()
    return None


def prepare_kvm_device():
    """Give the kvm group access to /dev/kvm, as udev would.

    Without it libvirt re-probes QEMU on every define (about 44 s each).
    Idempotent; does nothing when there is no /dev/kvm.
    """
    if not os.path.exists(KVM_DEVICE):
        return
    st = os.stat(KVM_DEVICE)
    try:
        kvm_gid = grp.getgrnam('kvm').gr_gid
    except KeyError:
        kvm_gid = None
    if kvm_gid is not None and st.st_gid != kvm_gid:
        os.chown(KVM_DEVICE, -1, kvm_gid)
    if st.st_mode & 0o777 != 0o660:
        os.chmod(KVM_DEVICE, 0o660)


def ensure_mount_points():
    """The bind-mount targets must exist in the root namespace."""
    for _sub, target in MOUNTS:
        os.makedirs(target, exist_ok=True)


def _pin_command():
    """taskset prefix keeping a daemon on one CPU, the first allowed.

    NOTE: libvirt 9.0 stores the host's CPUID in the capability cache and
    throws the cache away when it differs; leaf 0x1f reports the x2APIC
    id of the CPU the daemon runs on, so an unpinned libvirtd re-probes
    QEMU (3-12 s) whenever it lands on another CPU than the one that
    filled the cache. libvirt resets each QEMU's affinity to every CPU,
    so guests are not pinned by this.
    """
    return ('taskset', '-c', str(min(os.sched_getaffinity(0))))


class LibvirtHost:
    """One simulated hypervisor host: virtlogd + libvirtd in a namespace.

    ``name`` is a label (also the tree's directory name under
    ``base_dir``); ``instances_path`` defaults to ``<tree>/instances``;
    pass one directory to several hosts for shared storage.
    ``update_system_cache`` hands a fresh capability probe back to
    ``/var/cache/libvirt`` so that later hosts skip it. ``lock_manager``:
    ``'lockd'`` (disk leases, the default) or None.
    """

    def __init__(self, name, base_dir, instances_path=None,
                 update_system_cache=True, lock_manager='lockd'):
        if lock_manager not in LOCK_MANAGERS:
            raise ValueError('lock_manager must be one of %s, not %r'
                             % (LOCK_MANAGERS, lock_manager))
        self.name = name
        self.lock_manager = lock_manager
        self.tree = os.path.abspath(os.path.join(base_dir, name))
        self.instances_path = os.path.abspath(
            instances_path or os.path.join(self.tree, 'instances'))
        self.update_system_cache = update_system_cache
        self.timings = HostTimings()
        self._lock = threading.RLock()
        self._holder = None     # subprocess.Popen of the namespace holder
        self._state = hostrecord.HostState(
            name=name, tree=self.tree, instances_path=self.instances_path,
            owner=procs.ProcessRecord.of(os.getpid()))

    # -- what tests use --------------------------------------------------

    @property
    def socket(self):
        return os.path.join(self.tree, 'run', 'libvirt', 'libvirt-sock')

    @property
    def uri(self):
        return 'qemu+unix:///system?socket=' + self.socket

    @property
    def admin_uri(self):
        """libvirtd's admin interface (``virt-admin -c``)."""
        return ('libvirtd:///system?socket='
                + os.path.join(self.tree, 'run', 'libvirt',
                               'libvirt-admin-sock'))

    def client_ids(self):
        """The clients connected to this libvirtd now, as libvirtd itself
        lists them (``virt-admin srv-clients-list``): a test counts its
        own connections without counting every socket of its process."""
        out, _err = processutils.execute(
            'virt-admin', '-c', self.admin_uri, 'srv-clients-list',
            'libvirtd')
        return [line.split()[0] for line in out.splitlines()
                if line.strip() and line.split()[0].isdigit()]

    @property
    def ns_pid(self):
        """A PID inside the host's mount namespace (for nsenter -t)."""
        return self._state.processes['holder'].pid

    @property
    def pids(self):
        """Live PIDs of the host's own processes, by role: holder,
        virtlogd, virtlockd (with leases), libvirtd (QEMU:
        ``qemu_pids()``)."""
        return {role: record.pid
                for role, record in self._state.processes.items()
                if record.alive()}

    @property
    def log_dir(self):
        """libvirtd.log, virtlogd.log and qemu/<domain>.log are here."""
        return os.path.join(self.tree, 'log', 'libvirt')

    def qemu_pids(self):
        """PIDs of this host's running QEMU processes."""
        return hostrecord.qemu_pids(self._state)

    def qemu_pid(self, domain_name):
        """PID of the QEMU process running ``domain_name``, or None."""
        pid = procs.read_pid(os.path.join(
            self.tree, 'run', 'libvirt', 'qemu', domain_name + '.pid'))
        return pid if pid in self.qemu_pids() else None

    def ns_command(self, *argv):
        """argv that runs ``argv`` inside the host's mount namespace."""
        return ['nsenter', '-t', str(self.ns_pid), '-m', '--'] + list(argv)

    def virsh(self, *args):
        out, _err = processutils.execute('virsh', '-c', self.uri, *args)
        return out

    def describe(self):
        """A few lines saying what runs on the host, for test logs."""
        try:
            domains = self.virsh('list', '--all').strip()
        except processutils.ProcessExecutionError as e:
            domains = 'virsh failed: %s' % e.stderr.strip()
        return ('host %s: daemons %s, qemu %s\n%s'
                % (self.name, self.pids, self.qemu_pids(), domains))

    # -- lifecycle -------------------------------------------------------

    def start(self, timeout=30):
        """Start the namespace and both daemons; probe capabilities.

        Returns self. On failure everything started is stopped again and
        ``HostStartError`` says why (the daemons' logs are in log_dir).
        """
        with self._lock:
            if self._state.processes:
                raise HostStartError('host %s already started' % self.name)
            began = time.monotonic()
            prepare_kvm_device()
            ensure_mount_points()
            self._build_tree()
            with _LIVE_LOCK:
                _LIVE.add(self)
            try:
                self._start_holder(timeout)
                self._start_daemons(timeout)
                self.timings.start = time.monotonic() - began
                self._probe_capabilities()
            except BaseException:
                self.stop()
                raise
            LOG.info('Host %(name)s up in %(start).2f s (capability probe '
                     '%(probe).2f s) at %(uri)s',
                     {'name': self.name, 'start': self.timings.start,
                      'probe': self.timings.probe, 'uri': self.uri})
            return self

    def crash(self):
        """Simulate a host failure: SIGKILL QEMU and every daemon.

        Every process in the namespace but its holder is killed; the
        namespace and the tree (the host's configuration and state on
        disk) survive, so restart() brings the daemons back as after a
        reboot.
        """
        with self._lock:
            victims = hostrecord.members(self._state, but=('holder',))
            for pid in victims:
                procs.kill(pid, signal.SIGKILL)
            procs.wait_gone(victims, timeout=10)
            for role in hostrecord.DAEMONS:
                self._state.processes.pop(role, None)
            hostrecord.save(self._state)
            LOG.info('Host %(name)s crashed (killed %(pids)s)',
                     {'name': self.name, 'pids': victims})

    def restart(self, timeout=30):
        """Start the daemons again after crash()."""
        with self._lock:
            began = time.monotonic()
            self._start_daemons(timeout)
            self._wait_for_reconnection(timeout)
            self.timings.restart = time.monotonic() - began
            LOG.info('Host %(name)s restarted in %(secs).2f s',
                     {'name': self.name, 'secs': self.timings.restart})

    def restart_libvirtd(self, timeout=30):
        """Stop libvirtd (SIGTERM) and start it again, as ``systemctl
        restart libvirtd`` does: the guests keep running, virtlogd and
        virtlockd (and the leases it holds) are not touched."""
        with self._lock:
            began = time.monotonic()
            record = self._state.processes.get('libvirtd')
            if record is not None:
                procs.terminate(record, timeout)
                self._state.processes.pop('libvirtd', None)
                hostrecord.save(self._state)
            self._start_daemons(timeout)
            self._wait_for_reconnection(timeout)
            LOG.info('Host %(name)s: libvirtd restarted in %(secs).2f s',
                     {'name': self.name,
                      'secs': time.monotonic() - began})

    def stop(self, timeout=10, before_release=None):
        """Stop every process of the host; leave no namespace behind.

        Idempotent. The tree and instances_path stay (they belong to
        the caller's base_dir). ``before_release()`` runs once every
        process of the host but its holder is gone, while the namespace
        still exists (to undo mounts the caller made in it); it must not
        raise (the holder is released anyway, but the stop is cut short).
        """
        def release():
            try:
                if before_release is not None and self._holder is not None:
                    before_release()
            finally:
                self._release_holder()

        with self._lock:
            try:
                hostrecord.stop_state(self._state, timeout,
                                      release_holder=release)
            finally:
                if self._holder is not None:
                    # Our child: reap it so no zombie is left.
                    self._holder.kill()
                    self._holder.wait(timeout=timeout)
                    self._holder = None
            self._state.processes.clear()
            self._state.ns_inode = 0
            hostrecord.forget(self._state)
            with _LIVE_LOCK:
                _LIVE.discard(self)
            if os.path.isdir(self.tree):
                hostrecord.save(self._state)

    def __enter__(self):
        if not self._state.processes:
            self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()

    # -- internals -------------------------------------------------------

    def _build_tree(self):
        """Per-host copies of libvirt's directories, copied from the system's.

        /etc/libvirt is copied without persistent domains, networks and
        pools or their autostart links (the host starts empty) and with
        this harness's daemon configuration; /var/lib/libvirt contributes
        its directory layout only (never a system's disk images); the QEMU
        capability cache is copied so the probe is skipped while valid.
        """
        for sub, _target in MOUNTS:
            os.makedirs(os.path.join(self.tree, sub, 'libvirt'),
                        exist_ok=True)
        os.makedirs(self.instances_path, exist_ok=True)
        etc = os.path.join(self.tree, 'etc', 'libvirt')
        if os.path.isdir('/etc/libvirt'):
            shutil.copytree('/etc/libvirt', etc, dirs_exist_ok=True,
                            ignore=_ignore_host_objects)
        write = hostrecord.write_atomically
        lockd = self.lock_manager == 'lockd'
        write(os.path.join(etc, 'qemu.conf'),
              QEMU_CONF + (QEMU_CONF_LOCKD if lockd else ''))
        write(os.path.join(etc, 'qemu-lockd.conf'), QEMU_LOCKD_CONF)
        write(os.path.join(etc, 'libvirtd.conf'), LIBVIRTD_CONF)
        write(os.path.join(etc, 'virtlogd.conf'), VIRTLOGD_CONF)
        write(os.path.join(etc, 'virtlockd.conf'), VIRTLOCKD_CONF)
        if os.path.isdir('/var/lib/libvirt'):
            _copy_dir_layout('/var/lib/libvirt',
                             os.path.join(self.tree, 'lib', 'libvirt'))
        caps = os.path.join(SYSTEM_CACHE, 'qemu', 'capabilities')
        if os.path.isdir(caps):
            shutil.copytree(
                caps, os.path.join(self.tree, 'cache', 'libvirt', 'qemu',
                                   'capabilities'), dirs_exist_ok=True)

    def _start_holder(self, timeout):
        """The namespace: unshare, bind mounts, and a holder process.

        The holder (nsholder.py) keeps the namespace (and so the mounts)
        alive across crash() and restart(), starts the daemons, reaps
        every detached process at once, and stops the whole host by
        itself if this process dies; its exit in stop() ends the
        namespace.
        """
        argv = ['unshare', '-m', '--propagation', 'private',
                sys.executable, nsholder.__file__,
                os.path.join(self.log_dir, 'daemons.log')]
        for sub, target in MOUNTS:
            argv += [os.path.join(self.tree, sub, 'libvirt'), target]
        errlog_path = os.path.join(self.log_dir, 'holder.log')
        with open(errlog_path, 'wb') as errlog:
            # start_new_session: a Ctrl-C meant for the test run must not
            # kill the host behind stop()'s back.
            self._holder = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=errlog, start_new_session=True)
        self._state.processes['holder'] = procs.ProcessRecord.of(
            self._holder.pid)
        hostrecord.save(self._state)
        line = self._holder_reply(timeout)
        if line != 'ready':
            with open(errlog_path) as f:
                raise HostStartError('namespace for %s failed: %s %s'
                                     % (self.name, line, f.read().strip()))
        self._state.ns_inode = procs.mount_ns_inode(self._holder.pid)
        hostrecord.save(self._state)

    def _holder_reply(self, timeout):
        ready, _, _ = select.select([self._holder.stdout], [], [], timeout)
        if not ready:
            return 'timeout after %s s' % timeout
        return self._holder.stdout.readline().decode().strip()

    def _holder_run(self, argv, timeout):
        """Run argv in the namespace, as the holder's child; its status."""
        self._holder.stdin.write(b'run %s\n' % json.dumps(argv).encode())
        self._holder.stdin.flush()
        reply = self._holder_reply(timeout)
        if not reply.startswith('exit '):
            raise HostStartError('host %s: %s gave %r'
                                 % (self.name, argv, reply))
        return int(reply.split()[1])

    def _release_holder(self):
        """Close the holder's input: it stops what is left and exits."""
        if self._holder is None:
            return
        with contextlib.suppress(OSError):
            self._holder.stdin.close()
        try:
            self._holder.wait(timeout=nsholder.GRACE * 2 + 1)
        except subprocess.TimeoutExpired:
            self._holder.kill()
            self._holder.wait()
        self._holder.stdout.close()
        self._holder = None

    def _start_daemons(self, timeout):
        run = os.path.join(self.tree, 'run')
        for role, sockname in DAEMON_SOCKETS:
            if role == 'virtlockd' and self.lock_manager != 'lockd':
                continue
            record = self._state.processes.get(role)
            if record is not None and record.alive():
                continue
            pid_file = os.path.join(run, role + '.pid')
            sock = os.path.join(run, 'libvirt', sockname)
            # Leftovers of a crash would make the waits below succeed
            # before the new daemon is up.
            for stale in (pid_file, sock):
                if os.path.exists(stale):
                    os.unlink(stale)
            # With -d the daemon reports its start-up status to its
            # parent before that exits: a non-zero status means it failed.
            status = self._holder_run(
                [*_pin_command(), role, '-d', '--pid-file', pid_file],
                timeout)
            if status != 0:
                raise HostStartError(
                    '%s of host %s exited with %d (see %s)'
                    % (role, self.name, status, self.log_dir))
            pid = procs.wait_for_pid_file(pid_file, timeout)
            self._state.processes[role] = procs.ProcessRecord.of(pid)
            hostrecord.save(self._state)
            procs.wait_for_path(sock, timeout)

    def _wait_for_reconnection(self, timeout):
        """Until libvirtd has settled every domain that ran before.

        A new libvirtd reconnects to the QEMU processes of the status
        files (``run/libvirt/qemu/<domain>.xml``) in background threads;
        until then a domain whose QEMU is dead still reads "running".
        Settled: the status file is gone (libvirtd marked the domain shut
        off) or its QEMU runs.
        """
        deadline = time.monotonic() + timeout
        while True:
            unsettled = self._unsettled_domains()
            if not unsettled:
                return
            if time.monotonic() > deadline:
                raise HostStartError('host %s: libvirtd did not settle %s'
                                     % (self.name, unsettled))
            time.sleep(procs.POLL)

    def _unsettled_domains(self):
        qemu_run = os.path.join(self.tree, 'run', 'libvirt', 'qemu')
        try:
            names = os.listdir(qemu_run)
        except FileNotFoundError:
            return []
        live = set(self.qemu_pids())
        return [name[:-len('.xml')] for name in names
                if name.endswith('.xml')
                and procs.read_pid(os.path.join(
                    qemu_run, name[:-len('.xml')] + '.pid')) not in live]

    def _probe_capabilities(self):
        """The first call needing QEMU capabilities (3-12 s uncached)."""
        began = time.monotonic()
        self.virsh('domcapabilities', '--virttype', 'qemu')
        self.timings.probe = time.monotonic() - began
        if self.update_system_cache:
            _update_system_cache(self.tree)


def _ignore_host_objects(directory, names):
    rel = os.path.relpath(directory, '/etc/libvirt')
    ignored = {'autostart'} & set(names)
    if rel in ('qemu', 'lxc', 'libxl', 'storage', 'qemu/networks'):
        ignored |= {n for n in names if n.endswith('.xml')}
    return ignored


def _copy_dir_layout(src, dst):
    for root, _dirs, _files in os.walk(src):
        target = os.path.join(dst, os.path.relpath(root, src))
        os.makedirs(target, exist_ok=True)
        shutil.copystat(root, target)


def _update_system_cache(tree):
    """Hand a fresh capability probe back to the system's cache.

    The file is libvirt's own cache entry, replaced atomically, so
    concurrent hosts never read half a file.
    """
    src_dir = os.path.join(tree, 'cache', 'libvirt', 'qemu', 'capabilities')
    dst_dir = os.path.join(SYSTEM_CACHE, 'qemu', 'capabilities')
    if not os.path.isdir(src_dir):
        return
    os.makedirs(dst_dir, exist_ok=True)
    for name in os.listdir(src_dir):
        with open(os.path.join(src_dir, name)) as f:
            fresh = f.read()
        dst = os.path.join(dst_dir, name)
        if os.path.exists(dst):
            with open(dst) as f:
                if f.read() == fresh:
                    continue
        hostrecord.write_atomically(dst, fresh)
        LOG.info('Updated the QEMU capability cache %s', dst)


_LIVE = set()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_forgotten_hosts():
    with _LIVE_LOCK:
        hosts = list(_LIVE)
    for host in hosts:
        LOG.warning('Host %s was never stopped; stopping it at exit',
                    host.name)
        host.stop()


reap_stale = hostrecord.reap_stale


def main(argv=None):
    """``python -m nova.testing.hypervisor [prepare|reap|probe]``.

    prepare (the default): reap stale hosts, /dev/kvm permissions, mount
    points, and fill the capability cache with one throwaway host.
    """
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else 'prepare'
    if command not in ('prepare', 'reap', 'probe'):
        print(main.__doc__)
        return 2
    if command in ('prepare', 'reap'):
        for name in reap_stale():
            print('stopped stale host %s' % name)
    if command == 'prepare':
        prepare_kvm_device()
        ensure_mount_points()
    if command in ('prepare', 'probe'):
        with tempfile.TemporaryDirectory(prefix='nova-probe-') as tmp:
            with LibvirtHost('probe', tmp) as host:
                print('host start %.2f s, capability probe %.2f s'
                      % (host.timings.start, host.timings.probe))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
