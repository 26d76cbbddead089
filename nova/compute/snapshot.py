"""createImage and createBackup on the server's host: copy the root disk
into the queued image the API created, then (a backup) rotate.

The task state moves ``image_snapshot`` (or ``image_backup``) ->
``image_pending_upload`` -> ``image_uploading`` -> None, each save a
compare-and-swap that also expects this host (``_task_updater``): a
server deleted or evacuated meanwhile stops the snapshot before the
guest is touched or the data is sent. The vm_state never changes. On
any failure the image is deleted unless its data was uploaded already
(a delete that came after the upload leaves a complete image, as Nova's).

Rotation deletes the oldest backups beyond ``rotation``, among only the
images whose properties say they are backups of this server of this
``backup_type`` (``new_image.is_backup_of``); the one just made
counts as the newest.
"""

import dataclasses

from oslo_log import log as logging
from oslo_utils import excutils

from nova.compute import operation
from nova.image import new_image
from nova.image import source as image_source
from nova.model import task_states

LOG = logging.getLogger(__name__)

SNAPSHOT = operation.Operation('snapshot', 'createImage',
                               'compute_snapshot_instance')
BACKUP = operation.Operation('backup', 'createBackup',
                             'compute_backup_instance')


@dataclasses.dataclass(frozen=True)
class Rotation:
    """What a backup keeps: the ``rotation`` newest of ``backup_type``."""
    backup_type: str
    rotation: int


def _task_updater(compute, instance, first_state):
    # Nova's update_task_state: the driver's way to move the task on.
    def update(task_state, expected_state=first_state):
        instance.task_state = task_state
        instance.save(expected_task_state=[expected_state],
                      expected_host=[compute.host])
    return update


def run(runner, compute, context, instance, image_id: str,
        rotation: Rotation | None = None) -> None:
    """Snapshot (``rotation`` None) or back up ``instance`` into the
    queued image ``image_id``; raises what failed, the image deleted."""
    images = image_source.for_host(compute.settings)
    operation_ = SNAPSHOT if rotation is None else BACKUP
    first_state = (task_states.IMAGE_SNAPSHOT if rotation is None
                   else task_states.IMAGE_BACKUP)
    uploaded = []

    def body():
        compute.check_storage_writable()
        compute.driver.snapshot(context, instance, image_id,
                                _task_updater(compute, instance,
                                              first_state))
        uploaded.append(image_id)
        if rotation is not None:
            rotate(images, instance.uuid, rotation, newest=image_id)

    try:
        runner.run(context, instance, operation_, body)
    except Exception:
        with excutils.save_and_reraise_exception():
            if not uploaded:
                _discard(images, image_id, instance)


def _discard(images, image_id, instance):
    try:
        images.discard(image_id)
        LOG.info('Deleted image %s of the failed snapshot', image_id,
                 instance=instance)
    except Exception:
        LOG.exception('Could not delete image %s of the failed snapshot',
                      image_id, instance=instance)


def rotate(images, instance_uuid: str, rotation: Rotation,
           newest: str) -> list[str]:
    """Delete the oldest of the server's backups of the type beyond
    ``rotation.rotation``, counting ``newest`` (the one just made) as the
    newest whatever the clock says; the ids deleted."""
    wanted = {'image_type': new_image.BACKUP,
              'instance_uuid': instance_uuid,
              'backup_type': rotation.backup_type}
    backups = [image for image in images.find_by_properties(wanted)
               if new_image.is_backup_of(image.properties, instance_uuid,
                                         rotation.backup_type)]
    # Newest first; times are to the second, the id breaks their ties.
    backups.sort(key=lambda image: (image.id == newest,
                                    image.created_at or '', image.id),
                 reverse=True)
    deleted = []
    for image in backups[rotation.rotation:]:
        LOG.info('Rotation: deleting backup %(id)s (%(type)s, keeping '
                 '%(n)d)', {'id': image.id, 'type': rotation.backup_type,
                            'n': rotation.rotation},
                 instance_uuid=instance_uuid)
        images.discard(image.id)
        deleted.append(image.id)
    return deleted
