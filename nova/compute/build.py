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
"""

from oslo_log import log as logging

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


def spawn(compute, context, instance, image_meta, attempt=None):
    """The driver's spawn, as ``attempt`` (completed by the caller once
    the result is recorded); ``StorageUnavailable`` first when this host's
    instance storage is not there (``storage_report.StorageReporter``)."""
    compute.check_storage_writable()
    compute.driver.spawn(context, instance, image_meta,
                         network_info=instance.network_info,
                         attempt=attempt)
    crashpoint.reached('build.before_active')
