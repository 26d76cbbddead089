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

``stall(host, operation, point, ...)`` runs the operation in the same
kind of child, which stops itself (SIGSTOP) at the point instead
(``[fault_injection] stall_point``): a host cut off or hung there. The
``StoppedTarget`` of ``stop_target`` is either: what its hypervisor holds,
the operator's fence, and its return (a restart after a kill, SIGCONT
after a stall).

Observations every crash test makes: no domain or VIF of the instance
where it does not belong (``assertNoTrace``), no spawn journal left open
and no ``.part-`` file anywhere (``assertNoJournalsOrParts``), the disks
that existed before byte for byte as they were, the ports bound to the
instance's host (``assertPortsBoundToItsHost``), and no domain, at the
kill or since, using a disk that is not complete under its final name
(``assertNoPartialDiskBooted``).

The invariants of the operator's recovery (``test_crash_recovery_matrix``)
are assertions here too: at most one running or paused domain per disk
file of the instance, by inode, over every hypervisor the test knows
(``assertOneRunningDomainPerDisk``); a disk file held open by the test
neither removed, replaced nor changed (``keep_disk``,
``assertDiskKept``); the instance ACTIVE on exactly one host
(``assertActiveOnlyOn``) or refused with a fault that says what to do
(``assertRefusedUntilFenced``); nothing of it left on a host that came
back (``assertNothingLeftOn``).
"""

import collections
import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from oslo_concurrency import processutils

from nova.compute import rpcapi as compute_rpcapi
from nova import context as nova_context
from nova.image import qemu_img
from nova.model import power_state
from nova.model import task_states
from nova.network import api as network_api
from nova import objects
from nova.objects import attempt as attempt_obj
from nova.objects import migration as migration_obj
from nova.tests.fixtures import database as dbf
from nova.tests.functional import crash_child
from nova.tests.functional import evacuate_harness as harness
from nova.virt import instancedir
from nova.virt import journal
from nova.virt.libvirt import guest as libvirt_guest
from nova.virt.libvirt import imagebackend
from nova.virt.libvirt import imagecache
from nova.virt import ownership

CHILD_TIMEOUT = 120

# How a target stops in the middle of an operation.
KILLED = 'killed'           # kill -9 at the point (a crash, a power cut)
STALLED = 'stalled'         # SIGSTOP at the point (cut off, hung)
# The power states of a guest whose QEMU has its disks open and may
# write them (a paused guest resumes where it stopped).
LIVE = (power_state.RUNNING, power_state.PAUSED)


class CrashTestCase(harness.EvacuateTestCase):

    def setUp(self):
        self.left_vifs = {}
        self._crashes = 0
        # Stopped hosts whose guests are taken at the operator's word
        # (``StoppedTarget.fence`` of a stalled one): not counted by
        # ``assertOneRunningDomainPerDisk`` while they stay stopped.
        self.taken_at_word = set()
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
                    network_info, stall_point=None):
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
            'stall_point': stall_point,
            'operation': operation, 'log': prefix + '.log',
            'dump': prefix + '.dump', 'held': prefix + '.held',
            'reaped': prefix + '.reaped',
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

    def stall(self, name, operation, point, instance=None, migration=None,
              network_info=None):
        """Run ``operation`` for host ``name`` in a child process that
        stops itself (SIGSTOP) at ``point``; (the child, its spec, what
        its hypervisor held when it stopped). The host's in-process
        service is stopped first (and stays stopped). ``resume`` sends
        SIGCONT and waits for the child to finish."""
        path, spec = self._child_spec(name, operation, None, instance,
                                      migration, network_info,
                                      stall_point=point)
        # Its output to a file: a pipe nobody reads while it runs could
        # fill up and hold it.
        with open(spec['log'] + '.out', 'wb') as out:
            child = subprocess.Popen(
                [sys.executable, '-m', 'nova.tests.functional.crash_child',
                 path], stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        # Never leave it stopped or running if the test fails meanwhile.
        self.addCleanup(_kill_group, child)
        deadline = time.monotonic() + CHILD_TIMEOUT
        while child.poll() is None and _process_state(child.pid) != 'T':
            if time.monotonic() > deadline:
                self.fail('the child never reached %s' % point)
            time.sleep(0.01)
        if child.poll() is not None:
            self.fail('the child ended (status %s) before %s:\n%s\n%s'
                      % (child.returncode, point,
                         _read(spec['log'] + '.out'), _read(spec['log'])))
        with open(spec['held']) as f:
            held = json.load(f)
        host = self.hosts[name]
        host.left_behind = [tuple(d) for d in held['domains']]
        self.left_vifs[name] = [tuple(v) for v in held['vifs']]
        return child, spec, held

    def resume(self, name, child, spec):
        """SIGCONT to a child ``stall`` stopped; wait until it finished
        its operation and one run of its reaper; (what its hypervisor
        held once the operation ended, and after the reaper), each with
        ``after``, the crash points it passed once continued, and
        ``error``, the exception its operation ended with."""
        os.kill(child.pid, signal.SIGCONT)
        try:
            child.wait(timeout=CHILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            _kill_group(child)
            self.fail('the child of %s never finished once continued:\n%s'
                      % (name, _read(spec['log'])))
        self.assertEqual(
            crash_child.EXIT_RESUMED, child.returncode,
            'the continued child ended with status %s:\n%s\n%s'
            % (child.returncode, _read(spec['log'] + '.out'),
               _read(spec['log'])))
        dumps = []
        for key in ('dump', 'reaped'):
            with open(spec[key]) as f:
                dumps.append(json.load(f))
        host = self.hosts[name]
        host.left_behind = [tuple(d) for d in dumps[1]['domains']]
        self.left_vifs[name] = [tuple(v) for v in dumps[1]['vifs']]
        return dumps

    def stop_target(self, name, how, point, instance, migration):
        """The evacuation ``migration`` of ``instance`` runs on ``name`` in
        a child that stops at ``point``, ``how`` (``KILLED``,
        ``STALLED``); its ``StoppedTarget``."""
        return StoppedTarget(self, name, how, point, instance, migration)

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

    def never_built(self, host='a'):
        """An instance whose first build on ``host`` failed (the host
        lacked the bridge), so that failure removed what it made: on
        shared storage the only kind whose evacuation writes a root
        disk."""
        node = self.hosts[host]
        node.sim.remove_bridge(harness.BRIDGE)
        instance, network_info = self.new_instance(host)
        compute_rpcapi.ComputeAPI().build_and_run_instance(
            self.ctx, instance, host=host, image_meta=self.image,
            network_info=network_info)
        self.wait_for(lambda: self.fresh(instance).vm_state == 'error',
                      'the failed build')
        self.assertFalse(os.path.exists(node.instance_dir(instance)))
        self.assertFalse(self.fresh(instance).disks_exist)
        return instance

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

    def force_down(self, name, forced=True):
        """``nova service-force-down NAME nova-compute``."""
        service = objects.Service.get_by_host_and_binary(
            self.ctx, name, 'nova-compute')
        service.forced_down = forced
        service.save()

    def set_down(self, name):
        """``name``'s last heartbeat is long ago: it counts as down."""
        dbf.set_down(objects.Service.get_by_host_and_binary(
            self.ctx, name, 'nova-compute'))

    def power_cut(self, name):
        """The compute service of ``name`` dies with its host: the guests
        its hypervisor held are off (a host that boots again finds them
        defined and shut off) and its taps are gone."""
        host = self.kill(name)
        host.left_behind = [(xml, power_state.SHUTDOWN)
                            for xml, _state in host.left_behind]
        self.left_vifs[name] = []
        return host

    def hypervisor_of(self, name):
        """{'domains': [(xml, power state)], 'vifs': [(uuid, port)]}: what
        the hypervisor of ``name`` holds, as far as the test can know: a
        running service's own, or what a stopped one's kept (a killed
        service's hypervisor outlives it; a stalled child's is what it
        held when it stopped, or when it finished)."""
        host = self.hosts[name]
        if not host.service._stopped.is_set():
            held = crash_child.held_by(host.sim)
            return {'domains': [tuple(d) for d in held['domains']],
                    'vifs': [tuple(v) for v in held['vifs']]}
        return {'domains': list(host.left_behind),
                'vifs': list(self.left_vifs.get(name, []))}

    def live_domains(self, instance, name):
        """The running or paused domains of ``instance`` on ``name``."""
        return [xml for xml, state in self.hypervisor_of(name)['domains']
                if domain_uuid(xml) == instance.uuid and state in LIVE]

    def assertOneRunningDomainPerDisk(self, instance):
        """At most one running or paused domain uses each disk file of
        ``instance``: the files (by device and inode) of the disks of its
        domains, over every host's hypervisor the test knows of
        (``hypervisor_of``), save those of a stopped host taken at the
        operator's word (``taken_at_word``)."""
        users = collections.defaultdict(list)
        for name, host in sorted(self.hosts.items()):
            if name in self.taken_at_word and \
                    host.service._stopped.is_set():
                continue
            for xml in self.live_domains(instance, name):
                for path in libvirt_guest.disk_paths(xml):
                    users[file_key(path)].append('%s:%s' % (name, path))
        self.assertEqual({}, {key: hosts for key, hosts in users.items()
                              if len(hosts) > 1},
                         'one disk file used by two live domains')

    def running_on(self, instance):
        """The hosts whose hypervisor runs a domain of ``instance``."""
        return [name for name in sorted(self.hosts)
                if self.live_domains(instance, name)]

    def keep_disk(self, path):
        """Hold ``path`` open and remember its identity and content
        (``KeptDisk``): while the test holds it, its inode cannot be
        reused, so a file removed and made again is told from the very
        file."""
        fd = os.open(path, os.O_RDONLY)
        self.addCleanup(os.close, fd)
        stat = os.fstat(fd)
        return KeptDisk(path, fd, stat.st_dev, stat.st_ino,
                        _sha256_fd(fd))

    def assertDiskKept(self, kept):
        """The file ``keep_disk`` held is still there under its name
        (never removed, replaced or moved into quarantine) with the same
        content."""
        stat = os.fstat(kept.fd)
        self.assertGreater(stat.st_nlink, 0, '%s was removed' % kept.path)
        self.assertEqual((kept.dev, kept.ino), file_key(kept.path),
                         '%s was replaced by another file' % kept.path)
        self.assertEqual(kept.sha256, _sha256_fd(kept.fd),
                         '%s was changed' % kept.path)

    def assertNothingQuarantined(self, instance):
        """No directory of ``instance`` in any host's quarantine."""
        for name in sorted(self.hosts):
            found, _other = instancedir.list_quarantine(
                self.instances_path(name))
            self.assertEqual([], [q.path for q in found
                                  if q.instance_uuid == instance.uuid],
                             'quarantined on %s' % name)

    def disk_of(self, instance, name):
        """The root disk file ``name``'s domain of ``instance`` uses."""
        xml = self.hosts[name].driver.host.get_guest(instance.uuid).get_xml()
        return [path for path in libvirt_guest.disk_paths(xml)
                if os.path.basename(path) == instancedir.DISK][0]

    def stamp_host(self, instance, name):
        """The host the ownership stamp of ``instance``'s directory on
        ``name``'s storage names; None without one."""
        stamp = ownership.read(instancedir.InstanceDir(
            self.instances_path(name), instance.uuid))
        return None if stamp is None else stamp.host

    def assertActiveOnlyOn(self, name, instance, migration):
        """ACTIVE on ``name``, ``migration`` done, no token left, and no
        other host's hypervisor runs a domain of it."""
        self.assertLandedOn(name, instance, migration)
        self.assertIsNone(self.fresh(instance).attempt_id)
        self.assertEqual([name], self.running_on(instance))

    def assertRefusedUntilFenced(self, instance, migration, source,
                                 stamped_by):
        """The evacuation was refused for the stamp of ``stamped_by``:
        ERROR on ``source``, no task, the migration failed, no domain of
        the instance on its target, and a fault that says what unblocks
        it."""
        row = self.fresh(instance)
        self.assertEqual((source, 'error', None),
                         (row.host, row.vm_state, row.task_state))
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIn('%s may still run the guest' % stamped_by,
                      fault.message)
        self.assertIn('nova service-force-down %s nova-compute'
                      % stamped_by, fault.message)
        self.assertFalse(self.hosts[migration.dest_compute].has_domain(
            instance))
        # The ports went back to the instance's host with the reset-state
        # before the refusal (the given-up evacuation had bound them to
        # its target).
        self.assertPortsBoundToItsHost(instance)

    def assertNothingLeftOn(self, name, instance, held, disks_gone=True):
        """In ``held`` (what ``name``'s hypervisor holds: ``hypervisor_of``
        or a child's dump) no domain and no VIF of ``instance``; on its
        storage no journal of ``name`` for it and no ``.part-`` file of
        it; with ``disks_gone``, no directory of it there."""
        self.assertEqual([], [xml for xml, _state in held['domains']
                              if domain_uuid(xml) == instance.uuid],
                         'domain left on %s' % name)
        self.assertEqual([], [tuple(v) for v in held['vifs']
                              if v[0] == instance.uuid],
                         'VIF left on %s' % name)
        path = self.instances_path(name)
        self.assertEqual([], [j for j in journal.find(path, name)[0]
                              if j.idir.uuid == instance.uuid])
        idir = os.path.join(path, instance.uuid)
        self.assertEqual([], [p for p in self.part_files(name)
                              if p.startswith(idir + os.sep)])
        if disks_gone:
            self.assertFalse(os.path.exists(idir),
                             'instance directory left on %s' % name)

    def assertAttemptsOfDidNotLand(self, instance, name):
        """Every attempt ``name`` claimed on ``instance`` did not land."""
        rows = [row for row in objects.InstanceAttempt.get_by_instance(
            self.ctx, instance.uuid) if row.host == name]
        self.assertTrue(rows, '%s claimed no attempt' % name)
        self.assertEqual([], [row.uuid for row in rows
                              if row.status == attempt_obj.LANDED])

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


