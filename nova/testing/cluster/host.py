"""One compute host of the cluster: its namespaces, hypervisor and service.

A ``ClusterHost`` is what a physical compute node is in a deployment:

* a network namespace (``cluster_net``) with the network's bridge, where
  its taps appear and where the controller is reached on loopback
  (``cluster_forward``);
* a ``hypervisor.LibvirtHost``: virtlogd, virtlockd (the disk leases,
  unless the spec says ``hosts_without_leases``) and libvirtd in a private
  mount namespace (started from inside the network namespace, so they and
  every QEMU they start live there too);
* in that mount namespace, a fresh sysfs (so ``/sys/class/net`` shows the
  host's own devices) and the host's storage directory mounted on the
  cluster's common ``instances_path``;
* its ``nova-compute``, started with ``nsenter`` into both namespaces.

``fail()`` is a host losing power: nova-compute, QEMU, libvirtd,
virtlockd and virtlogd are killed (SIGKILL) and its taps vanish; disks,
libvirt's persistent definitions and the bridge configuration stay.
``revive()`` boots it again: libvirtd, then nova-compute, whose
``init_host`` runs. ``partition()`` is a host losing the control plane,
not power: its nova-compute is stopped (SIGSTOP), its daemons and guests
keep running, until ``heal()`` lets it go on (SIGCONT).
``restart_libvirtd()`` restarts libvirtd alone.

``start_compute(overrides)`` runs nova-compute with extra options for that
run only (a crash point); ``note_compute_exit()`` reaps it once it exited
and records how in ``entry.last_exit``. ``mount_storage()`` mounts other
storage over ``instances_path`` inside the host, recorded in
``entry.mounts`` and undone by ``unmount_storage()`` and ``stop()``.
"""

import os
import signal
import time

from oslo_concurrency import processutils
from oslo_log import log as logging

from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import forward as cluster_forward
from nova.testing.cluster import net as cluster_net
from nova.testing.cluster import record as cluster_record
from nova.testing.cluster import services as cluster_services
from nova.testing import hypervisor
from nova.testing import procs
from nova.virt import mounts

LOG = logging.getLogger(__name__)

# Run in the host's namespaces once, right after they are made. The new
# sysfs is mounted while in the host's network namespace, so it shows that
# namespace's devices; the cgroup mounts under the old /sys are carried
# over (libvirtd looks for them even with no controller configured).
PREPARE_NAMESPACE = """\
set -e
if mountpoint -q /sys/fs/cgroup; then
    keep=$(mktemp -d /run/nova-cluster-cgroup.XXXXXX)
    mount --rbind /sys/fs/cgroup "$keep"
    mount -t sysfs sysfs /sys
    mount --move "$keep" /sys/fs/cgroup
    rmdir "$keep"
else
    mount -t sysfs sysfs /sys
fi
mount --bind "$1" "$2"
"""


