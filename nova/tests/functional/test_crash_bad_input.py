"""Bad input on disk, end to end: a ``disk.info`` that does not say a
disk's format, and a spawn journal that cannot be trusted.

Each must end in a clear error, with nothing deleted (sha256 of every
file concerned) and nothing booted, and leave the instance in a state an
operator can act on. The units (``imagebackend.existing_format``,
``journal.SpawnJournal.load``) refuse such input; these tests prove that
the hard reboot, start, evacuation and restart built on them do too, on
the functional harness (``crash_harness``: real services, a real process
killed with SIGKILL for the journal cases).
"""

import glob
import hashlib
import json
import os

from nova import objects
from nova.objects import migration as migration_obj
from nova.tests.files import sha256_tree
from nova.tests.functional import crash_harness
from nova.virt import journal

UNKNOWN_FORMAT = json.dumps({'disk': 'vmdk'})     # not a format we use
NOT_LISTED = json.dumps({})                       # the disk not named


class BadInputTestCase(crash_harness.CrashTestCase):

    def set_disk_info(self, instance, content, host='a'):
        with open(os.path.join(self.hosts[host].instance_dir(instance),
                               'disk.info'), 'w') as f:
            f.write(content)

    def latest_fault(self, instance):
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIsNotNone(fault)
        return fault.message

    def wait_idle(self, instance, what):
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      '%s of %s' % (what, instance.uuid))
        return self.fresh(instance)


class TestDiskInfoWithoutTheFormat(BadInputTestCase):
    """A stopped instance whose ``disk.info`` does not give its disk's
    format is neither started nor hard-rebooted: the disk's format would
    have to be guessed from bytes a guest owns."""

    def test_start_and_hard_reboot_fail_clearly_and_boot_nothing(self):
        instance = self.boot('a')
        a = self.hosts['a']
        self.api.stop(self.ctx, self.fresh(instance))
        self.assertEqual('stopped', self.wait_idle(instance, 'stop').vm_state)
        definition = a.driver.host.get_guest(instance.uuid).get_xml()
        disk = os.path.join(a.instance_dir(instance), 'disk')

        for content, request, vm_state, reason in (
                (NOT_LISTED, 'start', 'stopped', 'does not list disk'),
                (UNKNOWN_FORMAT, 'reboot', 'error', "says 'vmdk'")):
            self.set_disk_info(instance, content)
            before = sha256_tree(a.instance_dir(instance))
            if request == 'start':
                self.api.start(self.ctx, self.fresh(instance))
            else:
                self.api.reboot(self.ctx, self.fresh(instance), 'HARD')
            row = self.wait_idle(instance, request)

            self.assertEqual(vm_state, row.vm_state)
            message = self.latest_fault(instance)
            self.assertIn('Disk %s has no recorded format' % disk, message)
            self.assertIn(reason, message)
            # Nothing booted, the definition not even replaced.
            self.assertFalse(a.running(instance))
            self.assertEqual(definition,
                             a.driver.host.get_guest(instance.uuid).get_xml())
            self.assertEqual(before, sha256_tree(a.instance_dir(instance)))
            self.assertPortsBoundToItsHost(instance)


class TestEvacuationReusingADiskWithoutTheFormat(BadInputTestCase):
    """On shared storage the target reuses the instance's disk; with no
    format recorded for it, the evacuation fails before anything runs."""

    SHARED = ('a', 'b')

    def test_evacuation_fails_clearly_and_keeps_every_file(self):
        instance = self.boot('a')
        a = self.kill('a')
        b = self.hosts['b']
        idir = a.instance_dir(instance)
        for content, reason in ((UNKNOWN_FORMAT, "says 'vmdk'"),
                                (NOT_LISTED, 'does not list disk')):
            self.set_disk_info(instance, content)
            before = sha256_tree(idir)

            migration = self.evacuate(instance, host='b')

            self.assertEqual(migration_obj.FAILED, migration.status)
            row = self.fresh(instance)
            self.assertEqual(('a', 'error'), (row.host, row.vm_state))
            message = self.latest_fault(instance)
            self.assertIn('Disk %s has no recorded format'
                          % os.path.join(b.instance_dir(instance), 'disk'),
                          message)
            self.assertIn(reason, message)
            # No domain defined, no VIF left on b; every file as it was
            # (the stamp and disk.info the attempt rewrote put back).
            self.assertNoTrace(b, instance, disks_gone=False)
            self.assertEqual(before, sha256_tree(idir))
            self.assertNoJournalsOrParts('b')
            self.assertPortsBoundToItsHost(instance)


