"""What a host may do with an instance directory: one decision, from the
attempt token, the ownership stamp, the live storage identity and the
disk leases.

Every workflow that may reuse, build over, move aside or delete an
instance directory asks here: the target of an evacuation before it
spawns (``rebuild.py``), a returning source about its copy
(``evacuation.py``, and through it the reaper), and the audit about
orphans (``audit.py``). Each first gathers the evidence as it is now
(``live_storage``, ``read_directory``: the only reads), then decides with
a pure function (``on_target``, ``on_source``, ``on_orphan``) that returns
a ``Verdict``: an action, the reason in words, and, for a refusal, what
unblocks it. The side effects are the callers'.

The evidence, and what each part can say:

* the **token** (``nova/objects/attempt.py``): which attempt wrote the
  stamp, whether it landed, whether it still holds the instance. The
  database is the one authority on who owns an instance's disks;
* the **stamp** (``nova/virt/ownership.py``): who wrote this very
  directory, on which storage, for which attempt;
* the **live identity** of this host's storage, read now, and the one
  the other host recorded (``shared_storage.py``): whether the two share
  storage; a live identity that differs from this host's record, or a
  storage problem, makes it unknown;
* the **disk leases** (``disk_leases.py``): whether a second QEMU on the
  same disks would be refused by the storage itself;
* the instance's durable fact ``disks_exist`` (never its vm_state).

Missing or stale evidence means *unknown*, and unknown never deletes and
never boots a copy that may run elsewhere.

On the **target** of an evacuation from ``source``, before it spawns:

===================  ==============================  =====================
storage              the directory here              verdict
===================  ==============================  =====================
not shared           none                            BUILD
not shared           stamped by an earlier attempt   QUARANTINE, then BUILD
                     of this host on this storage
not shared           stamped by the source on this   REFUSE: the source's
                     very storage                    record is stale
not shared           anything else                   REFUSE, kept
shared               stamped by the source (or no    REUSE
                     stamp: an older release)
shared               stamped by a third host for an  REUSE when that host
                     attempt no longer current that  is forced down (the
                     never landed                    operator's word that
                                                     it is fenced) or both
                                                     take disk leases;
                                                     else REFUSE
shared               stamped by a stale attempt of   REUSE
                     this very host
shared               stamped by a current attempt    REFUSE
shared               any other stamp (a landed       REFUSE: an old copy
                     attempt elsewhere, other
                     storage)
shared               none, instance has no disks     BUILD
shared               none, instance has disks        REFUSE: cloned markers
===================  ==============================  =====================

On the **source**, once its instance was evacuated away (``done``), for
its own copy: stamped by the source itself on its storage, and storage
known not shared: QUARANTINE; anything else: KEEP, reported.

For an **orphan** (the audit: a directory of an instance the database
does not place here): an instance deleted: REMOVE (to quarantine) unless
its stamp cannot be read; an instance on another host: REMOVE only when
storage is known not shared with that host and the stamp names this
host on this storage; anything else, or any storage problem: KEEP.

Example::

    live = disk_ownership.live_storage(ctx, host, driver)
    facts = disk_ownership.read_directory(ctx, host, driver, instance)
    verdict = disk_ownership.on_target(
        facts, live, source='a', host='b', shared=True,
        instance_has_disks=instance.disks_exist)
    if verdict.action == disk_ownership.REFUSE:
        raise exception.InvalidSharedStorage(reason=verdict.message)
"""

import dataclasses

from oslo_log import log as logging

from nova.compute import disk_leases
from nova.compute import shared_storage
from nova.compute import storage_report
from nova import exception
from nova.model import actions
from nova import objects
from nova.virt import ownership

LOG = logging.getLogger(__name__)

REUSE = 'reuse'             # boot from the disks there
BUILD = 'build'             # make new disks (there are none)
QUARANTINE = 'quarantine'   # move the directory aside, then BUILD
REFUSE = 'refuse'           # touch nothing; the reason says why
KEEP = actions.KEEP
REMOVE = 'remove'           # (orphans) move it to quarantine

# What the database says about the attempt that wrote a stamp.
LANDED = 'landed'           # its result was recorded
CURRENT = 'current'         # it holds the instance's token now
STALE = 'stale'             # it never landed and holds no token
UNKNOWN = 'unknown'         # no row: written before tokens were recorded