class ClusterHost:

    def __init__(self, spec, layout, name, forwarder, forward_ports):
        self.spec = spec
        self.layout = layout
        self.name = name
        self.forwarder = forwarder
        self.forward_ports = tuple(forward_ports)
        self.netns = cluster_net.NetworkNamespace(spec.netns(name))
        self.storage_dir = layout.storage(spec.storage_group(name))
        self.hypervisor = hypervisor.LibvirtHost(
            name, layout.hosts, instances_path=self.storage_dir,
            lock_manager=spec.lock_manager(name))
        self.compute = None
        # The controller's way to the host's libvirtd (cut by partition).
        self.libvirt_relay = cluster_forward.UnixRelay(
            layout.libvirt_relay(name), self.hypervisor.socket)
        self._exit_noted = False
        self._log_offset = 0
        self.entry = cluster_record.HostEntry(
            name=name, libvirt_uri=self.hypervisor.uri,
            instances_path=layout.instances_path,
            storage_dir=self.storage_dir,
            storage_group=spec.storage_group(name),
            netns=self.netns.name, config_file=layout.conf(name),
            log_file=layout.log('nova-compute-' + name),
            tree=self.hypervisor.tree,
            lock_manager=spec.lock_manager(name))

    # -- what the harness calls -------------------------------------------

    def start_hypervisor(self):
        """Namespaces, daemons, mounts, bridge and forwarding; no nova."""
        os.makedirs(self.storage_dir, exist_ok=True)
        os.makedirs(self.layout.state_path(self.name), exist_ok=True)
        self.netns.create()
        cluster_net.run_in_netns(self.netns.path, self.hypervisor.start)
        self.ns_run('sh', '-c', PREPARE_NAMESPACE, 'prepare',
                    self.storage_dir, self.layout.instances_path)
        self.netns.add_bridge(self.spec.bridge)
        for port in self.forward_ports:
            self.forwarder.add(self.netns.path, port)
        self.libvirt_relay.start()
        self._record_processes()

    def start_compute(self, overrides=None):
        """Start nova-compute inside the host (returns at once).

        ``overrides`` ({section: {option: value}}, see
        ``cluster_config.compute_overrides``) go to the host's override
        file, read after its nova.conf: they hold for this run only.
        """
        if self.compute is not None and self.compute.alive():
            raise cluster_services.ClusterError(
                'nova-compute of %s already runs' % self.name)
        override_file = self.layout.override_conf(self.name)
        config = ['--config-file', self.entry.config_file]
        if overrides:
            _write(override_file, cluster_config.override_conf(overrides))
            config += ['--config-file', override_file]
        elif os.path.exists(override_file):
            os.unlink(override_file)
        argv = self.ns_command(cluster_services.venv_bin('nova-compute'),
                               *config)
        self._log_offset = _size(self.entry.log_file)
        self.compute = cluster_services.ServiceProcess.start(
            'nova-compute on %s' % self.name, argv, self.entry.log_file)
        self._exit_noted = False
        self.entry.compute_overrides = dict(overrides or {})
        self.entry.override_file = override_file if overrides else ''
        self._record_processes()
        self.entry.state = 'up'
        if overrides:
            LOG.info('Started nova-compute of %s with %s', self.name,
                     overrides)

    def stop_compute(self):
        """Stop the host's nova-compute (SIGTERM, then SIGKILL), reaped;
        the rest of the host keeps running."""
        if self.compute is None:
            return
        if self.entry.state == 'partitioned':
            # A stopped process acts on SIGTERM only once it runs again.
            self._signal_compute(signal.SIGCONT)
            self.libvirt_relay.start()
            self.entry.state = 'up'
        # One that already died is recorded as what it was, not stopped.
        if self.note_compute_exit() is None and not self._exit_noted:
            self.compute.stop()
            self.note_compute_exit(cause='stopped')

    def note_compute_exit(self, cause=None):
        """Record how nova-compute ended once it has (it is reaped here);
        the ``last_exit`` entry when this call noticed it, else None.

        ``cause`` is what the harness did to it; by default a SIGKILL
        whose log says it reached its ``crash_point`` is a ``crash
        point``, anything else ``exited``.
        """
        compute = self.compute
        if compute is None or self._exit_noted:
            return None
        returncode = compute.popen.poll()
        if returncode is None:
            return None
        self._exit_noted = True
        crash_point = self.entry.compute_overrides.get(
            'fault_injection', {}).get('crash_point')
        reached = bool(crash_point) and self._log_says_reached(
            crash_point, compute.popen.pid)
        if cause is None:
            cause = ('crash point' if reached and
                     returncode == -signal.SIGKILL else 'exited')
        self.entry.last_exit = {
            'pid': compute.record.pid,
            'start_time': compute.record.start_time,
            'returncode': returncode,
            'signal': (signal.Signals(-returncode).name
                       if returncode < 0 else None),
            'cause': cause,
            'crash_point': crash_point if reached else None,
        }
        self._record_processes()
        if self.entry.state == 'up':
            self.entry.state = 'compute-exited'
        LOG.info('nova-compute of %s (%d) ended: %s', self.name,
                 compute.record.pid, self.entry.last_exit)
        return self.entry.last_exit

    def _log_says_reached(self, crash_point, pid):
        # nova/crashpoint.py logs this line (flushed) just before the kill.
        line = 'Crash point %s reached: killing process %d' % (
            crash_point, pid)
        try:
            with open(self.entry.log_file, 'rb') as f:
                f.seek(self._log_offset)
                return line.encode() in f.read()
        except OSError:
            return False

    def fail(self):
        """The host dies: every process of it killed, its taps gone."""
        began = time.monotonic()
        self.hypervisor.crash()
        if self.compute is not None:
            # crash() killed it (it is in the mount namespace); reap it.
            self.compute.kill()
            self.note_compute_exit(cause='host failed')
        removed = self.netns.delete_taps()
        self.entry.state = 'failed'
        self._record_processes()
        LOG.info('Host %(name)s failed (taps lost: %(taps)s) in %(s).2f s',
                 {'name': self.name, 'taps': removed,
                  's': time.monotonic() - began})

    def partition(self):
        """The host loses the control plane, not power: its nova-compute
        is stopped where it is (SIGSTOP) and does nothing at all any more
        (no heartbeat, no RPC, no periodic task), and the controller no
        longer reaches its libvirtd, while libvirtd, virtlockd and the
        guests run on. ClusterError unless its
        nova-compute runs (and is not partitioned already)."""
        if self.entry.state == 'partitioned':
            raise cluster_services.ClusterError('%s is partitioned already'
                                                % self.name)
        if self.compute is None or not self.compute.alive():
            raise cluster_services.ClusterError(
                'nova-compute of %s does not run' % self.name)
        self._signal_compute(signal.SIGSTOP)
        # Nor does the controller reach its libvirtd any more.
        self.libvirt_relay.stop()
        self.entry.state = 'partitioned'
        LOG.info('Host %s partitioned: nova-compute (%d) stopped',
                 self.name, self.compute.record.pid)

    def compute_stopped(self):
        """Whether the host's nova-compute is stopped by a signal (state
        ``T`` in /proc), as after reaching its ``stall_point``."""
        compute = self.compute
        if compute is None or compute.popen.poll() is not None:
            return False
        return procs.state(compute.popen.pid) == 'T'

    def mark_stalled(self):
        """Record a nova-compute that stopped itself (its ``[fault_injection]
        stall_point``) as partitioned, so that ``heal`` continues it and
        ``stop_compute`` lets it end cleanly. ClusterError unless it is
        stopped now."""
        if self.entry.state == 'partitioned':
            raise cluster_services.ClusterError('%s is partitioned already'
                                                % self.name)
        if not self.compute_stopped():
            raise cluster_services.ClusterError(
                'nova-compute of %s is not stopped' % self.name)
        self.entry.state = 'partitioned'
        LOG.info('Host %s stalled: nova-compute (%d) stopped itself at %s',
                 self.name, self.compute.record.pid,
                 self.entry.compute_overrides.get(
                     'fault_injection', {}).get('stall_point'))

    def heal(self):
        """The partition ends: the host's nova-compute goes on (SIGCONT)
        from where it stopped, never restarted (no ``init_host``)."""
        if self.entry.state != 'partitioned':
            raise cluster_services.ClusterError('%s is not partitioned'
                                                % self.name)
        self._signal_compute(signal.SIGCONT)
        self.libvirt_relay.start()
        self.entry.state = 'up'
        LOG.info('Host %s healed: nova-compute (%d) continued', self.name,
                 self.compute.record.pid)

    def _signal_compute(self, sig):
        # Popen.send_signal signals only a child not yet reaped: never a
        # reused PID.
        self.compute.popen.send_signal(sig)

    def restart_libvirtd(self):
        """libvirtd alone stopped and started again (guests, virtlogd,
        virtlockd and nova-compute run on)."""
        self.hypervisor.restart_libvirtd()
        self._record_processes()

    def revive(self, overrides=None):
        """The host boots again: libvirtd, then nova-compute."""
        self.hypervisor.restart()
        self.start_compute(overrides)

    def stop(self):
        """Stop everything of the host and remove its namespaces; the
        mounts it recorded are undone once nothing in the host uses them,
        before its namespace ends."""
        errors = []

        def unmount():
            try:
                self.unmount_all()
            except Exception as e:
                LOG.exception('Host %s: undoing its mounts failed',
                              self.name)
                errors.append(e)

        try:
            self.stop_compute()
        finally:
            self.libvirt_relay.stop()
            self.forwarder.remove(self.netns.path)
            self.hypervisor.stop(before_release=unmount)
            self.netns.delete()
            self.entry.state = 'stopped'
            self.entry.processes = {}
        if errors:
            # The namespace is gone, and every mount made in it with it.
            self.entry.mounts = []
            raise errors[0]

    # -- storage mounted later ---------------------------------------------

    def mount_storage(self, storage_dir, group):
        """Bind-mount ``storage_dir`` over the host's ``instances_path``,
        in the host's mount namespace only, as an NFS share mounted after
        the host booted: every process of the host (nova-compute
        included) sees the new storage from then on. Recorded in
        ``entry.mounts`` with the mount's id, to be undone by exactly that
        (``unmount_storage``, ``stop``)."""
        target = self.layout.instances_path
        if os.path.realpath(storage_dir) == os.path.realpath(
                self.storage_dir):
            raise cluster_services.ClusterError(
                '%s already has %s at %s' % (self.name, storage_dir, target))
        if not os.path.isdir(storage_dir):
            raise cluster_services.ClusterError(
                'no storage directory %s' % storage_dir)
        self.ns_run('mount', '--bind', storage_dir, target)
        mount_id = self._top_mount_id(target)
        self.entry.mounts.append({
            'source': storage_dir, 'target': target,
            'storage_group': group, 'mount_id': mount_id,
            'covers': self.storage_dir,
            'covers_group': self.entry.storage_group})
        self.storage_dir = self.entry.storage_dir = storage_dir
        self.entry.storage_group = group
        LOG.info('Host %s: mounted %s over %s (mount id %s)', self.name,
                 storage_dir, target, mount_id)

    def unmount_storage(self):
        """Undo the newest recorded mount: the host sees the storage it
        covered again. ClusterError if there is none, or if the mount on
        top of instances_path is not the recorded one (then nothing is
        unmounted: it is not ours to guess)."""
        if not self.entry.mounts:
            raise cluster_services.ClusterError(
                '%s has no mount of its own over %s'
                % (self.name, self.layout.instances_path))
        mount = self.entry.mounts[-1]
        found = self._top_mount_id(mount['target'])
        if found != mount['mount_id']:
            raise cluster_services.ClusterError(
                '%s: the mount on %s is %s, not the recorded %s; not '
                'unmounting it' % (self.name, mount['target'], found,
                                   mount['mount_id']))
        self.ns_run('umount', mount['target'])
        self.entry.mounts.pop()
        self.storage_dir = self.entry.storage_dir = mount['covers']
        self.entry.storage_group = mount['covers_group']
        LOG.info('Host %s: unmounted %s from %s', self.name,
                 mount['source'], mount['target'])
        return mount

    def unmount_all(self):
        while self.entry.mounts:
            self.unmount_storage()

    def _top_mount_id(self, target):
        """The id of the mount on top of ``target`` in the host's mount
        namespace, or None (its mountinfo, read from outside)."""
        table = mounts.read('/proc/%d/mountinfo' % self.hypervisor.ns_pid)
        # Later lines are mounted later: the last one is on top.
        found = [m.mount_id for m in table if m.mount_point == target]
        return found[-1] if found else None

    # -- looking inside ----------------------------------------------------

    def ns_command(self, *argv):
        """argv run inside the host: its mount and network namespaces."""
        return ['nsenter', '-t', str(self.hypervisor.ns_pid), '-m', '-n',
                '--'] + list(argv)

    def ns_run(self, *argv):
        out, _err = processutils.execute(*self.ns_command(*argv))
        return out

    def _record_processes(self):
        records = {}
        for role, pid in self.hypervisor.pids.items():
            try:
                records[role] = procs.ProcessRecord.of(pid)
            except ProcessLookupError:
                continue
        if self.compute is not None and self.compute.alive():
            records['nova-compute'] = self.compute.record
        self.entry.processes = records


def _write(path, text):
    with open(path, 'w') as f:
        f.write(text)


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
