"""The real cluster for the rows that need QEMU, and the by-hand baselines
run on its hosts.

``BenchCluster(hosts, **spec)`` is a ``nova.testing.cluster.Cluster`` in
a new directory under ``/tmp`` (real libvirtd + QEMU per simulated host,
PostgreSQL, RabbitMQ, nova-api, nova-conductor, nova-compute per host;
see ``doc/source/cluster.rst``), without debug logging but with the
phase marks (``nova.phases``) logged for the rows' phase tables, up on
``__enter__`` and down (its own teardown, which stops every process by its
recorded PID and removes the directory) on ``__exit__``; with
``switched_off``, its services start without those guarantees
(``rows/guarantees.py``, benchmark only). The client is
``nova.cli.client`` over the REST API, as the ``nova`` CLI.

The baselines copy what nova made: ``copy_domain(host, uuid, tag)``
reads the persistent definition of the instance's domain (``virsh
dumpxml --inactive``), gives it a new name and UUID, copies the disk
files it names into a directory of their own on the same storage, lets
libvirt make the tap on the same bridge (``<interface type='bridge'>``
without a fixed tap name or MAC), and writes the XML to a file, so that
``virsh create`` / ``define`` of that file starts the same guest on the
same host without touching nova's.

When a part of a row fails in a cluster (``keep_evidence``, and
``__exit__`` with an exception), what would say why is copied out of the
cluster before its teardown removes it, to a new directory
``/tmp/nova-bench-evidence-*`` that is printed: the services' logs,
each host's libvirt logs (``libvirtd.log``, ``qemu/<domain>.log``), and
the state of each host's libvirtd threads (``ps`` of its threads with
their kernel wait channel, and ``gdb``'s backtrace of every thread when
gdb is installed): a libvirtd that stopped answering is seen where it
waits.
"""

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from rows import common
from rows import guarantees

from nova.cli import client as client_mod  # noqa: E402
from nova.testing import cluster as cluster_mod  # noqa: E402
from nova.testing.cluster import net as cluster_net  # noqa: E402

TIMEOUT = 300
POLL = 0.02


