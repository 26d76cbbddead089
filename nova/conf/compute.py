"""Options of the compute service and its instance lifecycle."""

from oslo_config import cfg

compute_opts = [
    cfg.StrOpt('instances_path',
               default='$state_path/instances',
               help="""
Directory holding one sub-directory per instance (``<uuid>/disk``,
``disk.info``, ``libvirt.xml``, ``console.log``) and the image cache in
``_base/``.

Several hosts may mount the same directory (shared storage); the service
recognises that from an identity marker at the root of this directory, never
from the presence of an instance directory.

Related options: ``state_path``.
"""),
    cfg.StrOpt('compute_driver',
               default='libvirt.LibvirtDriver',
               help="""
Virt driver the compute service uses, as ``<module under nova.virt>.<class>``.

Possible values:

* ``libvirt.LibvirtDriver``: libvirt (its test driver, or libvirtd with QEMU)
* ``fake.FakeDriver``: in-memory driver for tests; can be told to fail at a
  named step
"""),
    cfg.IntOpt('vif_plugging_timeout',
               default=300,
               min=0,
               help="""
Seconds to wait for ``network-vif-plugged`` events after plugging an
instance's VIFs before going on (or failing, see ``vif_plugging_is_fatal``).

Possible values: 0 disables waiting; any positive number of seconds.

Related options: ``vif_plugging_is_fatal``.
"""),
    cfg.BoolOpt('vif_plugging_is_fatal',
                default=True,
                help="""
Whether a VIF plugging timeout fails the operation.

When true, an instance whose ``network-vif-plugged`` events do not arrive
within ``vif_plugging_timeout`` fails to start and is cleaned up as the
cleanup contract says. When false, the guest is started anyway.

Related options: ``vif_plugging_timeout``.
"""),
    cfg.BoolOpt('resume_guests_state_on_host_boot',
                default=False,
                help="""
Whether to start again, when the compute service starts, the guests that
were running before the host went down.

A guest that fails to come back goes to ERROR; its disks are kept.
"""),
    cfg.IntOpt('shutdown_timeout',
               default=60,
               min=0,
               help="""
Seconds to wait for a guest to shut down cleanly when it is stopped or
destroyed before it is powered off forcibly.
"""),
    cfg.IntOpt('reboot_timeout',
               default=0,
               min=0,
               help="""
Seconds after which an instance stuck in a reboot task state is marked ERROR
by the periodic task. 0 disables the check.
"""),
    cfg.IntOpt('max_concurrent_builds',
               default=10,
               min=1,
               help="Maximum number of instance builds to run at once on "
                    "a host."),
    cfg.IntOpt('update_resources_interval',
               default=60,
               help="""
Seconds between two records of a compute host's resources (capacity of its
hypervisor node, and what the instances the database places on it use) in
the ``compute_nodes`` table. The host also records them when it starts. The
conductor reads them to choose evacuation targets, so a host whose row is
missing ranks after every host known to have room.

Possible values:

* a positive number of seconds
* 0: run at the default rate, ``periodic_interval``
* a negative number: never after start

Related options: ``periodic_interval``.
"""),
    cfg.IntOpt('sync_power_state_interval',
               default=600,
               help="""
Seconds between two runs of the task that records, for every instance of the
host without a task in progress, the power state the hypervisor reports. It
only records and logs: an active instance whose guest is found shut off is
reported, not stopped; a missing guest becomes power state NOSTATE and is
logged; nothing is ever started or deleted by this task.

Possible values:

* a positive number of seconds
* 0: run at the default rate, ``periodic_interval``
* a negative number: disabled

Related options: ``periodic_interval``.
"""),
]


def register_opts(conf):
    conf.register_opts(compute_opts)


def list_opts():
    return {'DEFAULT': compute_opts}
