"""Options about the instance storage: its identity, quarantine, and the
fault injection the crash tests use."""

from oslo_config import cfg

from nova import crashpoint


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
               choices=sorted(crashpoint.POINTS.items()),
               help="""
Name of a crash point (``nova/crashpoint.py`` says where each is). When the
process reaches it, it kills itself with SIGKILL, as a power cut or an OOM
kill would: no cleanup, no exception handler, no log flush. Tests use it
to prove that a restart leaves nothing partial behind.

Possible values: unset (the default: never), or one crash point name.
"""),
    cfg.StrOpt('stall_point',
               choices=sorted(crashpoint.POINTS.items()),
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
    if conf is cfg.CONF:
        # crashpoint sits below the configuration (drivers reach it and
        # must not reach the configuration through it): it is told where
        # its two settings are.
        crashpoint.read_settings_from(
            lambda: crashpoint.Settings(
                crash_point=conf.fault_injection.crash_point,
                stall_point=conf.fault_injection.stall_point))


def list_opts():
    return {'DEFAULT': storage_opts,
            fault_injection_group: fault_injection_opts}
