"""What is being done to an instance right now, Nova's names and values.

``None`` means no task. The manager moves an instance through these under
its per-instance lock and with compare-and-swap saves, so two requests never
both believe they own an instance.
"""

SCHEDULING = 'scheduling'
BLOCK_DEVICE_MAPPING = 'block_device_mapping'
NETWORKING = 'networking'
SPAWNING = 'spawning'

IMAGE_SNAPSHOT = 'image_snapshot'
IMAGE_BACKUP = 'image_backup'
IMAGE_PENDING_UPLOAD = 'image_pending_upload'
IMAGE_UPLOADING = 'image_uploading'

REBUILDING = 'rebuilding'
REBUILD_BLOCK_DEVICE_MAPPING = 'rebuild_block_device_mapping'
REBUILD_SPAWNING = 'rebuild_spawning'

REBOOTING = 'rebooting'
REBOOT_PENDING = 'reboot_pending'
REBOOT_STARTED = 'reboot_started'
REBOOTING_HARD = 'rebooting_hard'
REBOOT_PENDING_HARD = 'reboot_pending_hard'
REBOOT_STARTED_HARD = 'reboot_started_hard'

PAUSING = 'pausing'
UNPAUSING = 'unpausing'
SUSPENDING = 'suspending'
RESUMING = 'resuming'

POWERING_OFF = 'powering-off'
POWERING_ON = 'powering-on'

DELETING = 'deleting'
SOFT_DELETING = 'soft-deleting'
RESTORING = 'restoring'

MIGRATING = 'migrating'

ALL = frozenset((
    SCHEDULING, BLOCK_DEVICE_MAPPING, NETWORKING, SPAWNING, IMAGE_SNAPSHOT,
    REBUILDING, REBUILD_BLOCK_DEVICE_MAPPING, REBUILD_SPAWNING, REBOOTING,
    REBOOT_PENDING, REBOOT_STARTED, REBOOTING_HARD, REBOOT_PENDING_HARD,
    REBOOT_STARTED_HARD, PAUSING, UNPAUSING, SUSPENDING, RESUMING,
    POWERING_OFF, POWERING_ON, DELETING, SOFT_DELETING, RESTORING,
    MIGRATING, IMAGE_BACKUP, IMAGE_PENDING_UPLOAD, IMAGE_UPLOADING))