@dataclasses.dataclass(frozen=True)
class Verdict:
    action: str
    reason: str
    # For a refusal or a kept directory: what the operator can do.
    unblock: str = ''

    @property
    def message(self) -> str:
        return ('%s %s' % (self.reason, self.unblock)).strip()


@dataclasses.dataclass(frozen=True)
class StampAttempt:
    """The database's word on the attempt that wrote a stamp."""
    status: str                     # LANDED, CURRENT, STALE or UNKNOWN
    # The stamp's host is forced down: the operator's statement that it
    # is fenced (powered off), so nothing it started still runs.
    host_forced_down: bool = False
    # The stamp's host and this one both take disk leases: a guest the
    # stamp's host still runs holds a lease, and a second start of these
    # disks is refused by the storage.
    leases_protect: bool = False


@dataclasses.dataclass(frozen=True)
class LiveStorage:
    """This host's storage as it is now."""
    identity: str | None            # None: unknown
    # Why nothing may be written or removed there now (a required mount
    # missing, the recorded marker gone); None when nothing is wrong.
    problem: str | None = None
    # The live identity differs from the one this host recorded: other
    # hosts may have compared against the record; decide nothing.
    stale: exception.StorageEvidenceStale | None = None


@dataclasses.dataclass(frozen=True)
class DirectoryFacts:
    """An instance directory on this host, as found now."""
    path: str
    exists: bool
    stamp: ownership.OwnerStamp | None = None
    # The stamp could not be trusted (``InvalidOwnershipStamp``).
    stamp_error: str | None = None
    stamp_attempt: StampAttempt | None = None

    def stamp_words(self) -> str:
        if self.stamp_error:
            return self.stamp_error
        return ('no ownership stamp' if self.stamp is None
                else self.stamp.describe())


# -- the evidence (the only reads) ---------------------------------------

def live_storage(context, host: str, driver) -> LiveStorage:
    """This host's storage identity read now, its problem if any, and
    whether it disagrees with what the host recorded: each from the same
    reading of the storage and of the host's record."""
    status = driver.get_storage_status()
    recorded, must_be_mounted = shared_storage.recorded_storage(context,
                                                                host)
    problem = storage_report.storage_problem(status, recorded,
                                             must_be_mounted)
    try:
        identity = shared_storage.identity_of(host, status, recorded,
                                              must_be_mounted)
    except exception.StorageEvidenceStale as e:
        LOG.warning('%s', e.format_message())
        return LiveStorage(None, problem, stale=e)
    if problem:
        return LiveStorage(None, problem)
    return LiveStorage(identity)


def _stamp_attempt(context, host: str, stamp, instance) -> StampAttempt:
    row = objects.InstanceAttempt.get_by_uuid(context, stamp.attempt)
    if row is None:
        status = UNKNOWN
    elif row.landed:
        status = LANDED
    elif instance is not None and instance.attempt_id == stamp.attempt:
        status = CURRENT
    else:
        status = STALE
    forced_down = False
    protect = False
    if stamp.host != host:
        try:
            services = {s.host: s for s in objects.Service.get_all(
                context, binary=shared_storage.COMPUTE_BINARY)}
        except exception.NovaException:
            services = {}
        theirs, ours = services.get(stamp.host), services.get(host)
        forced_down = bool(theirs is not None and theirs.forced_down)
        protect = bool(theirs is not None and ours is not None
                       and disk_leases.protected(theirs.disk_leases)
                       and disk_leases.protected(ours.disk_leases))
    return StampAttempt(status, forced_down, protect)


def read_directory(context, host: str, driver, instance) -> DirectoryFacts:
    """What is at ``instance``'s directory on this host: whether it
    exists, its stamp and what the database says of the stamp's attempt.
    ``instance`` needs only its uuid; its token, when it has one, tells
    a current attempt from a stale one."""
    path = driver.instance_dir_path(instance)
    if not driver.instance_dir_exists(instance):
        return DirectoryFacts(path, False)
    try:
        stamp = driver.read_ownership_stamp(instance)
    except exception.InvalidOwnershipStamp as e:
        return DirectoryFacts(path, True, stamp_error=e.format_message())
    owner = None
    if stamp is not None:
        owner = _stamp_attempt(context, host, stamp, instance)
    return DirectoryFacts(path, True, stamp, stamp_attempt=owner)


# -- the target of an evacuation ------------------------------------------

