"""The on-disk journal of one spawn attempt: what it is about to create.

A process can die at any instant (kill -9, power loss). What a spawn
attempt created must still be known afterwards, so before it creates or
rewrites anything it writes down what it is about to do, flushed to disk,
in ``<instances_path>/_journal/<instance uuid>.<attempt id>.json``:

* ``mkdir``: it is about to create the instance directory (recorded only
  when the directory is not there; a directory that is there is
  ``adopt``-ed and never removed);
* ``create NAME``: it is about to create file ``NAME`` of the instance
  directory (its content is written as ``NAME.part-<attempt>`` first and
  renamed into place once complete, so a partial file never has the
  final name);
* ``rewrite NAME``: it is about to replace ``NAME``, whose content before
  the attempt is saved in the journal;
* ``guest``: it is about to plug VIFs (recorded with it, so that a
  restart can unplug them even when the instance's row is gone) and define
  and start a domain.

Every write the journal makes for its attempt (the directory, each file,
the stamp) first calls ``attempt.check(step)``: the attempt's token is
read again right before each side effect, and an attempt that is no
longer the instance's stops there (``Attempt.check``).

A successful attempt is completed by whoever knows that its result is
recorded (the compute manager, once the instance row says so): the
journal is marked complete and removed. An attempt that fails in a
living process, or whose journal a restart finds still open, is undone
from the journal: the guest destroyed (by the caller's ``destroy_guest``),
each created file and its ``.part-`` file removed, each rewritten file put
back, and a directory it created removed once empty (moved to quarantine
when anything it did not record is inside). That is exactly what the
attempt created, on shared storage as well. A journal that cannot be read
or that names a path outside its instance directory is kept and reported,
never guessed at.

The journal lives under ``instances_path`` itself, so it is on the same
storage as the files it describes: on shared storage each host reads only
the journals that name it.

Example::

    journal = SpawnJournal.begin(idir, host, Attempt.new('build'))
    journal.make_dir()                  # records, then creates
    journal.creating('disk')            # before writing disk.part-<id>
    ...
    journal.undo(destroy_guest)         # on failure
    journal.complete()                  # once the result is recorded
"""

import base64
import dataclasses
import errno
import json
import os
import typing

from oslo_log import log as logging
from oslo_utils import uuidutils

from nova import exception
from nova import fileio
from nova.model import network as network_model
from nova.virt import instancedir
from nova.virt import ownership

LOG = logging.getLogger(__name__)

BUILD = 'build'
EVACUATION = 'evacuation'
REBUILD = 'rebuild'
OPERATIONS = (BUILD, EVACUATION, REBUILD)

MKDIR = 'mkdir'
ADOPT = 'adopt'
CREATE = 'create'
REWRITE = 'rewrite'
GUEST = 'guest'
_KINDS = (MKDIR, ADOPT, CREATE, REWRITE, GUEST)

OPEN = 'open'
COMPLETE = 'complete'
UNDONE = 'undone'           # in memory only: the journal is gone then
_MAX_BYTES = 1024 * 1024
# What os.link answers on a file system that has no hard links.
_NO_HARD_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK)


# The side effects an attempt checks its token before (``Attempt.check``),
# in the order a spawn reaches them. ``running`` is checked right after
# the guest's vCPUs started: a token lost meanwhile powers it off at once.
CHECK_DIRECTORY = 'directory'
CHECK_WRITE = 'write'
CHECK_PLUG = 'plug'
CHECK_DEFINE = 'define'
CHECK_START = 'start'
CHECK_RESUME = 'resume'
CHECK_RUNNING = 'running'

