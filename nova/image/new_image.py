"""The record of an image to be made from a server's root disk.

``createImage`` and ``createBackup`` create the image at once, queued,
where the API's images are (the local store or Glance), so the request
can answer with its id; the server's host then uploads the data
(``nova.compute.snapshot``). What the record says is Nova's:

* ``image_type``: ``snapshot`` or ``backup`` (``backup_type`` too);
* ``instance_uuid``, ``user_id``, ``base_image_ref`` (the image the
  server was built from, '' for none), ``owner`` is the project;
* ``min_ram``/``min_disk``: the larger of the source image's and the
  flavor's (so a server booted from the snapshot fits);
* the user's metadata, after the above (as in Nova, a user's key may
  replace them: they are information, not what rotation trusts alone,
  see ``is_backup_of``).

Example::

    new = for_server(instance, 'snap1', SNAPSHOT, base_meta, {'k': 'v'})
    images.create_queued(new)
"""

import dataclasses

from nova.image import meta as image_meta

SNAPSHOT = 'snapshot'
BACKUP = 'backup'
# What qemu-img writes the root disk's flattened copy as.
DISK_FORMAT = 'qcow2'
CONTAINER_FORMAT = 'bare'


@dataclasses.dataclass(frozen=True)
class NewImage:
    name: str
    owner: str
    min_ram: int = 0
    min_disk: int = 0
    properties: dict = dataclasses.field(default_factory=dict, hash=False)
    disk_format: str = DISK_FORMAT
    container_format: str = CONTAINER_FORMAT


def for_server(instance, name: str, image_type: str,
               base: image_meta.ImageMeta | None, metadata: dict | None,
               backup_type: str | None = None) -> NewImage:
    """The record of a snapshot (or backup) of ``instance``; ``base``:
    the image it was built from, None when that is gone."""
    properties = {
        'image_type': image_type,
        'instance_uuid': instance.uuid,
        'user_id': instance.user_id or '',
        'base_image_ref': instance.image_ref or '',
    }
    if backup_type is not None:
        properties['backup_type'] = backup_type
    if base is not None:
        # What the guest needs to boot again the way it did.
        for key in ('kernel_id', 'ramdisk_id', 'os_command_line'):
            if getattr(base, key):
                properties[key] = getattr(base, key)
    properties.update({str(k): str(v) for k, v in (metadata or {}).items()})
    flavor = instance.flavor
    return NewImage(
        name=name, owner=instance.project_id,
        min_ram=max(base.min_ram if base else 0,
                    flavor.memory_mb if flavor else 0),
        min_disk=max(base.min_disk if base else 0,
                     flavor.root_gb if flavor else 0),
        properties=properties)


def is_backup_of(properties: dict, instance_uuid: str,
                 backup_type: str) -> bool:
    """Whether an image's properties say it is a backup of
    ``backup_type`` of that server: the three must all match."""
    return (properties.get('image_type') == BACKUP
            and properties.get('instance_uuid') == instance_uuid
            and properties.get('backup_type') == backup_type)
