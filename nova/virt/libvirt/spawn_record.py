"""What one spawn attempt created on this host, so its cleanup removes
exactly that.

A file or directory that existed before the attempt is never recorded, so
it is never removed: on shared storage an evacuation's spawn finds the
instance's disks already there, reuses them, and a failure leaves them as
they were. A file that existed and that the attempt rewrites (``disk.info``)
is saved first (``replacing_file``) and put back, byte for byte, on failure.

Example::

    record = SpawnRecord(InstanceDir(instances_path, instance.uuid))
    record.created_dir = idir.create()
    if not os.path.exists(path):
        record.created_file(DISK)    # before writing it: a half-written
        make_the_disk(path)          # file is this attempt's too
    ...
    record.remove_created()          # on failure
"""

import dataclasses

from oslo_log import log as logging

from nova.virt import instancedir

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class SpawnRecord:
    instance_dir: instancedir.InstanceDir
    created_dir: bool = False
    created_files: list[str] = dataclasses.field(default_factory=list)
    # Content, before this attempt rewrote them, of files that existed.
    replaced_files: dict[str, bytes] = dataclasses.field(
        default_factory=dict)
    # Set once the attempt went as far as plugging VIFs and defining.
    reached_domain: bool = False

    def created_file(self, name: str) -> None:
        if name not in self.created_files:
            self.created_files.append(name)

    def replacing_file(self, name: str) -> None:
        """Call before rewriting ``name``: saves what is there now (once:
        the first content is the one from before the attempt)."""
        if name in self.created_files or name in self.replaced_files:
            return
        with open(self.instance_dir.file(name), 'rb') as f:
            self.replaced_files[name] = f.read()

    def _restore(self, name: str, content: bytes) -> None:
        self.instance_dir.check_inside()
        instancedir.write_atomically(self.instance_dir.file(name), content,
                                     purpose='restore')
        LOG.info('Restored %s as it was before the failed spawn', name,
                 instance_uuid=self.instance_dir.uuid)

    def remove_created(self) -> None:
        """Remove what this attempt created and put back what it
        rewrote; safe to call twice."""
        idir = self.instance_dir
        if self.created_dir:
            LOG.info('Removing instance directory created by the failed '
                     'spawn', instance_uuid=idir.uuid)
            idir.remove()
        else:
            for name in reversed(self.created_files):
                if idir.remove_file(name):
                    LOG.info('Removed %s created by the failed spawn', name,
                             instance_uuid=idir.uuid)
            for name, content in self.replaced_files.items():
                self._restore(name, content)
        self.created_dir = False
        self.created_files.clear()
        self.replaced_files.clear()