# (step) -> None, or raises when the attempt may not act any more.
TokenCheck = typing.Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One try at creating an instance's guest on a host.

    ``id`` is the attempt's token in the database. ``token_check`` is
    given by whoever claimed the attempt (the compute manager): called
    right before each side effect with the step's name, it raises
    (``AttemptSuperseded``, ``AttemptCheckFailed``) when the attempt is
    no longer the instance's. The virt layer never reads the database
    itself; it calls this. An attempt read back from its journal has
    none: a restart only ever undoes.
    """
    id: str
    operation: str
    migration: str | None = None
    token_check: TokenCheck | None = dataclasses.field(
        default=None, compare=False, repr=False)

    @classmethod
    def new(cls, operation: str, migration: str | None = None,
            attempt_id: str | None = None) -> 'Attempt':
        if operation not in OPERATIONS:
            raise exception.InvalidInput(
                reason='unknown attempt operation %r' % operation)
        return cls(attempt_id or uuidutils.generate_uuid(), operation,
                   migration)

    def checked_by(self, token_check: TokenCheck) -> 'Attempt':
        """The same attempt, its side effects checked by ``token_check``."""
        return dataclasses.replace(self, token_check=token_check)

    def check(self, step: str) -> None:
        """Right before the side effect ``step``: raise unless the
        attempt still holds its token (no check: nothing to raise)."""
        if self.token_check is not None:
            self.token_check(step)


def journal_dir(instances_path: str) -> str:
    return os.path.join(instances_path, instancedir.JOURNAL_DIR)


def part_name(name: str, attempt_id: str) -> str:
    """The name a file of the attempt has until it is complete."""
    return '%s.part-%s' % (name, attempt_id)


class SpawnJournal:

    def __init__(self, idir: instancedir.InstanceDir, host: str,
                 attempt: Attempt, entries=None, state=OPEN, path=None):
        self.idir = idir
        self.host = host
        self.attempt = attempt
        self.entries = list(entries or [])
        self.state = state
        self.path = path or os.path.join(
            journal_dir(idir.instances_path),
            '%s.%s.json' % (idir.uuid, attempt.id))

    def __repr__(self):
        return '<SpawnJournal %s>' % self.path

    # -- writing ------------------------------------------------------------

    @classmethod
    def begin(cls, idir, host, attempt, new_files=(), small_files=(),
              guest=False, vifs=None) -> 'SpawnJournal':
        """Start the journal of ``attempt`` with what it is about to do,
        in one write (each write costs two fsyncs):

        * make the instance directory, if it is not there;
        * create each of ``new_files`` that is not there (disks, kernel
          and ramdisk: one that is there is reused, never rewritten);
        * write each of ``small_files`` (stamps, ``disk.info``,
          ``libvirt.xml``): created if missing, else rewritten, its
          content saved here first;
        * with ``guest``, plug VIFs (``vifs``, a ``NetworkInfo``) and
          define and start a domain.

        Anything the attempt does later that is not planned here is
        recorded before it is done, as it comes (``creating``).
        """
        journal = cls(idir, host, attempt)
        if idir.exists():
            idir.check_inside()
            journal.entries.append(dict(kind=ADOPT))
        else:
            journal.entries.append(dict(kind=MKDIR))
        for name in new_files:
            if not os.path.lexists(idir.file(name)):
                journal.entries.append(dict(kind=CREATE, name=name))
        for name in small_files:
            journal.entries.append(journal._write_entry(name))
        if guest:
            journal.entries.append(dict(
                kind=GUEST, vifs=list(vifs.to_list()) if vifs else []))
        os.makedirs(journal_dir(idir.instances_path), exist_ok=True)
        journal._save()
        return journal

    def _write_entry(self, name):
        """The entry for writing ``name``: CREATE, or REWRITE with what
        is there now."""
        path = self.idir.file(name)
        if not os.path.lexists(path):
            return dict(kind=CREATE, name=name)
        with open(path, 'rb') as f:
            saved = base64.b64encode(f.read()).decode('ascii')
        return dict(kind=REWRITE, name=name, content=saved)

    def _save(self):
        content = json.dumps({
            'instance_uuid': self.idir.uuid, 'host': self.host,
            'attempt': self.attempt.id,
            'operation': self.attempt.operation,
            'migration': self.attempt.migration,
            'state': self.state, 'entries': self.entries}, indent=1)
        fileio.write_atomically(self.path, content, purpose='journal',
                                sync_dir=True)

    def _record(self, kind, **values):
        self.entries.append(dict(kind=kind, **values))
        self._save()

    def part_path(self, name: str) -> str:
        return self.idir.file(part_name(name, self.attempt.id))

    @property
    def created_dir(self) -> bool:
        return any(e['kind'] == MKDIR for e in self.entries)

    def created(self, name: str) -> bool:
        return any(e['kind'] == CREATE and e['name'] == name
                   for e in self.entries)

    def make_dir(self) -> bool:
        """Create the instance directory ``begin`` planned to make (or
        adopt the one there); True if this attempt created it."""
        self.attempt.check(CHECK_DIRECTORY)
        if not self.created_dir:
            self.idir.check_inside()
            return False
        if self.idir.create():
            return True
        # Made by someone else since ``begin``: not ours.
        self.entries = [dict(kind=ADOPT) if e['kind'] == MKDIR else e
                        for e in self.entries]
        self._save()
        return False

    def creating(self, name: str) -> str:
        """Record that ``name`` is about to be created; the path to write
        it under until it is complete (``commit`` renames it)."""
        self.idir.file(name)                      # validates the name
        self.attempt.check(CHECK_WRITE)
        if not self.created(name):
            self._record(CREATE, name=name)
        return self.part_path(name)

    def commit(self, name: str) -> str:
        """Give a complete ``.part-`` file its final name (flushed first),
        once the attempt's token is checked again; the final path.

        Never in place of a file that has the name meanwhile
        (``FileMadeElsewhere``): ``begin`` recorded it as missing, so
        someone else made it since (on shared storage, the attempt that
        took the instance over, whose guest may run from it).
        """
        part, final = self.part_path(name), self.idir.file(name)
        with open(part, 'rb+') as f:
            os.fsync(f.fileno())
        # An attempt that lost its token while it wrote (held still, then
        # let go on) stops here.
        self.attempt.check(CHECK_WRITE)
        # A link, not a rename: it fails where a rename would replace,
        # so even an attempt that stalls between the check and this call
        # cannot put its file in place of the new owner's. The name is
        # flushed with the directory when the attempt completes; until
        # then a crash may lose it, and the file is then a .part- file
        # the restart removes: never a partial disk.
        try:
            os.link(part, final)
        except FileExistsError:
            self._made_elsewhere(name)
        except OSError as e:
            if e.errno not in _NO_HARD_LINKS:
                raise
            # A file system without hard links: the checked rename.
            if os.path.lexists(final):
                self._made_elsewhere(name)
            os.rename(part, final)
            return final
        self.idir.remove_file(part_name(name, self.attempt.id))
        return final

    def _made_elsewhere(self, name: str) -> typing.NoReturn:
        """``name`` exists, made by someone else since ``begin``: it is
        not this attempt's, so no undo may ever remove it. Its entry goes
        from the journal first (a crash then leaves at worst a ``.part-``
        file, which is removed as any other), then this attempt's
        ``.part-`` file; ``FileMadeElsewhere``."""
        self.entries = [e for e in self.entries
                        if not (e['kind'] == CREATE and e['name'] == name)]
        self._save()
        self.idir.remove_file(part_name(name, self.attempt.id))
        raise exception.FileMadeElsewhere(path=self.idir.file(name),
                                          attempt=self.attempt.id)

    def rewriting(self, name: str) -> None:
        """Record the content of ``name`` before the attempt replaces it
        (once: the first content is the one from before the attempt)."""
        if self.created(name) or any(
                e['kind'] == REWRITE and e['name'] == name
                for e in self.entries):
            return
        self.entries.append(self._write_entry(name))
        self._save()

    def write_file(self, name: str, content: str | bytes) -> None:
        """Create or replace the small file ``name`` with ``content``,
        recorded either way (stamps, ``disk.info``, ``libvirt.xml``)."""
        if os.path.lexists(self.idir.file(name)):
            self.attempt.check(CHECK_WRITE)
            self.rewriting(name)
        else:
            self.creating(name)
        fileio.write_atomically(self.idir.file(name), content,
                                tmp_path=self.part_path(name))

    def starting_guest(self) -> None:
        if not any(e['kind'] == GUEST for e in self.entries):
            self._record(GUEST)

    @property
    def started_guest(self) -> bool:
        return any(e['kind'] == GUEST for e in self.entries)

    def guest_vifs(self):
        """The VIFs the attempt plugs (a ``NetworkInfo``), as recorded."""
        for entry in self.entries:
            if entry['kind'] == GUEST:
                return network_model.NetworkInfo.from_list(
                    entry.get('vifs') or [])
        return network_model.NetworkInfo()

    def complete(self) -> None:
        """The attempt's result is recorded: nothing is to be undone.

        The instance directory is flushed first (the renames of its
        complete files with it); then the journal goes. A crash before
        the journal's removal reaches the disk leaves an open journal of
        an attempt whose result is recorded: the restart completes it.
        """
        if self.state == COMPLETE:
            return
        if self.idir.exists():
            fileio.fsync_dir(self.idir.path)
        self.state = COMPLETE
        self._forget()

    def _forget(self):
        instancedir.remove_layout_file(
            self.idir.instances_path, instancedir.JOURNAL_DIR,
            os.path.basename(self.path))

    # -- undoing ------------------------------------------------------------

    def undo(self, destroy_guest=None, keep_files: str | None = None
             ) -> None:
        """Remove what the attempt created and put back what it rewrote;
        then forget the journal. ``destroy_guest()`` removes the domain
        and VIFs when the attempt got as far as starting them.

        ``keep_files``, a reason: the directory may be another attempt's
        now (the caller knows from the database that a later attempt of
        the instance claimed it on this storage); then only this attempt's
        own ``.part-`` files go, and the guest. The same happens when the
        directory's stamp shows that another attempt adopted it since.

        A failure leaves the journal in place (a later undo tries again).
        """
        if self.state == UNDONE:
            return
        if self.state == COMPLETE:
            self._forget()
            return
        idir = self.idir
        if self.started_guest and destroy_guest is not None:
            destroy_guest()
        if os.path.lexists(idir.path):
            idir.check_inside()
        if keep_files is None:
            adopter = self._adopted_since()
            if adopter is not None:
                keep_files = 'the directory was %s since' % (
                    adopter.describe())
        if keep_files is not None:
            # What is in the directory is someone else's now (on shared
            # storage, the attempt that won an evacuation): only this
            # attempt's own .part- files go.
            LOG.warning('Not undoing the files of attempt %(mine)s: '
                        '%(why)s', {'mine': self.attempt.id,
                                    'why': keep_files},
                        instance_uuid=idir.uuid)
            for entry in self.entries:
                if entry['kind'] in (CREATE, REWRITE):
                    idir.remove_file(part_name(entry['name'],
                                               self.attempt.id))
            self.state = UNDONE
            self._forget()
            return
        failures = []
        for entry in reversed(self.entries):
            try:
                self._undo_entry(entry)
            except Exception as e:
                # The other steps still run; the journal stays for a
                # later undo to finish.
                LOG.exception('Could not undo %s of attempt %s',
                              entry['kind'], self.attempt.id,
                              instance_uuid=idir.uuid)
                failures.append(e)
        if failures:
            raise failures[0]
        if self.created_dir and idir.exists():
            if idir.remove_if_empty():
                LOG.info('Removed the instance directory made by attempt '
                         '%s', self.attempt.id, instance_uuid=idir.uuid)
            else:
                idir.quarantine('attempt %s created the directory, but it '
                                'holds files the attempt did not record'
                                % self.attempt.id)
        self.state = UNDONE
        self._forget()

    def _adopted_since(self):
        """The stamp of another attempt written after this one's, if the
        directory has one; None otherwise.

        The stamp that was there before this attempt (saved in its
        ``rewrite`` entry) is not an adoption: an undo cut short after it
        put that stamp back must still remove the attempt's files on its
        next pass.
        """
        entries = [e for e in self.entries if e['kind'] in (CREATE, REWRITE)
                   and e.get('name') == ownership.STAMP]
        if not entries:
            return None
        try:
            stamp = ownership.read(self.idir)
        except exception.InvalidOwnershipStamp:
            return None
        if stamp is None or stamp.attempt == self.attempt.id:
            return None
        for entry in entries:
            if entry['kind'] != REWRITE:
                continue
            try:
                before = ownership.parse(
                    self.idir, base64.b64decode(entry['content']))
            except exception.InvalidOwnershipStamp:
                continue
            if before.attempt == stamp.attempt:
                return None
        return stamp

    def _undo_entry(self, entry):
        idir = self.idir
        kind = entry['kind']
        if kind == CREATE:
            for name in (entry['name'],
                         part_name(entry['name'], self.attempt.id)):
                if idir.remove_file(name):
                    LOG.info('Removed %s made by attempt %s', name,
                             self.attempt.id, instance_uuid=idir.uuid)
        elif kind == REWRITE:
            path = idir.file(entry['name'])
            content = base64.b64decode(entry['content'])
            try:
                with open(path, 'rb') as f:
                    if f.read() == content:
                        # Never replaced (the rewrite failed, or the
                        # process died before it): nothing to put back.
                        idir.remove_file(part_name(entry['name'],
                                                   self.attempt.id))
                        return
            except FileNotFoundError:
                pass
            fileio.write_atomically(
                path, content, tmp_path=self.part_path(entry['name']))
            LOG.info('Put back %s as it was before attempt %s',
                     entry['name'], self.attempt.id,
                     instance_uuid=idir.uuid)

    # -- reading ------------------------------------------------------------

    @classmethod
    def load(cls, instances_path: str, path: str) -> 'SpawnJournal':
        """The journal at ``path``; ``InvalidJournal`` if it cannot be
        trusted (unreadable, truncated, or naming a path outside its
        instance directory)."""
        def invalid(why):
            return exception.InvalidJournal(path=path, reason=why)
        try:
            with open(path, 'rb') as f:
                content = f.read(_MAX_BYTES + 1)
        except OSError as e:
            raise invalid('unreadable: %s' % (e.strerror or e))
        if len(content) > _MAX_BYTES:
            raise invalid('larger than %d bytes' % _MAX_BYTES)
        try:
            values = json.loads(content.decode('utf-8'))
            uuid = values['instance_uuid']
            attempt = Attempt(values['attempt'], values['operation'],
                              values.get('migration'))
            host = values['host']
            state = values['state']
            entries = values['entries']
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            raise invalid('not a journal: %s' % (e,))
        try:
            idir = instancedir.InstanceDir(instances_path, uuid)
            instancedir.validated_uuid(attempt.id)
        except exception.InvalidUUID as e:
            raise invalid(str(e))
        if os.path.basename(path) != '%s.%s.json' % (uuid, attempt.id):
            raise invalid('its name does not match its content')
        if (attempt.operation not in OPERATIONS or state not in
                (OPEN, COMPLETE) or not isinstance(host, str)
                or not isinstance(entries, list)):
            raise invalid('unexpected operation, state, host or entries')
        for entry in entries:
            if not isinstance(entry, dict) or entry.get('kind') not in _KINDS:
                raise invalid('unexpected entry %r' % (entry,))
            if entry['kind'] in (CREATE, REWRITE):
                try:
                    idir.file(entry.get('name', ''))
                except (exception.InvalidInstancePath, TypeError):
                    raise invalid('entry names %r, not a file of the '
                                  'instance directory' % entry.get('name'))
            if entry['kind'] == REWRITE:
                try:
                    base64.b64decode(entry['content'], validate=True)
                except (KeyError, ValueError, TypeError):
                    raise invalid('saved content of %s is corrupt'
                                  % entry['name'])
        return cls(idir, host, attempt, entries, state, path=path)


@dataclasses.dataclass(frozen=True)
class UnreadableJournal:
    path: str
    reason: str


def find(instances_path: str, host: str | None = None):
    """(journals, unreadable) under ``instances_path``: the journals of
    ``host`` (every host's when None) and the ones that cannot be read,
    whoever wrote them. Temporary files of a journal write are ignored."""
    journals: list[SpawnJournal] = []
    unreadable: list[UnreadableJournal] = []
    try:
        names = sorted(os.listdir(journal_dir(instances_path)))
    except FileNotFoundError:
        return journals, unreadable
    for name in names:
        if not name.endswith('.json'):
            continue
        path = os.path.join(journal_dir(instances_path), name)
        try:
            journal = SpawnJournal.load(instances_path, path)
        except exception.InvalidJournal as e:
            LOG.error('%s', e.format_message())
            unreadable.append(UnreadableJournal(path, e.format_message()))
            continue
        if host is None or journal.host == host:
            journals.append(journal)
    return journals, unreadable