class TestJournalsThatCannotBeTrusted(BadInputTestCase):
    """A build on ``a`` is killed; its journal is then made untrustworthy
    (what a disk error, a bug or a tenant-controlled path could leave);
    ``a`` restarts. The journal is kept and reported, nothing of it is
    undone, nothing is deleted and nothing is booted; the instance is
    ERROR with a fault, on its host, where an operator can rebuild or
    delete it once they looked."""

    def crash_build(self, point):
        bystander = self.boot('a')
        instance, network_info = self.new_instance()
        dumped = self.crash('a', 'build', point, instance=instance,
                            network_info=network_info)
        [path] = glob.glob(os.path.join(
            journal.journal_dir(self.instances_path('a')),
            '%s.*.json' % instance.uuid))
        return bystander, instance, dumped, path

    def restart_reporting(self, path):
        """Restart ``a``; the error it logs about the journal."""
        with self.assertLogs('nova.compute.recovery', 'ERROR') as logs:
            a = self.restart_after_crash('a')
        [message] = [r.getMessage() for r in logs.records
                     if path in r.getMessage()]
        self.assertIn('cannot be read', message)
        return a, message

    def assertNothingUndone(self, a, instance, bystander, files, path,
                            content):
        self.assertErrorWithFault(instance, 'a', 'build')
        with open(path, 'rb') as f:
            self.assertEqual(content, f.read())            # kept as it was
        for where, digest in files.items():
            self.assertEqual(digest, _sha256(where), where)
        self.assertFalse(a.running(instance))
        self.assertTrue(a.running(bystander))
        self.assertPortsBoundToItsHost(instance)
        self.assertPortsBoundToItsHost(bystander)

    def test_a_journal_naming_a_path_outside_the_instance_directory(self):
        bystander, instance, dumped, path = self.crash_build(
            'spawn.after_disk_info')
        decoy = os.path.join(self.tmp, 'decoy')
        with open(decoy, 'wb') as f:
            f.write(b'not an instance file')
        a = self.hosts['a']
        with open(path) as f:
            values = json.load(f)
        # A file it "created" elsewhere: an absolute path, and another
        # instance's disk.
        values['entries'] += [
            dict(kind='create', name=decoy),
            dict(kind='create', name='../%s/disk' % bystander.uuid)]
        content = json.dumps(values).encode()
        with open(path, 'wb') as f:
            f.write(content)
        files = {d: _sha256(d) for d in (
            a.instance_dir(instance), a.instance_dir(bystander), decoy)}

        a, message = self.restart_reporting(path)

        self.assertIn('not a file of the instance directory', message)
        self.assertIn(decoy, message)
        self.assertNothingUndone(a, instance, bystander, files, path,
                                 content)
        self.assertFalse(a.has_domain(instance))
        self.assertNoPartialDiskBooted(dumped)

    def test_a_truncated_journal(self):
        # Killed with the root disk under its .part- name: the restart
        # must not remove even that, the journal that says whose it is
        # being unreadable.
        bystander, instance, dumped, path = self.crash_build(
            'spawn.writing_root_disk')
        a = self.hosts['a']
        with open(path, 'rb') as f:
            content = f.read()[:200]
        with open(path, 'wb') as f:
            f.write(content)
        idir = a.instance_dir(instance)
        files = {d: _sha256(d) for d in (
            idir, a.instance_dir(bystander))}
        self.assertEqual(1, len([n for n in files[idir] if '.part-' in n]))

        a, message = self.restart_reporting(path)

        self.assertIn('not a journal', message)
        self.assertNothingUndone(a, instance, bystander, files, path,
                                 content)
        self.assertFalse(a.has_domain(instance))
        self.assertNoPartialDiskBooted(dumped)

    def test_a_garbage_journal(self):
        # Killed with the domain defined, not started: it stays so.
        bystander, instance, dumped, path = self.crash_build(
            'start.after_define')
        a = self.hosts['a']
        content = b'\x00\xff garbage \x89PNG\r\n'
        with open(path, 'wb') as f:
            f.write(content)
        files = {d: _sha256(d) for d in (
            a.instance_dir(instance), a.instance_dir(bystander))}

        a, message = self.restart_reporting(path)

        self.assertIn('not a journal', message)
        self.assertNothingUndone(a, instance, bystander, files, path,
                                 content)
        self.assertNoPartialDiskBooted(dumped)
        # What the operator can do once they looked: rebuild it.
        self.api.rebuild(self.ctx, self.fresh(instance))
        row = self.wait_idle(instance, 'rebuild')
        self.assertEqual(('a', 'active'), (row.host, row.vm_state))
        self.assertTrue(a.running(instance))
        self.assertNoPartialDiskBooted()


def _sha256(path):
    """sha256_tree of a directory; of a single file, {'': its sha256};
    None when nothing is there."""
    if not os.path.lexists(path):
        return None
    if os.path.isdir(path):
        return sha256_tree(path)
    with open(path, 'rb') as f:
        return {'': hashlib.sha256(f.read()).hexdigest()}
