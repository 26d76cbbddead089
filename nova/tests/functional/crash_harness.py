"""Crash tests: a compute operation run in a real process of its own,
killed with SIGKILL at a named crash point, then the host restarted.

The evacuation harness (``evacuate_harness``: hosts ``a``, ``b``, ``c`` as
real services in this process, a real SQLite file, ``inproc://`` RPC), plus
``crash(host, operation, point, ...)``: the host's in-process compute
service stops, a child process (``crash_child``) starts that host's
manager on the same node file, instances_path and database, runs the
operation with ``[fault_injection] crash_point`` set and dies at the point.
The rows and files are left exactly as the kill left them; the domains and
plugged VIFs are what the simulated hypervisor held at that instant (a
real libvirtd outlives nova-compute). ``restart_after_crash(host)`` then
starts a new service for the host on all of that, and its ``init_host``
must clean up.

Instances have real ports (``nova.network.api``, network ``public``),
bound to the host that builds them, so a test can check where a crash
leaves them bound.

Observations every crash test makes: no domain or VIF of the instance
where it does not belong (``assertNoTrace``), no spawn journal left open
and no ``.part-`` file anywhere (``assertNoJournalsOrParts``), the disks
that existed before byte for byte as they were, the ports bound to the
instance's host (``assertPortsBoundToItsHost``), and no domain, at the
kill or since, using a disk that is not complete under its final name
(``assertNoPartialDiskBooted``).
"""

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from oslo_concurrency import processutils

from nova.model import task_states
from nova import context as nova_context
from nova.image import qemu_img
from nova.network import api as network_api
from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.functional import crash_child
from nova.tests.functional import evacuate_harness as harness
from nova.virt import journal
from nova.virt.libvirt import guest as libvirt_guest
from nova.virt.libvirt import imagebackend
from nova.virt.libvirt import imagecache

CHILD_TIMEOUT = 120


