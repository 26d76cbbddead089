"""What one spawn attempt created on this host, so its cleanup removes
exactly that.

A file or directory that existed before the attempt is never recorded, so
it is never removed: on shared storage an evacuation's spawn finds the
instance's disks already there, reuses them, and a failure leaves them as
they were.

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
    # Set once the attempt went as far as plugging VIFs and defining.
    reached_domain: bool = False

    def created_file(self, name: str) -> None:
        if name not in self.created_files:
            self.created_files.append(name)

    def remove_created(self) -> None:
        """Remove what this attempt created; safe to call twice."""
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
        self.created_dir = False
        self.created_files.clear()
