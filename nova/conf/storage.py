"""Options about the instance storage: its identity, quarantine, and the
fault injection the crash tests use."""

from oslo_config import cfg

# Where nova/crashpoint.py can kill the process, in the order an operation
# reaches them.
CRASH_POINTS = {
    'build.before_claim':
        'the build reached its host (and its turn among the concurrent '
        'builds); the instance is not claimed yet, its lock not taken',
    'spawn.after_mkdir': 'the instance directory was just made',
    'spawn.writing_root_disk':
        'the root disk was written in full under its .part- name, neither '
        'flushed nor renamed to its final name (a kill while qemu-img still '
        'writes it leaves a partial .part- file: tests kill the process '
        'from outside for that, no crash point being inside qemu-img)',
    'spawn.after_disk_info': 'disk.info was written',
    # In _create_domain_and_network: every start of a guest (spawn,
    # power on, hard reboot, resume) passes these.
    'start.after_plug_vifs': 'VIFs plugged, the domain not defined yet',
    'start.after_define': 'the domain was defined, not started',
    'start.waiting_for_vif_events':
        'the guest runs paused, waiting for network-vif-plugged',
    'start.after_resume': 'the guest runs; the start has not returned',
    'build.before_active': 'spawn returned; the row is not ACTIVE yet',
    'evacuate.after_claim':
        'the target claimed the migration and its attempt the token',
    'evacuate.after_ports_bound':
        'the ports are bound to the target; task not rebuild_spawning yet',
    'rebuild.after_spawning':
        'the task is rebuild_spawning (a rebuild\'s old disks not yet '
        'removed); spawn not begun',
    'build.after_active':
        'the row is ACTIVE and the attempt landed; its journal not yet '
        'completed',
    'evacuate.before_instance_moves':
        'spawn returned on the target; the row still on the source',
    'evacuate.after_instance_moves':
        'the row moved to the target and the migration is done (one '
        'transaction); the attempt not completed yet',
    'source.during_cleanup':
        'the returning source destroyed the domain of an evacuated '
        'instance; its files not yet moved aside',
    'quarantine.after_rename':
        'a directory was moved to quarantine; its reason not recorded',
    'reaper.during_reap': 'the reaper stopped one orphan domain',
}

storage_opts = [
    cfg.BoolOpt('instances_path_must_be_mounted',
                default=False,
                help="""
Whether ``instances_path`` must be a mount point (NFS or another shared or
remote file system mounted there).

When true and ``instances_path`` is not mounted, the compute service builds
and evacuates nothing onto it (it would write into the bare mount point,
hidden once the file system is mounted over it), decides nothing that
could delete, and disables itself with a reason starting ``AUTO:`` that
``nova service-list`` shows; it enables itself again once the mount is
there. Bind mounts count.

Related options: ``instances_path``.
"""),
    cfg.IntOpt('quarantine_max_age',
               default=7 * 24 * 3600,
               min=0,
               help="""
Seconds an instance directory stays in ``<instances_path>/_quarantine``
before the periodic purge deletes it.

Directories are quarantined, not deleted, wherever a decision to remove
them rests on inference rather than on "this very attempt created it": the
leftover of an earlier evacuation attempt, a source's copy after an
evacuation, an orphan removed by ``nova-manage host cleanup``, a directory
a crashed attempt created that holds files it did not record. Move one
back to ``<instances_path>/<uuid>`` to recover it.

Related options: ``purge_quarantine_interval``.
"""),
    cfg.IntOpt('purge_quarantine_interval',
               default=3600,
               help="""
Seconds between two runs of the task that deletes quarantined instance
directories older than ``quarantine_max_age``.

Possible values:

* a positive number of seconds
* 0: run at the default rate, ``periodic_interval``
* a negative number: never (``nova-manage host purge-quarantine`` still
  purges)

Related options: ``quarantine_max_age``, ``periodic_interval``.
"""),
]

fault_injection_group = cfg.OptGroup(
    'fault_injection', title='Fault injection (tests only)',
    help='Options that make the service fail on purpose, for crash tests. '
         'Never set them in production.')

fault_injection_opts = [
    cfg.StrOpt('crash_point',
               # With their descriptions, so the sample says what each
               # point leaves.
               choices=sorted(CRASH_POINTS.items()),
               help="""
Name of a crash point (``nova/crashpoint.py`` says where each is). When the
process reaches it, it kills itself with SIGKILL, as a power cut or an OOM
kill would: no cleanup, no exception handler, no log flush. Tests use it
to prove that a restart leaves nothing partial behind.

Possible values: unset (the default: never), or one crash point name.
"""),
    cfg.StrOpt('stall_point',
               choices=sorted(CRASH_POINTS.items()),
               help="""
Name of a crash point (``nova/crashpoint.py``). The first time the process
reaches it, it stops itself with SIGSTOP, as a hung NFS write or a host
cut off from the control plane would hold it: everything it does stops
there until something sends it SIGCONT. Tests use it to give up on an
attempt at a chosen step and prove that, once it goes on, it does nothing
its lost token forbids.

Possible values: unset (the default: never), or one crash point name.

Related options: ``crash_point``.
"""),
]


def register_opts(conf):
    conf.register_opts(storage_opts)
    conf.register_group(fault_injection_group)
    conf.register_opts(fault_injection_opts, group=fault_injection_group)


def list_opts():
    return {'DEFAULT': storage_opts,
            fault_injection_group: fault_injection_opts}