class CrashTestCase(harness.EvacuateTestCase):

    def setUp(self):
        self.left_vifs = {}
        self._crashes = 0
        super().setUp()
        self.db_url = 'sqlite:///' + os.path.join(self.tmp, 'nova.sqlite')
        self.ports = network_api.API()
        self.ports.create_network(self.ctx, 'public', harness.BRIDGE,
                                  '172.24.4.0/24')

    def kill(self, name):
        host = self.hosts[name]
        self.left_vifs[name] = crash_child.held_by(host.sim)['vifs']
        return super().kill(name)

    # -- crashing ------------------------------------------------------------

    def _child_spec(self, name, operation, point, instance, migration,
                    network_info):
        """Write the spec of a child process for host ``name`` (whose
        in-process service is stopped first, and stays stopped); its
        path and content."""
        host = self.hosts[name]
        if not host.service._stopped.is_set():
            held = crash_child.held_by(host.sim)
            host.service.stop()
        else:
            held = {'domains': [list(d) for d in host.left_behind],
                    'vifs': self.left_vifs.get(name, [])}
        self._crashes += 1
        prefix = os.path.join(self.tmp, 'crash-%d-%s' % (self._crashes,
                                                         name))
        spec = {
            'base_dir': self.tmp, 'host': name,
            'instances_path': self.instances_path(name),
            'image_store_path': self.images.path,
            'bridges': list(self.BRIDGES.get(name, (harness.BRIDGE,))),
            'vif_plugging_timeout': 5,
            'settings': self.HOST_SETTINGS.get(name, {}),
            'domains': held['domains'], 'vifs': held['vifs'],
            'database': self.db_url, 'crash_point': point,
            'operation': operation, 'log': prefix + '.log',
            'dump': prefix + '.dump',
            'instance': instance.uuid if instance is not None else None,
            'migration': migration.uuid if migration is not None else None,
            'image': (instance.image_ref if instance is not None
                      and instance.image_ref else self.image.id),
            'network_info': network_info.to_list()
            if network_info is not None else None,
        }
        with open(prefix + '.json', 'w') as f:
            json.dump(spec, f)
        return prefix + '.json', spec

    def _child_died(self, name, spec, returncode, output, when):
        """Check that the child was killed; take what it left."""
        log = ''
        if os.path.exists(spec['log']):
            with open(spec['log']) as f:
                log = f.read()
        self.assertEqual(
            -signal.SIGKILL, returncode,
            'the child did not die %s (status %s):\n%s\n%s'
            % (when, returncode, output, log))
        with open(spec['dump']) as f:
            dumped = json.load(f)
        self.hosts[name].left_behind = [tuple(d) for d in dumped['domains']]
        self.left_vifs[name] = [tuple(v) for v in dumped['vifs']]
        return dumped

    def crash(self, name, operation, point, instance=None, migration=None,
              network_info=None):
        """Run ``operation`` for host ``name`` in a child process that dies
        at crash point ``point``; the host's in-process service is
        stopped first (and stays stopped)."""
        path, spec = self._child_spec(name, operation, point, instance,
                                      migration, network_info)
        child = subprocess.run(
            [sys.executable, '-m', 'nova.tests.functional.crash_child',
             path], timeout=CHILD_TIMEOUT,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return self._child_died(name, spec, child.returncode,
                                child.stdout.decode(), 'at %s' % point)

    def kill_when(self, name, operation, ready, instance=None,
                  network_info=None):
        """Run ``operation`` for host ``name`` in a child process with no
        crash point, and kill it with SIGKILL from here as soon as
        ``ready()`` is true (polled every few milliseconds): a moment no
        crash point can reach, such as in the middle of a disk write.

        The whole process group is killed, the child's ``qemu-img`` with
        it, as a power cut or the kill of a service's control group does:
        an orphaned ``qemu-img`` would go on writing and leave a complete
        file, not the partial one being tested.
        """
        path, spec = self._child_spec(name, operation, None, instance,
                                      None, network_info)
        child = subprocess.Popen(
            [sys.executable, '-m', 'nova.tests.functional.crash_child',
             path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        # Never leave it running if the test fails while it does.
        self.addCleanup(_kill_group, child)
        deadline = time.monotonic() + CHILD_TIMEOUT
        while child.poll() is None and time.monotonic() < deadline:
            if ready():
                _kill_group(child)
                break
            time.sleep(0.002)
        else:
            _kill_group(child)
            self.fail('the child of %s ended (status %s) before the '
                      'moment to kill it came' % (operation, child.poll()))
        return self._child_died(name, spec, child.returncode, '',
                                'from outside')

    def restart_after_crash(self, name):
        """A new compute service on what the crash left: rows, files, and
        the domains and VIFs the hypervisor still held."""
        return self.start_compute(
            name, domains=self.hosts[name].left_behind, running=True,
            vifs=[tuple(v) for v in self.left_vifs.pop(name, [])])

    # -- setting operations up as the API and conductor would -----------------

    def ports_on(self, host):
        """``network_info_for`` (``boot``): real ports of network
        ``public``, bound to ``host``."""
        def allocate(ctx, instance):
            network_info = self.ports.allocate_for_instance(
                ctx, instance, ['public'], host=host)
            instance.network_info = network_info
            instance.save()
            return network_info
        return allocate

    def boot(self, host='a', bridge=harness.BRIDGE, network_info_for=None):
        """An instance running on ``host``, with real ports there."""
        return super().boot(host, bridge, network_info_for=(
            network_info_for or self.ports_on(host)))

    def new_instance(self, host='a', image=None):
        """A row the API made for a build on ``host``: building, with an
        action and its ports (bound to ``host``), on no host yet (the
        build places it on the host that runs it, after that host's
        ``init_host``)."""
        ctx = nova_context.get_admin_context()
        instance = harness.dbf.make_instance(
            ctx, None, vm_state='building', task_state='scheduling',
            flavor=self.flavor, image_ref=(image or self.image).id)
        objects.InstanceAction.action_start(ctx, instance.uuid, 'create')
        network_info = self.ports_on(host)(ctx, instance)
        return instance, network_info

    def requested_evacuation(self, instance, target):
        """What the API and the conductor write before casting an
        evacuation of ``instance`` to ``target`` (not cast: the child
        runs it)."""
        ctx = nova_context.get_admin_context()
        instance = self.fresh(instance)
        instance.task_state = task_states.REBUILDING
        instance.save(expected_task_state=[None])
        objects.InstanceAction.action_start(ctx, instance.uuid, 'evacuate')
        return objects.Migration(
            ctx, instance_uuid=instance.uuid, source_compute=instance.host,
            source_node=instance.node, dest_compute=target,
            dest_node=target, migration_type=migration_obj.EVACUATION,
            status=migration_obj.ACCEPTED).create()

    # -- observations --------------------------------------------------------

    def part_files(self, name):
        found = []
        for root, _dirs, files in os.walk(self.instances_path(name)):
            found.extend(os.path.join(root, n) for n in files
                         if '.part-' in n)
        return found

    def open_journals(self, name):
        return journal.find(self.instances_path(name))

    def assertNoJournalsOrParts(self, name):
        self.assertEqual(([], []), self.open_journals(name))
        self.assertEqual([], self.part_files(name))

    def assertErrorWithFault(self, instance, host, operation):
        """ERROR on ``host``, no task, and a fault saying that a restart
        interrupted ``operation``."""
        row = self.fresh(instance)
        self.assertEqual((host, 'error', None),
                         (row.host, row.vm_state, row.task_state))
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIsNotNone(fault)
        self.assertIn('interrupted by a restart', fault.message)
        self.assertIn(operation, fault.message)

    def assertPortsBoundToItsHost(self, instance):
        """Every port of the instance bound to the host its row names
        (the only host whose network agent reports them)."""
        row = self.fresh(instance)
        ports = objects.Port.get_by_instance_uuid(self.ctx, instance.uuid)
        self.assertTrue(ports, 'the instance has no ports')
        self.assertEqual({row.host}, {p.binding_host for p in ports})

    def assertNoPartialDiskBooted(self, dumped=None):
        """No domain used a disk that is partial or not under its final
        name: neither those the hypervisor held at the kill (``dumped``,
        what ``crash`` returns) nor any on a running host now, whose
        disks must also be complete: named in ``disk.info`` with the
        format the domain gives QEMU, and a root disk with the whole
        content of its image (``qemu-img compare``; test-driver guests
        never write). Called after the restart and after the retry, it
        covers every domain a test ever booted."""
        for xml, _state in (dumped or {}).get('domains', ()):
            for path in libvirt_guest.disk_paths(xml):
                self.assertNotIn('.part-', os.path.basename(path))
        for host in self.hosts.values():
            if host.service._stopped.is_set():
                continue
            for guest in host.driver.host.list_guests():
                for path, fmt in _disks_of(guest.get_xml()):
                    self.assertCompleteDisk(host, guest.uuid, path, fmt)

    def assertCompleteDisk(self, host, uuid, path, fmt):
        name = os.path.basename(path)
        self.assertNotIn('.part-', name)
        self.assertTrue(os.path.isfile(path), 'no disk %s' % path)
        recorded = imagebackend.read_disk_info(
            os.path.join(os.path.dirname(path), 'disk.info')).formats
        self.assertEqual(fmt, recorded.get(name),
                         '%s: not the format disk.info records' % path)
        if name != 'disk':
            return
        row = objects.Instance.get_by_uuid(self.ctx, uuid,
                                           read_deleted='yes')
        image = self.images.get(row.image_ref)
        base = imagecache.ImageCache(
            host.sim.settings.instances_path).path_for(image.id)
        if fmt == 'qcow2':
            self.assertEqual(base, qemu_img.info(path, 'qcow2').backing_file)
        # Exit status 0: the same content (the grown end reads as zeros).
        processutils.execute('qemu-img', 'compare', '-U', '-f', fmt, '-F',
                             image.disk_format, path, base)


def _disks_of(xml):
    """[(source file, driver type)] of a domain's disks."""
    root = ET.fromstring(xml)
    return [(disk.find('source').get('file'), disk.find('driver').get('type'))
            for disk in root.findall('./devices/disk')
            if disk.find('source') is not None]


def _kill_group(child):
    """SIGKILL the process group of ``child`` (its session, made for it
    alone); wait for the child and until no process of the group runs
    any more (a zombie writes nothing)."""
    if child.returncode is not None:
        return
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait(CHILD_TIMEOUT)
    deadline = time.monotonic() + 10
    while _group_runs(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _group_runs(pgid):
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % pid) as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces.
        fields = stat[stat.rindex(')') + 2:].split()
        if int(fields[2]) == pgid and fields[0] != 'Z':
            return True
    return False
