"""One compute host of the cluster: its namespaces, hypervisor and service.

A ``ClusterHost`` is what a physical compute node is in a deployment:

* a network namespace (``cluster_net``) with the network's bridge, where
  its taps appear and where the controller is reached on loopback
  (``cluster_forward``);
* a ``hypervisor.LibvirtHost``: virtlogd + libvirtd in a private mount
  namespace (started from inside the network namespace, so they and every
  QEMU they start live there too);
* in that mount namespace, a fresh sysfs (so ``/sys/class/net`` shows the
  host's own devices) and the host's storage directory mounted on the
  cluster's common ``instances_path``;
* its ``nova-compute``, started with ``nsenter`` into both namespaces.

``fail()`` is a host losing power: nova-compute, QEMU, libvirtd and
virtlogd are killed (SIGKILL) and its taps vanish; disks, libvirt's
persistent definitions and the bridge configuration stay. ``revive()``
boots it again: libvirtd, then nova-compute, whose ``init_host`` runs.
"""

import os
import time

from oslo_concurrency import processutils
from oslo_log import log as logging

from nova.testing import cluster_net
from nova.testing import cluster_record
from nova.testing import cluster_services
from nova.testing import hypervisor
from nova.testing import procs

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
            name, layout.hosts, instances_path=self.storage_dir)
        self.compute = None
        self.entry = cluster_record.HostEntry(
            name=name, libvirt_uri=self.hypervisor.uri,
            instances_path=layout.instances_path,
            storage_dir=self.storage_dir,
            storage_group=spec.storage_group(name),
            netns=self.netns.name, config_file=layout.conf(name),
            log_file=layout.log('nova-compute-' + name),
            tree=self.hypervisor.tree)

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
        self._record_processes()

    def start_compute(self):
        """Start nova-compute inside the host (returns at once)."""
        if self.compute is not None and self.compute.alive():
            raise cluster_services.ClusterError(
                'nova-compute of %s already runs' % self.name)
        argv = self.ns_command(cluster_services.venv_bin('nova-compute'),
                               '--config-file', self.entry.config_file)
        self.compute = cluster_services.ServiceProcess.start(
            'nova-compute on %s' % self.name, argv, self.entry.log_file)
        self._record_processes()
        self.entry.state = 'up'

    def fail(self):
        """The host dies: every process of it killed, its taps gone."""
        began = time.monotonic()
        self.hypervisor.crash()
        if self.compute is not None:
            # crash() killed it (it is in the mount namespace); reap it.
            self.compute.kill()
        removed = self.netns.delete_taps()
        self.entry.state = 'failed'
        self._record_processes()
        LOG.info('Host %(name)s failed (taps lost: %(taps)s) in %(s).2f s',
                 {'name': self.name, 'taps': removed,
                  's': time.monotonic() - began})

    def revive(self):
        """The host boots again: libvirtd, then nova-compute."""
        self.hypervisor.restart()
        self.start_compute()

    def stop(self):
        """Stop everything of the host and remove its namespaces."""
        try:
            if self.compute is not None:
                self.compute.stop()
        finally:
            self.forwarder.remove(self.netns.path)
            self.hypervisor.stop()
            self.netns.delete()
            self.entry.state = 'stopped'
            self.entry.processes = {}

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