def on_target(facts: DirectoryFacts, live: LiveStorage, *, source: str,
              host: str, shared: bool, instance_has_disks: bool,
              source_identity: str | None = None) -> Verdict:
    """What the target ``host`` of an evacuation from ``source`` does
    with the instance directory it finds (or not); ``shared`` is the
    decided sharing (``shared_storage.decide``), ``source_identity``
    what the source recorded."""
    identity = live.identity
    path = facts.path
    if facts.stamp_error:
        return Verdict(REFUSE, 'Refused, kept: %s.' % facts.stamp_error,
                       'Look at the directory, move it away if it is not '
                       'the instance\'s, then evacuate again.')
    if not facts.exists:
        if not shared or not instance_has_disks:
            return Verdict(BUILD, 'no instance directory here; building '
                                  'new disks')
        return Verdict(REFUSE, (
            'Refused: %s and %s have the same storage identity %s (cloned '
            'markers?), yet the instance, whose disks were recorded, has '
            'no directory at %s; rebuilding it from the image would '
            'abandon its disks.' % (source, host, identity, path)),
            'Give %s an identity of its own (nova-manage host '
            'init-storage) or evacuate elsewhere.' % host)
    stamp = facts.stamp
    if shared:
        return _shared_target(facts, identity, source, host)
    if stamp is not None and stamp.left_by(host, identity):
        return Verdict(QUARANTINE, (
            'leftover of an earlier attempt on this host (%s); moving it '
            'aside before building new disks' % stamp.describe()))
    if stamp is not None and stamp.storage_identity == identity \
            and identity is not None:
        return Verdict(REFUSE, (
            'Refused, disks kept: storage of %s and %s is evidently shared '
            '(%s wrote %s on storage %s, which %s has) but %s recorded '
            '%s, now stale. The directory was %s; nothing touched.'
            % (source, host, stamp.host, path, identity, host, source,
               source_identity or 'no identity', stamp.describe())),
            'Run "nova-manage host record-storage-identity %s --from %s%s", '
            'then evacuate again.'
            % (source, path.rsplit('/', 1)[0],
               ' --force' if source_identity else ''))
    return Verdict(REFUSE, (
        'Refused, kept: an instance directory exists at %s on %s that no '
        'earlier attempt of %s on this storage left (%s): it may be the '
        'instance\'s own disks on storage the evidence does not show as '
        'shared with %s; nothing touched.'
        % (path, host, host, facts.stamp_words(), source)),
        'Move it away to evacuate here, or evacuate elsewhere.')


def _shared_target(facts, identity, source, host) -> Verdict:
    stamp, path = facts.stamp, facts.path
    if stamp is None:
        return Verdict(REUSE, 'shared storage; the directory has no '
                              'ownership stamp (written by an older '
                              'release): reusing its disks')
    owner = facts.stamp_attempt or StampAttempt(UNKNOWN)
    if stamp.host == source and stamp.storage_identity in (None, identity):
        return Verdict(REUSE, 'shared storage; the directory was %s'
                              % stamp.describe())
    if owner.status == CURRENT:
        return Verdict(REFUSE, (
            'Refused: the instance directory at %s was %s, an attempt that '
            'holds the instance now.' % (path, stamp.describe())),
            'Retry once that attempt has ended.')
    if stamp.host == host and owner.status in (STALE, UNKNOWN) and \
            stamp.storage_identity in (None, identity):
        # This host's own earlier attempt: its process died or it gave
        # up (a stale attempt stops at its next check); its files are
        # the instance's disks on the shared storage.
        return Verdict(REUSE, 'shared storage; the directory was %s, an '
                              'earlier attempt of this host that did not '
                              'land: reusing its disks' % stamp.describe())
    if stamp.host not in (source, host) and owner.status in (STALE,
                                                             UNKNOWN) \
            and (stamp.migration or owner.status == STALE) \
            and stamp.storage_identity in (None, identity):
        what = ('an attempt that no longer holds the instance'
                if owner.status == STALE else
                'an attempt the database has no record of')
        if owner.host_forced_down:
            return Verdict(REUSE, (
                'shared storage; the directory was %s, %s, and %s is '
                'forced down (fenced): reusing its disks'
                % (stamp.describe(), what, stamp.host)))
        if owner.leases_protect:
            return Verdict(REUSE, (
                'shared storage; the directory was %s, %s; %s and %s both '
                'take disk leases, so a guest %s may still run keeps this '
                'start from opening its disks: reusing them'
                % (stamp.describe(), what, stamp.host, host, stamp.host)))
        return Verdict(REFUSE, (
            'Refused: the instance directory at %s (shared by %s and %s) '
            'was %s, %s; %s may still run the guest from these disks, and '
            'two hosts must never run one disk.'
            % (path, source, host, stamp.describe(), what, stamp.host)),
            'Power %s off and force it down (nova service-force-down %s '
            'nova-compute), or give both hosts disk leases '
            '(lock_manager = "lockd"), then evacuate again.'
            % (stamp.host, stamp.host))
    old_copy = ('Refused: the instance directory at %s is an old copy (not '
                'written by %s on storage %s, though %s and %s look '
                'shared): it was %s; a restored backup, or markers cloned '
                'between hosts? Not booting it.'
                % (path, source, identity, source, host, stamp.describe()))
    return Verdict(REFUSE, old_copy,
                   'Move it away if it is not the instance\'s disks, then '
                   'evacuate again.')


