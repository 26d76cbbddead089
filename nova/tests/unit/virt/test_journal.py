"""The on-disk journal of a spawn attempt, and undoing from it."""

import json
import os

from oslo_utils import uuidutils

from nova import exception
from nova.model import network as network_model
from nova.tests import base
from nova.tests.files import sha256_tree
from nova.virt import instancedir
from nova.virt import journal
from nova.virt import ownership


class JournalTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.root = os.path.join(self.tmp, 'instances')
        os.makedirs(self.root)
        self.idir = instancedir.InstanceDir(self.root,
                                            uuidutils.generate_uuid())

    def begin(self, operation='build', host='a'):
        return journal.SpawnJournal.begin(
            self.idir, host, journal.Attempt.new(operation))

    def make(self, j, name, content=b'data'):
        part = j.creating(name)
        with open(part, 'wb') as f:
            f.write(content)
        return j.commit(name)

    def reload(self, j):
        """The journal as a restart reads it."""
        return journal.SpawnJournal.load(self.root, j.path)


class TestJournal(JournalTestCase):

    def test_what_is_about_to_be_made_is_on_disk_first(self):
        j = self.begin()
        self.assertTrue(j.make_dir())
        j.creating('disk')
        on_disk = self.reload(j)
        self.assertEqual(['mkdir', 'create'],
                         [e['kind'] for e in on_disk.entries])
        # Announced but not written yet: nothing under the final name.
        self.assertFalse(os.path.exists(self.idir.file('disk')))

    def test_a_file_has_its_final_name_only_once_complete(self):
        j = self.begin()
        j.make_dir()
        part = j.creating('disk')
        with open(part, 'wb') as f:
            f.write(b'half')
        self.assertEqual([os.path.basename(part)],
                         os.listdir(self.idir.path))
        j.commit('disk')
        self.assertEqual(['disk'], os.listdir(self.idir.path))

    def test_undo_after_a_crash_removes_exactly_what_it_made(self):
        self.idir.create()
        with open(self.idir.file('disk'), 'wb') as f:
            f.write(b'the instance\'s own disk')
        with open(self.idir.file('disk.info'), 'w') as f:
            f.write('{"disk": "qcow2"}')
        before = sha256_tree(self.idir.path)
        j = self.begin(operation='evacuation')
        self.assertFalse(j.make_dir())
        self.make(j, 'disk.eph0')
        j.write_file('disk.info', '{"disk": "qcow2", "disk.eph0": "raw"}')
        with open(j.creating('console.log'), 'w') as f:
            f.write('partial')
        guests = []
        # The process dies here: a new one reads the journal and undoes.
        self.reload(j).undo(lambda: guests.append('destroyed'))
        self.assertEqual(before, sha256_tree(self.idir.path))
        self.assertEqual([], guests)          # it never started a guest
        self.assertFalse(os.path.exists(j.path))

    def test_undo_removes_a_directory_it_made(self):
        j = self.begin()
        j.make_dir()
        self.make(j, 'disk')
        j.write_file(instancedir.OWNER_STAMP, '{}')
        j.starting_guest()
        guests = []
        self.reload(j).undo(lambda: guests.append('destroyed'))
        self.assertFalse(os.path.lexists(self.idir.path))
        self.assertEqual(['destroyed'], guests)

    def test_undo_quarantines_a_directory_holding_what_it_did_not_make(self):
        j = self.begin()
        j.make_dir()
        self.make(j, 'disk')
        with open(self.idir.file('unexpected'), 'w') as f:
            f.write('not recorded by the attempt')
        self.reload(j).undo()
        self.assertFalse(os.path.lexists(self.idir.path))
        found, _ = instancedir.list_quarantine(self.root)
        self.assertEqual([self.idir.uuid], [q.instance_uuid for q in found])
        self.assertEqual(['.nova-quarantine', 'unexpected'],
                         sorted(os.listdir(found[0].path)))

    def stamp(self, j, host):
        """Stamp the directory as ``j``'s attempt on ``host`` would."""
        j.write_file(ownership.STAMP, ownership.OwnerStamp.new(
            self.idir.uuid, host, 'storage-1', j.attempt.operation,
            j.attempt.id, j.attempt.migration).to_json())

    def test_a_directory_another_attempt_adopted_is_left_to_it(self):
        # Shared storage: b's attempt made the directory and is stale; c's
        # attempt adopted it (its stamp, its files, the disk b made) and
        # runs from it. b's undo takes back only its unfinished .part-
        # file: not the directory, not the disk, not c's stamp.
        stale = self.begin(operation='evacuation', host='b')
        self.assertTrue(stale.make_dir())
        self.stamp(stale, 'b')
        self.make(stale, 'disk', b'the disk c now runs')
        with open(stale.creating('disk.eph0'), 'wb') as f:
            f.write(b'half an ephemeral disk')
        winner = self.begin(operation='evacuation', host='c')
        self.assertFalse(winner.make_dir())
        self.stamp(winner, 'c')
        winner.write_file('disk.info', '{"disk": "qcow2"}')
        winner.complete()
        before = sha256_tree(self.idir.path)
        self.assertIn('disk.eph0.part-%s' % stale.attempt.id, before)

        self.reload(stale).undo()
        after = sha256_tree(self.idir.path)
        del before['disk.eph0.part-%s' % stale.attempt.id]
        self.assertEqual(before, after)
        self.assertEqual(('c', winner.attempt.id), (
            ownership.read(self.idir).host,
            ownership.read(self.idir).attempt))
        self.assertFalse(os.path.exists(stale.path))
        self.assertEqual([], instancedir.list_quarantine(self.root)[0])

    def test_its_own_stamp_still_there_the_attempt_is_undone(self):
        # The same attempt with no one adopting its directory since: the
        # stamp is its own, so it removes what it made, the directory too.
        j = self.begin(operation='evacuation', host='b')
        j.make_dir()
        self.stamp(j, 'b')
        self.make(j, 'disk')
        self.reload(j).undo()
        self.assertFalse(os.path.lexists(self.idir.path))

    def test_an_undo_cut_short_after_restoring_the_stamp_goes_on(self):
        # Shared storage: the source's directory, stamped by the source;
        # b's evacuation attempt re-stamps it and makes an ephemeral
        # disk. Its undo puts the source's stamp back, then dies before
        # it removes the disk. The next pass must not take the source's
        # stamp for an adoption: the disk b made still goes.
        self.idir.create()
        with open(self.idir.file('disk'), 'wb') as f:
            f.write(b'the instance\'s own disk')
        source = self.begin(operation='build', host='a')
        self.stamp(source, 'a')
        source.complete()
        before = sha256_tree(self.idir.path)
        j = self.begin(operation='evacuation', host='b')
        self.assertFalse(j.make_dir())
        self.stamp(j, 'b')
        self.make(j, 'disk.eph0', b'made by b')
        # The first pass gets as far as the stamp, in the undo's order,
        # and dies there.
        reloaded = self.reload(j)
        for entry in reversed(reloaded.entries):
            if entry['kind'] == journal.REWRITE:
                reloaded._undo_entry(entry)
                break
        self.assertEqual('a', ownership.read(self.idir).host)
        self.assertTrue(os.path.exists(self.idir.file('disk.eph0')))

        self.reload(j).undo()
        self.assertEqual(before, sha256_tree(self.idir.path))
        self.assertFalse(os.path.exists(j.path))

    def test_keep_files_takes_back_only_the_part_files(self):
        # The database says a later attempt claimed the instance on this
        # storage: the directory is its to decide.
        j = journal.SpawnJournal.begin(
            self.idir, 'b', journal.Attempt.new('evacuation'), guest=True)
        j.make_dir()
        self.stamp(j, 'b')
        self.make(j, 'disk', b'a disk')
        with open(j.creating('disk.eph0'), 'wb') as f:
            f.write(b'half')
        guests = []
        self.reload(j).undo(lambda: guests.append('destroyed'),
                            keep_files='c claimed it since')
        self.assertEqual(['.nova-owner', 'disk'],
                         sorted(os.listdir(self.idir.path)))
        self.assertEqual(['destroyed'], guests)
        self.assertFalse(os.path.exists(j.path))

    def test_the_vifs_a_guest_plugs_are_recorded(self):
        # So that a restart unplugs them even when the instance's row
        # (its network_info) is gone.
        vifs = network_model.NetworkInfo([network_model.VIF(
            id='port-1', address='fa:16:3e:00:00:01',
            network=network_model.Network(id='n1', label='public',
                                          bridge='br0'))])
        j = journal.SpawnJournal.begin(
            self.idir, 'a', journal.Attempt.new('build'), guest=True,
            vifs=vifs)
        self.assertEqual(['port-1'],
                         [v.id for v in self.reload(j).guest_vifs()])

    def test_every_write_checks_the_token_first(self):
        lost = []

        def check(step):
            if lost:
                raise exception.AttemptSuperseded(
                    attempt='x', instance_uuid=self.idir.uuid,
                    why='reset-state', step=step, expected='x', actual=None)

        j = journal.SpawnJournal.begin(
            self.idir, 'a', journal.Attempt.new('build').checked_by(check))
        j.make_dir()
        lost.append(True)
        self.assertRaises(exception.AttemptSuperseded, j.creating, 'disk')
        self.assertRaises(exception.AttemptSuperseded, j.write_file,
                          'disk.info', '{}')
        self.assertEqual([], os.listdir(self.idir.path))
        self.assertEqual(['mkdir'], [e['kind'] for e in
                                     self.reload(j).entries])

    def test_a_file_gets_its_final_name_only_while_the_token_holds(self):
        # The attempt lost its token while it wrote its disk (stalled);
        # meanwhile the new owner made the disk under its final name.
        lost = []

        def check(step):
            if lost:
                raise exception.AttemptSuperseded(
                    attempt='x', instance_uuid=self.idir.uuid,
                    why='reset-state', step=step, expected='x', actual=None)

        j = journal.SpawnJournal.begin(
            self.idir, 'a', journal.Attempt.new('build').checked_by(check))
        j.make_dir()
        part = j.creating('disk')
        with open(part, 'wb') as f:
            f.write(b'stale')
        lost.append(True)
        with open(self.idir.file('disk'), 'wb') as f:
            f.write(b'the owner\'s')
        self.assertRaises(exception.AttemptSuperseded, j.commit, 'disk')
        with open(self.idir.file('disk'), 'rb') as f:
            self.assertEqual(b'the owner\'s', f.read())
        self.assertTrue(os.path.exists(part))

    def test_commit_never_replaces_a_file_made_meanwhile(self):
        # Shared storage: this attempt began while there was no disk; the
        # attempt that took the instance over made one since and runs
        # from it. Even past its token check, this one never replaces it.
        j = self.begin(operation='evacuation', host='b')
        j.make_dir()
        self.stamp(j, 'b')
        with open(j.creating('disk'), 'wb') as f:
            f.write(b'the stale attempt\'s disk')
        owner = self.begin(operation='evacuation', host='c')
        owner.make_dir()
        self.stamp(owner, 'c')
        self.make(owner, 'disk', b'the new owner\'s disk')
        owner.complete()
        inode = os.stat(self.idir.file('disk')).st_ino
        self.assertRaises(exception.FileMadeElsewhere, j.commit, 'disk')
        # Nor does its undo, crash or not: the name is not its own.
        self.reload(j).undo()
        self.assertEqual(['.nova-owner', 'disk'],
                         sorted(os.listdir(self.idir.path)))
        self.assertEqual(inode, os.stat(self.idir.file('disk')).st_ino)
        with open(self.idir.file('disk'), 'rb') as f:
            self.assertEqual(b'the new owner\'s disk', f.read())

    def test_complete_forgets_the_journal(self):
        j = self.begin()
        j.make_dir()
        self.make(j, 'disk')
        j.complete()
        self.assertFalse(os.path.exists(j.path))
        self.assertEqual(['disk'], os.listdir(self.idir.path))

    def test_find_lists_a_hosts_open_journals(self):
        mine = self.begin(host='a')
        theirs = self.begin(host='b')
        found, unreadable = journal.find(self.root, 'a')
        self.assertEqual([mine.path], [j.path for j in found])
        self.assertEqual([], unreadable)
        self.assertEqual({mine.path, theirs.path},
                         {j.path for j in journal.find(self.root)[0]})