@dataclasses.dataclass(frozen=True)
class KeptDisk:
    """A disk file the test holds open (``CrashTestCase.keep_disk``)."""
    path: str
    fd: int
    dev: int
    ino: int
    sha256: str


class StoppedTarget:
    """The target of an evacuation stopped at a crash point in a child
    process, killed or stalled (``CrashTestCase.stop_target``).

    ``held``: what its hypervisor held when it stopped (domains, VIFs).
    ``fence()``: what the operator does before forcing it down.
    ``come_back()``: its return; then ``ended`` is what its hypervisor
    holds once the stale attempt is over (a stalled one's, before its
    reaper runs) and ``after`` the crash points it passed once continued
    (a stalled one only).
    """

    def __init__(self, test, name, how, point, instance, migration):
        self.test = test
        self.name = name
        self.how = how
        self.point = point
        self.fenced = False
        self.after = []
        self.ended = self.reaped = None
        if how == KILLED:
            self.held = test.crash(name, 'evacuate', point,
                                   instance=instance, migration=migration)
        elif how == STALLED:
            self._child, self._spec, self.held = test.stall(
                name, 'evacuate', point, instance=instance,
                migration=migration)
        else:
            raise ValueError(how)

    def fence(self):
        """The operator fences the host and says so: ``nova
        service-force-down``. A killed host is powered off, as a fence
        does: the guests its hypervisor kept stop, its taps go (the
        statement is true). A stalled host is a child process stopped
        with its hypervisor inside: the harness cannot power its guests
        off, so they are taken at the operator's word while it stays
        stopped (``taken_at_word``); what it does once it goes on is the
        product's to answer for."""
        host = self.test.hosts[self.name]
        if self.how == KILLED:
            host.left_behind = [(xml, power_state.SHUTDOWN)
                                for xml, _state in host.left_behind]
            self.test.left_vifs[self.name] = []
        else:
            self.test.taken_at_word.add(self.name)
        self.test.force_down(self.name)
        self.fenced = True

    def come_back(self):
        """A killed host starts again on what it left
        (``restart_after_crash``; a fenced one as a host that booted:
        its guests off); a stalled one goes on (SIGCONT), finishes its
        operation, and its reaper runs once."""
        if self.how == KILLED:
            self.test.restart_after_crash(self.name)
            self.ended = self.reaped = self.test.hypervisor_of(self.name)
        else:
            self.ended, self.reaped = self.test.resume(
                self.name, self._child, self._spec)
            self.after = self.ended['after']
        self.test.taken_at_word.discard(self.name)
        return self.ended


def domain_uuid(xml):
    """The UUID of a domain (its instance's)."""
    return ET.fromstring(xml).findtext('uuid')


def file_key(path):
    """(device, inode) of ``path``; ('missing', path) when it is gone."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return ('missing', path)
    return (stat.st_dev, stat.st_ino)


def _sha256_fd(fd):
    digest = hashlib.sha256()
    offset = 0
    while True:
        block = os.pread(fd, 1024 * 1024, offset)
        if not block:
            return digest.hexdigest()
        digest.update(block)
        offset += len(block)


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ''


def _process_state(pid):
    """The state letter of process ``pid`` (R, S, T, Z ...); None once it
    is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0]
    except OSError:
        return None


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
