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

Observations every crash test makes (``assertClean``): no domain or VIF of
the instance where it does not belong, no spawn journal left open, no
``.part-`` file anywhere, and the disks that existed before byte for byte
as they were.
"""

import json
import os
import signal
import subprocess
import sys

from nova import context as nova_context
from nova import objects
from nova.objects import migration as migration_obj
from nova.compute import task_states
from nova.tests.functional import crash_child
from nova.tests.functional import evacuate_harness as harness
from nova.virt import journal

CHILD_TIMEOUT = 120


class CrashTestCase(harness.EvacuateTestCase):

    def setUp(self):
        self.left_vifs = {}
        self._crashes = 0
        super().setUp()
        self.db_url = 'sqlite:///' + os.path.join(self.tmp, 'nova.sqlite')

    def kill(self, name):
        host = self.hosts[name]
        self.left_vifs[name] = crash_child.held_by(host.sim)['vifs']
        return super().kill(name)

    # -- crashing ------------------------------------------------------------

    def crash(self, name, operation, point, instance=None, migration=None,
              network_info=None):
        """Run ``operation`` for host ``name`` in a child process that dies
        at crash point ``point``; the host's in-process service is
        stopped first (and stays stopped)."""
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
            'image': self.image.id,
            'network_info': network_info.to_list()
            if network_info is not None else None,
        }
        with open(prefix + '.json', 'w') as f:
            json.dump(spec, f)
        child = subprocess.run(
            [sys.executable, '-m', 'nova.tests.functional.crash_child',
             prefix + '.json'], timeout=CHILD_TIMEOUT,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        log = ''
        if os.path.exists(spec['log']):
            with open(spec['log']) as f:
                log = f.read()
        self.assertEqual(
            -signal.SIGKILL, child.returncode,
            'the child did not die at %s (status %s):\n%s\n%s'
            % (point, child.returncode, child.stdout.decode(), log))
        with open(spec['dump']) as f:
            dumped = json.load(f)
        host.left_behind = [tuple(d) for d in dumped['domains']]
        self.left_vifs[name] = [tuple(v) for v in dumped['vifs']]
        return dumped

    def restart_after_crash(self, name):
        """A new compute service on what the crash left: rows, files, and
        the domains and VIFs the hypervisor still held."""
        return self.start_compute(
            name, domains=self.hosts[name].left_behind, running=True,
            vifs=[tuple(v) for v in self.left_vifs.pop(name, [])])

    # -- setting operations up as the API and conductor would -----------------

    def new_instance(self):
        """A row the API made for a build: building, with an action and
        its VIFs, on no host yet (the build places it on the host that
        runs it, after that host's ``init_host``)."""
        ctx = nova_context.get_admin_context()
        instance = harness.dbf.make_instance(
            ctx, None, vm_state='building', task_state='scheduling',
            flavor=self.flavor, image_ref=self.image.id)
        objects.InstanceAction.action_start(ctx, instance.uuid, 'create')
        network_info = self.network_info()
        instance.network_info = network_info
        instance.save()
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