class TestBadJournals(JournalTestCase):

    def write_journal(self, content, attempt=None):
        attempt = attempt or uuidutils.generate_uuid()
        path = os.path.join(journal.journal_dir(self.root),
                            '%s.%s.json' % (self.idir.uuid, attempt))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(content if isinstance(content, str)
                    else json.dumps(content))
        return path, attempt

    def valid(self, attempt, **changes):
        values = {'instance_uuid': self.idir.uuid, 'host': 'a',
                  'attempt': attempt, 'operation': 'build',
                  'migration': None, 'state': 'open', 'entries': []}
        values.update(changes)
        return values

    def test_truncated_or_garbage_journals_are_reported_and_kept(self):
        self.idir.create()
        with open(self.idir.file('disk'), 'wb') as f:
            f.write(b'keep me')
        attempt = uuidutils.generate_uuid()
        full = json.dumps(self.valid(attempt, entries=[
            {'kind': 'create', 'name': 'disk'}]))
        paths = []
        for content in (full[:len(full) // 2], '', '\x00garbage', '[]'):
            path, _ = self.write_journal(content)
            paths.append(path)
        path, _ = self.write_journal(full, attempt)
        found, unreadable = journal.find(self.root, 'a')
        self.assertEqual([path], [j.path for j in found])
        self.assertEqual(sorted(paths), sorted(u.path for u in unreadable))
        for p in paths:
            self.assertTrue(os.path.exists(p))

    def test_a_journal_naming_a_path_outside_is_refused(self):
        self.idir.create()
        victim = os.path.join(self.tmp, 'victim')
        with open(victim, 'w') as f:
            f.write('must stay')
        for name in ('../../victim', victim, '..', '', None):
            attempt = uuidutils.generate_uuid()
            path, _ = self.write_journal(self.valid(attempt, entries=[
                {'kind': 'create', 'name': name}]), attempt)
            self.assertRaisesRegex(exception.InvalidJournal,
                                   'not a file of the instance directory',
                                   journal.SpawnJournal.load, self.root,
                                   path)
            os.unlink(path)
        self.assertTrue(os.path.exists(victim))

    def test_a_journal_whose_name_does_not_match_is_refused(self):
        attempt = uuidutils.generate_uuid()
        path, _ = self.write_journal(self.valid(
            uuidutils.generate_uuid()), attempt)
        self.assertRaisesRegex(exception.InvalidJournal, 'name does not',
                               journal.SpawnJournal.load, self.root, path)

    def test_a_corrupt_saved_content_is_refused(self):
        attempt = uuidutils.generate_uuid()
        path, _ = self.write_journal(self.valid(attempt, entries=[
            {'kind': 'rewrite', 'name': 'disk.info', 'content': '%%%'}]),
            attempt)
        self.assertRaisesRegex(exception.InvalidJournal, 'corrupt',
                               journal.SpawnJournal.load, self.root, path)