class BenchCluster:

    def __init__(self, hosts, switched_off=(), **spec_options):
        self.base_dir = tempfile.mkdtemp(prefix='nova-bench-cluster-')
        self.spec = cluster_mod.ClusterSpec(
            base_dir=self.base_dir, hosts=hosts, debug=False,
            phase_marks=True, **spec_options)
        self.cluster = cluster_mod.Cluster(self.spec)
        # Guarantees the cluster's services start without (benchmark
        # only: rows/guarantees.py); for the whole block, so that a
        # service restarted in it (a revived host) starts the same way.
        self.switched_off = tuple(switched_off)
        self._environment = contextlib.ExitStack()

    def __enter__(self):
        os.chmod(self.base_dir, 0o755)
        self._environment.enter_context(
            guarantees.services_started_without(self.switched_off))
        try:
            self.cluster.up(reclaim_first=False)
        except BaseException:
            self._environment.close()
            self._remove_dir()
            raise
        self.record = self.cluster.record
        return self

    def __exit__(self, exc_type, exc, tb):
        # Also stops what a row left running (copies included: their
        # QEMU processes run in the hosts, their files are under
        # base_dir).
        if exc_type is not None and issubclass(exc_type, Exception):
            self.keep_evidence('%s: %s' % (exc_type.__name__, exc))
        try:
            self.cluster.down()
        finally:
            self._environment.close()
            self._remove_dir()

    def _remove_dir(self):
        if os.path.isdir(self.base_dir):
            os.rmdir(self.base_dir)

    def keep_evidence(self, why):
        """Copy what would say why a part failed out of the cluster (see
        the module's docstring); the directory's path, printed. Never
        raises: a row's failure must stay what is reported."""
        try:
            kept = tempfile.mkdtemp(prefix='nova-bench-evidence-')
            with open(os.path.join(kept, 'why.txt'), 'w') as f:
                f.write(why + '\n')
            shutil.copytree(self.cluster.layout.logs,
                            os.path.join(kept, 'logs'), dirs_exist_ok=True)
            for name, host in sorted(self.cluster.hosts.items()):
                _keep_host(host.hypervisor, os.path.join(kept, name))
        except Exception as e:     # what is kept so far stays
            print('keeping the evidence of a failed part failed: %s' % e,
                  file=sys.stderr)
            return None
        print('evidence of the failed part (%s) kept in %s' % (why, kept),
              file=sys.stderr)
        return kept

    # -- the REST API ------------------------------------------------------

    def traces(self, since, first_mark):
        """The phase traces of the operations whose marks include
        ``first_mark``, logged by the cluster's services since ``since``
        (``time.time()``)."""
        return common.traces_in_logs(self.cluster.layout.logs, since,
                                     first_mark)

    def client(self, timeout=60):
        client = client_mod.Client(self.record.api_url,
                                   self.record.api_token, timeout=timeout)
        client.negotiate('2.53')
        return client

    def compute_services(self, client):
        return {s['host']: s for s in client.get('/os-services')['services']
                if s['binary'] == 'nova-compute'}

    def set_service(self, client, host, **fields):
        """``PUT /os-services/<id>`` (``status``, ``forced_down``)."""
        service = self.compute_services(client)[host]
        client.put('/os-services/%s' % service['id'], fields)

    def post_server(self, client, name):
        body = {'server': {'name': name, 'imageRef': self.record.image_id,
                           'flavorRef': self.spec.flavor_id,
                           'networks': [{'uuid': self.record.network_id}]}}
        return client.post('/servers', body)['server']['id']

    def server(self, client, uuid):
        return client.get('/servers/%s' % uuid)['server']

    def wait_server(self, client, uuid, status, host=None, timeout=TIMEOUT):
        """Until the server has ``status``, no task (and ``host``); an
        ERROR not asked for raises."""
        def reached():
            server = self.server(client, uuid)
            if server['status'] == 'ERROR' and status != 'ERROR':
                raise RuntimeError('server %s went to ERROR: %s'
                                   % (uuid, server.get('fault')))
            return (server['status'] == status
                    and server.get('OS-EXT-STS:task_state') is None
                    and (host is None
                         or server.get('OS-EXT-SRV-ATTR:host') == host))
        common.wait_until(reached, timeout, 'server %s %s' % (uuid, status),
                          interval=POLL)

    def delete_servers(self, client, uuids, timeout=TIMEOUT):
        common.delete_servers(client, uuids, timeout, interval=0.2)

    # -- the hosts, seen from outside nova ---------------------------------

    def entry(self, host):
        return self.record.host(host)

    def virsh(self, host, *args):
        """``virsh -c <host's URI> args``; its stdout."""
        return subprocess.run(
            ['virsh', '-c', self.entry(host).libvirt_uri] + list(args),
            capture_output=True, text=True, check=True,
            timeout=TIMEOUT).stdout

    def has_domain(self, host, uuid):
        result = subprocess.run(
            ['virsh', '-c', self.entry(host).libvirt_uri, 'domuuid',
             'instance-' + uuid], capture_output=True, timeout=TIMEOUT)
        return result.returncode == 0

    def taps(self, host):
        """The tap devices in the host's network namespace (one
        ``if_nameindex`` call inside it)."""
        path = cluster_net.NetworkNamespace(self.entry(host).netns).path
        return {name for _index, name in cluster_net.run_in_netns(
            path, socket.if_nameindex) if name.startswith('tap')}

    def instance_dir(self, host, uuid):
        return os.path.join(self.entry(host).storage_dir, uuid)

    def copy_domain(self, host, uuid, tag):
        """A copy of the instance's domain on ``host`` (see the module
        docstring); the path of its XML file and its name."""
        entry = self.entry(host)
        name = 'bench-%s' % tag
        copy_outside = os.path.join(entry.storage_dir, name)
        os.makedirs(copy_outside)
        text, files = common.copied_xml(
            self.virsh(host, 'dumpxml', '--inactive', 'instance-' + uuid),
            name, os.path.join(entry.instances_path, uuid),
            os.path.join(entry.instances_path, name), self.spec.bridge)
        for relative in files:
            source = os.path.join(entry.storage_dir, uuid, relative)
            if os.path.isfile(source):
                shutil.copy2(source, os.path.join(copy_outside, relative))
        path = os.path.join(copy_outside, 'domain.xml')
        with open(path, 'w') as f:
            f.write(text)
        return path, name

    def remove_copy(self, host, name):
        """Destroy and undefine the copy (either may already be gone) and
        remove its files."""
        for command in (('destroy', name), ('undefine', name)):
            subprocess.run(['virsh', '-c', self.entry(host).libvirt_uri]
                           + list(command), capture_output=True,
                           timeout=TIMEOUT)
        shutil.rmtree(os.path.join(self.entry(host).storage_dir, name),
                      ignore_errors=True)


EVIDENCE_TIMEOUT = 60


def _keep_host(hypervisor, kept):
    """``hypervisor``'s libvirt logs and its libvirtd's threads, in
    ``kept``."""
    shutil.copytree(hypervisor.log_dir, os.path.join(kept, 'libvirt-log'),
                    dirs_exist_ok=True)
    pid = hypervisor.pids.get('libvirtd')
    if pid is None:
        return
    commands = {'libvirtd-threads.txt': [
        'ps', '-L', '-o', 'pid,tid,stat,wchan:32,time,comm', '-p', str(pid)]}
    if shutil.which('gdb'):
        commands['libvirtd-backtraces.txt'] = [
            'gdb', '-batch', '-p', str(pid), '-ex', 'thread apply all bt']
    for name, argv in commands.items():
        try:
            result = subprocess.run(argv, capture_output=True, text=True,
                                    timeout=EVIDENCE_TIMEOUT)
            output = result.stdout + result.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            output = '%s: %s\n' % (' '.join(argv), e)
        with open(os.path.join(kept, name), 'w') as f:
            f.write(output)


def timed_run(argv):
    """Run ``argv`` (check it succeeded); seconds it took."""
    started = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, timeout=TIMEOUT)
    return time.perf_counter() - started


def unavailable_reason():
    return cluster_mod.unavailable_reason()
