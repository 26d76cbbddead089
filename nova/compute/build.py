"""Build: create and start the guest of a new instance on this host.

The instance is placed here (``host``, ``node``) in the same
compare-and-swap save that claims it (``task_state`` ``spawning``), so a
crash during spawn leaves it on this host for ``init_host`` to put in
ERROR. A failed spawn has already removed what it created (the driver's
contract); the instance goes to ERROR with a fault and the host is as it
was. The build is an attempt with a token (``attempts.py``): claimed
with ``spawning``, checked before each side effect of the spawn, and
recorded ``landed`` in the save that makes the instance ACTIVE (which
also sets ``launched_at`` and ``disks_exist``). The spawn's journal is
completed only after that save: a crash before it leaves an open journal,
and the restart asks the database whether the attempt landed
(``recovery.py``). The instance's
network_info records the VIFs; they become ``active`` when their
``network-vif-plugged`` events arrive (``events.py``).

A delete may come at any step (the API takes it in any task state and
clears the token). The build holds the instance's lock from its claim
to the end of its attempt, undone or completed, so the delete (waiting
for that lock) never meets a half-undone attempt: the build owns its
attempt and removes what it made, then the delete removes the rest. Two
removals of one directory at once failed the delete (``ENOENT``).
"""

from oslo_log import log as logging
from oslo_utils import excutils

from nova.compute import attempts
from nova.compute import operation
from nova import crashpoint

LOG = logging.getLogger(__name__)

BUILD = operation.Operation('build', 'create',
                            'compute_build_and_run_instance')


def place(compute, instance, network_info):
    """Set what the claim saves with it: this host and the VIFs."""
    if instance.host is None:
        instance.host = compute.host
    if instance.node is None:
        instance.node = compute.driver.get_available_nodes()[0]
    if network_info is not None:
        instance.network_info = network_info


def run(runner, compute, context, instance, token, network_info, body):
    """Run ``body`` (``spawn``) as the build of ``instance`` with
    ``token`` (``attempts.Claim``): claimed, recorded, then the attempt
    undone or completed, all under the instance's lock."""
    crashpoint.reached('build.before_claim')
    with runner.locks.lock(instance.uuid):
        place(compute, instance, network_info)
        try:
            runner.run(context, instance, BUILD, body, token=token,
                       lock=False)
        except Exception:
            # Spawn undid its own failure. A build that failed after its
            # spawn is undone here, unless the database records it as
            # landed: then what it made is the instance's (an action
            # event that could not be written after the ACTIVE save must
            # not undo a build that succeeded).
            with excutils.save_and_reraise_exception():
                attempts.undo_unless_landed(compute, context, instance,
                                            token.attempt)
        crashpoint.reached('build.after_active')
        compute.driver.complete_attempt(instance, token.attempt)


def spawn(compute, context, instance, image_meta, attempt=None):
    """The driver's spawn, as ``attempt`` (completed by the caller once
    the result is recorded); ``StorageUnavailable`` first when this host's
    instance storage is not there (``storage_report.StorageReporter``)."""
    compute.check_storage_writable()
    compute.driver.spawn(context, instance, image_meta,
                         network_info=instance.network_info,
                         attempt=attempt)
    crashpoint.reached('build.before_active')
