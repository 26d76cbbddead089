"""The ownership stamp of an instance directory: who wrote it, on which
storage, for which attempt.

Every spawn that creates or adopts an instance directory stamps it
(``.nova-owner``, written atomically and recorded in the attempt's
journal, so a failed attempt puts the old stamp back). A decision that
rests on "storage is not shared" reads the stamp before it moves anything:

* the target of an evacuation moves a leftover aside only when the stamp
  says an attempt on this very host and storage left it;
* a returning source moves its copy aside only when the stamp names the
  source itself: on shared storage the new owner has re-stamped the
  directory, so the source never touches it.

A directory with no stamp, or one that does not fit, is kept and
reported. A stamp that cannot be read, names another instance, or is a
symlink is ``InvalidOwnershipStamp``: never guessed at.

Example::

    stamp = ownership.OwnerStamp.new(idir.uuid, host='compute2',
                                     storage_identity=identity,
                                     operation='evacuation',
                                     attempt=attempt_id,
                                     migration=migration_uuid)
    ownership.write(idir, stamp)
    ownership.read(idir)            # OwnerStamp, or None if there is none
"""

import dataclasses
import errno
import json
import os
import stat

from oslo_utils import timeutils

from nova import exception
from nova import fileio
from nova.virt import instancedir

STAMP = instancedir.OWNER_STAMP
_MAX_BYTES = 4096


@dataclasses.dataclass(frozen=True)
class OwnerStamp:
    instance_uuid: str
    host: str
    storage_identity: str | None
    operation: str
    attempt: str
    migration: str | None = None
    written_at: str = ''

    @classmethod
    def new(cls, instance_uuid, host, storage_identity, operation, attempt,
            migration=None) -> 'OwnerStamp':
        return cls(instance_uuid, host, storage_identity, operation, attempt,
                   migration,
                   timeutils.utcnow(with_timezone=True).isoformat())

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1,
                          sort_keys=True) + '\n'

    def describe(self) -> str:
        return ('written by host %s on storage %s for %s %s%s at %s'
                % (self.host, self.storage_identity or '(unknown)',
                   self.operation, self.attempt,
                   ' (migration %s)' % self.migration
                   if self.migration else '', self.written_at))

    def left_by(self, host: str, storage_identity: str | None) -> bool:
        """Whether an attempt on ``host`` and that storage wrote it."""
        return (self.host == host and storage_identity is not None
                and self.storage_identity == storage_identity)


def _invalid(idir, why):
    return exception.InvalidOwnershipStamp(path=idir.file(STAMP),
                                           reason=why)


def parse(idir: instancedir.InstanceDir, content: bytes) -> OwnerStamp:
    try:
        values = json.loads(content.decode('utf-8'))
        if not isinstance(values, dict):
            raise ValueError('not an object')
        known = {f.name for f in dataclasses.fields(OwnerStamp)}
        stamp = OwnerStamp(**{k: v for k, v in values.items()
                              if k in known})
    except (ValueError, TypeError, UnicodeDecodeError) as e:
        raise _invalid(idir, 'not a stamp: %s' % e)
    for name in ('instance_uuid', 'host', 'operation', 'attempt'):
        if not isinstance(getattr(stamp, name), str) or \
                not getattr(stamp, name):
            raise _invalid(idir, '%s missing' % name)
    if stamp.instance_uuid != idir.uuid:
        raise _invalid(idir, 'it names instance %s, not %s'
                       % (stamp.instance_uuid, idir.uuid))
    return stamp


def read(idir: instancedir.InstanceDir) -> OwnerStamp | None:
    """The stamp, or None when the directory or its stamp is missing."""
    path = idir.file(STAMP)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _invalid(idir, 'it is a symlink')
        raise _invalid(idir, 'unreadable: %s' % (e.strerror or e))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _invalid(idir, 'not a regular file')
        content = os.read(fd, _MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(content) > _MAX_BYTES:
        raise _invalid(idir, 'larger than %d bytes' % _MAX_BYTES)
    return parse(idir, content)


def write(idir: instancedir.InstanceDir, stamp: OwnerStamp) -> None:
    if stamp.instance_uuid != idir.uuid:
        raise _invalid(idir, 'refusing to write a stamp of instance %s'
                       % stamp.instance_uuid)
    idir.check_inside()
    fileio.write_atomically(idir.file(STAMP), stamp.to_json(),
                            purpose='stamp')
