"""What may happen to an instance directory found on a host, from its
ownership stamp and the storage evidence: pure decisions, no I/O.

Storage identities say whether two hosts share storage; the stamp in the
directory (``nova/virt/ownership.py``) says who wrote that very directory,
on which storage. A decision that could lose data needs both to agree:

On the **target** of an evacuation, before it spawns:

* not shared, no directory: build new disks;
* not shared, a directory stamped by an earlier attempt of this same host
  on this same storage: a leftover; move it aside (quarantine), then build;
* not shared, any other directory (no stamp, another host's stamp, a stamp
  of other storage): it may be the instance's own disks on storage the
  evidence does not show as shared (a stale identity): refuse, keep it;
* shared, a directory stamped by the source (or an older unstamped one):
  reuse its disks;
* shared, a directory stamped by another host, or written on other
  storage: an old copy (a restored backup, a marker cloned with the
  host's image): refuse, never boot it;
* shared, no directory, for an instance that never launched (a failed
  first build): build from the image, nothing to lose; for one that
  launched: its disks should be here and are not, so the identities
  lie (cloned markers): refuse rather than abandon them.

On the **source**, once its instance was evacuated away (``done``), for
its own copy:

* stamped by the source itself, and storage known not shared: quarantine;
* anything else (the new owner re-stamped it on shared storage, no stamp,
  evidence unknown): keep, and report.

Example::

    verdict = disk_ownership.on_target(instance_launched=True, shared=False,
                                       source='a', host='b',
                                       identity=live, stamp=stamp,
                                       directory_exists=True)
    if verdict.action == disk_ownership.REFUSE:
        raise ...(verdict.reason)
"""

import dataclasses

REUSE = 'reuse'             # boot from the disks there
BUILD = 'build'             # make new disks (there are none)
QUARANTINE = 'quarantine'   # move the directory aside, then BUILD
REFUSE = 'refuse'           # touch nothing; the reason says why
KEEP = 'keep'


@dataclasses.dataclass(frozen=True)
class Verdict:
    action: str
    reason: str


def _stamp_words(stamp) -> str:
    return 'no ownership stamp' if stamp is None else stamp.describe()


def on_target(*, instance_launched: bool, shared: bool, source: str,
              host: str, identity: str | None, stamp,
              directory_exists: bool, path: str = '',
              source_identity: str | None = None) -> Verdict:
    """What the target ``host`` of an evacuation from ``source`` does
    with the instance directory it finds (or not) at ``path``;
    ``identity`` is this host's, ``source_identity`` what the source
    recorded."""
    if not directory_exists:
        if not shared or not instance_launched:
            return Verdict(BUILD, 'no instance directory here; building '
                                  'new disks')
        return Verdict(REFUSE, (
            'Refused: %s and %s have the same storage identity %s (cloned '
            'markers?), yet the instance, which has run before, has no '
            'directory at %s; rebuilding it from the image would abandon '
            'its disks. Give %s an identity of its own (nova-manage host '
            'init-storage) or evacuate elsewhere.'
            % (source, host, identity, path, host)))
    if shared:
        if stamp is None:
            return Verdict(REUSE, 'shared storage; the directory has no '
                                  'ownership stamp (written by an older '
                                  'release): reusing its disks')
        if stamp.host == source and stamp.storage_identity in (None,
                                                               identity):
            return Verdict(REUSE, 'shared storage; the directory was %s'
                                  % stamp.describe())
        if stamp.migration and stamp.host not in (source, host):
            return Verdict(REFUSE, (
                'Refused: the instance directory at %s (shared by %s and '
                '%s) was last written by host %s for evacuation %s: that '
                'attempt may still run the guest from these disks, and two '
                'hosts must never run one disk. It was %s. Retry once that '
                'attempt has ended.' % (path, source, host, stamp.host,
                                        stamp.migration, stamp.describe())))
        return Verdict(REFUSE, (
            'Refused: the instance directory at %s is an old copy (not '
            'written by %s on storage %s, though %s and %s look shared): '
            'it was %s; a restored backup, or markers cloned between '
            'hosts? Not booting it.' % (path, source, identity, source,
                                        host, stamp.describe())))
    if stamp is not None and stamp.left_by(host, identity):
        return Verdict(QUARANTINE, (
            'leftover of an earlier attempt on this host (%s); moving it '
            'aside before building new disks' % stamp.describe()))
    if stamp is not None and stamp.storage_identity == identity \
            and identity is not None:
        return Verdict(REFUSE, (
            'Refused, disks kept: storage of %s and %s is evidently shared '
            '(%s wrote %s on storage %s, which %s has) but %s recorded '
            '%s, now stale. Run "nova-manage host record-storage-identity '
            '%s --from %s%s", then evacuate again. The directory was %s; '
            'nothing touched.'
            % (source, host, stamp.host, path, identity, host, source,
               source_identity or 'no identity', source,
               path.rsplit('/', 1)[0], ' --force' if source_identity else '',
               stamp.describe())))
    return Verdict(REFUSE, (
        'Refused, kept: an instance directory exists at %s on %s that no '
        'earlier attempt of %s on this storage left (%s): it may be the '
        'instance\'s own disks on storage the evidence does not show as '
        'shared with %s; nothing touched. Move it away to evacuate here.'
        % (path, host, host, _stamp_words(stamp), source)))


def on_source(*, host: str, identity: str | None, shared: bool | None,
              stamp, directory_exists: bool, owner: str) -> Verdict:
    """What a returning source ``host`` does with its copy of an instance
    that was evacuated to ``owner``."""
    if not directory_exists:
        return Verdict(KEEP, 'no instance directory here')
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