# -- the source, once its instance was evacuated away ---------------------

def on_source(facts: DirectoryFacts, live: LiveStorage, *, host: str,
              shared: bool | None, owner: str) -> Verdict:
    """What a returning source ``host`` does with its copy of an instance
    that was evacuated to ``owner``."""
    identity = live.identity
    stamp = facts.stamp
    if not facts.exists:
        return Verdict(KEEP, 'no instance directory here')
    if facts.stamp_error:
        return Verdict(KEEP, '%s; kept' % facts.stamp_error)
    if stamp is None:
        return Verdict(KEEP, 'the directory has no ownership stamp: cannot '
                             'tell whose it is; kept')
    if stamp.host != host:
        return Verdict(KEEP, 'the directory was %s (the new owner, on '
                             'shared storage); kept' % stamp.describe())
    if not stamp.left_by(host, identity):
        return Verdict(KEEP, 'the directory was %s, not on this storage '
                             '(identity %s); kept'
                             % (stamp.describe(), identity))
    if shared is False:
        return Verdict(QUARANTINE, 'evacuated to %s, storage not shared: '
                                   'this copy is stale' % owner)
    if shared is True:
        return Verdict(KEEP, 'storage looks shared with %s but the '
                             'directory is still this host\'s own: the '
                             'identities disagree with the stamp; kept'
                             % owner)
    return Verdict(KEEP, 'whether storage is shared with %s is unknown; '
                         'kept' % owner)


# -- an orphan (the audit) ------------------------------------------------

def _sharing_with(live, owner, owner_identity):
    """(action, reason) for the disks of an instance that lives on
    ``owner``, from the two identities alone."""
    if not live.identity:
        return KEEP, ('this host\'s storage identity is unknown: cannot '
                      'tell whether storage is shared')
    if not owner_identity:
        return KEEP, ('%s recorded no storage identity: cannot tell '
                      'whether storage is shared' % owner)
    if owner_identity == live.identity:
        return KEEP, 'shared, keep: storage shared with %s' % owner
    return REMOVE, 'storage not shared with %s' % owner


def on_orphan(facts: DirectoryFacts, live: LiveStorage, *, host: str,
              deleted: bool, owner: str | None,
              owner_identity: str | None = None,
              unplaced: str | None = None) -> Verdict:
    """What ``host`` may do with the directory of an instance the
    database does not place here and no operation is running on:
    ``deleted``, or living on ``owner``, which recorded
    ``owner_identity``; ``unplaced``, the reason, for an instance on no
    host or unknown to the database (its disks are always kept)."""
    if deleted:
        action, reason = REMOVE, 'instance deleted'
    elif owner is None:
        return Verdict(KEEP, '%s: disks kept' % (unplaced or
                                                 'no owner known'))
    else:
        action, reason = _sharing_with(live, owner, owner_identity)
    if live.problem:
        # Said in so many words: "identity unknown" alone would hide why.
        return Verdict(KEEP, '%s, but %s; kept' % (reason, live.problem))
    if action != REMOVE:
        return Verdict(KEEP, reason)
    if facts.stamp_error:
        return Verdict(KEEP, '%s, but %s; kept' % (reason,
                                                   facts.stamp_error))
    stamp = facts.stamp
    if deleted or (stamp is not None and stamp.left_by(host,
                                                       live.identity)):
        return Verdict(REMOVE, reason + ': to quarantine')
    if stamp is None:
        return Verdict(KEEP, '%s, but no ownership stamp: cannot tell '
                             'whose it is; kept' % reason)
    return Verdict(KEEP, '%s, but its stamp says it was %s; kept'
                   % (reason, stamp.describe()))
