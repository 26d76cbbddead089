"""Options of the orphan reaper (``nova/compute/reaper.py``) and of the
aging of the image cache it does."""

from oslo_config import cfg

reaper_opts = [
    cfg.IntOpt('reap_orphans_interval',
               default=600,
               help="""
Seconds between two runs of the orphan reaper on a compute host.

Each run, on this host only: cleans up after evacuations away from it that
are done (its stale domain powered off and undefined, its copy of the
instance directory quarantined when the evidence allows); powers off and
undefines domains of instances the database places on another host after
a failed evacuation to this host, or of deleted instances (never their
disks, never a domain the database has never heard of, never one whose
instance has an operation in progress); removes ``.part-`` files of
attempts and image fetches that nothing runs any more; and ages out base
images no instance uses (``[image_cache]`` options).

Possible values:

* a positive number of seconds
* 0: run at the default rate, ``periodic_interval``
* a negative number: never (``nova-manage host reap --yes`` still reaps;
  the stale ``.part-`` files are still removed when the service starts)

Related options: ``reap_orphans_dry_run``, ``periodic_interval``,
``[image_cache] remove_unused_base_images``.
"""),
    cfg.BoolOpt('reap_orphans_dry_run',
                default=False,
                help="""
Whether the orphan reaper only logs what it would do.

When true, the periodic reaper (and its run when the service starts)
changes nothing: every domain it would stop and every file it would remove
is logged with the reason. ``nova-manage host reap`` without ``--yes``
shows the same as a table.

Related options: ``reap_orphans_interval``.
"""),
]

image_cache_group = cfg.OptGroup(
    'image_cache', title='Image cache options',
    help='How the orphan reaper ages out the base images in '
         '``<instances_path>/_base``.')

image_cache_opts = [
    cfg.BoolOpt('remove_unused_base_images',
                default=True,
                help="""
Whether the orphan reaper removes base images that no instance uses.

A base image in ``<instances_path>/_base`` goes when no disk of any
instance directory under ``instances_path`` (quarantined ones included)
has it as its qcow2 backing file, and it was last used (fetched, or used
by a spawn) more than ``remove_unused_original_minimum_age_seconds`` ago.
It is removed under the image's lock, so no fetch on any host sharing the
storage runs meanwhile. When the reaper cannot tell what a disk uses (a
missing or corrupt ``disk.info``, a disk it does not list, a qcow2 disk
``qemu-img`` cannot read), no base image is removed in that run.

Related options: ``remove_unused_original_minimum_age_seconds``,
``[DEFAULT] reap_orphans_interval``.
"""),
    cfg.IntOpt('remove_unused_original_minimum_age_seconds',
               default=86400,
               min=0,
               help="""
Seconds since a base image was last used before the reaper may remove it
as unused.

Every fetch from the cache (each spawn that uses the image) makes the base
image young again, so one that a spawn in progress uses is never old
enough.

Possible values: 0 or more seconds.

Related options: ``remove_unused_base_images``.
"""),
]


def register_opts(conf):
    conf.register_opts(reaper_opts)
    conf.register_group(image_cache_group)
    conf.register_opts(image_cache_opts, group=image_cache_group)


def list_opts():
    return {'DEFAULT': reaper_opts, image_cache_group: image_cache_opts}
