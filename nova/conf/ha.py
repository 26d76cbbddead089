"""Options of nova-hamonitor (``nova/ha/``): how it watches compute hosts,
fences a failed one and recovers it."""

from oslo_config import cfg

ha_group = cfg.OptGroup(
    'ha', title='Instance high availability options',
    help='How nova-hamonitor decides that a compute host failed, fences it '
         'and evacuates its instances (doc/source/ha.rst).')

ha_opts = [
    cfg.StrOpt('fence_command',
               help="""
The fence agent: a command that powers a compute host off, run with the
host's name as its last argument (split as a shell would, never run
through one).

Exit status 0 means the host is off and stays off until an operator brings
it back; anything else (or no answer within ``fence_timeout``) means it was
not fenced, and the monitor then does nothing else to that host. Examples:
a wrapper around ``fence_ipmilan`` or a BMC's API.

Possible values:

* unset (default): no fence agent. A failed host is recovered only when
  every instance on it has its disks on shared storage guarded by working
  disk leases (``GET /os-disk-leases``); otherwise an alert says the host
  needs fencing and why (``nova-manage ha alerts``).
* a command line, e.g. ``/usr/local/bin/fence-host --bmc-config
  /etc/nova/bmc.conf``

Related options: ``fence_timeout``.
"""),
    cfg.IntOpt('fence_timeout',
               default=120,
               min=1,
               help="""
Seconds the fence agent may take before the host counts as not fenced.

Related options: ``fence_command``.
"""),
    cfg.IntOpt('check_interval',
               default=10,
               min=1,
               help="""
Seconds between two looks of the monitor at every compute service.

Related options: ``[DEFAULT] service_down_time`` (how long a compute
service may miss heartbeats before it counts as down).
"""),
    cfg.IntOpt('lease_duration',
               default=30,
               min=2,
               help="""
Seconds a monitor's lease lasts unless renewed.

One monitor acts per region: the one holding the lease, which it renews
at each check and checks again right before each step of a recovery. A
monitor that stops (or stalls) loses it after this long and another one
takes over, carrying on the recoveries it left midway. Must be longer
than ``check_interval``; every monitor's clock must be right to within a
fraction of it.

Related options: ``check_interval``, ``region``.
"""),
    cfg.IntOpt('flap_window',
               default=3600,
               min=0,
               help="""
Seconds after a host's recovery during which it is not recovered again.

A host that fails, is recovered, comes back and fails again within this
window is left alone (logged): its instances were already moved once and
a host that keeps failing is an operator's to look at. After the window a
new failure is recovered again.

Possible values: 0 or more seconds.
"""),
    cfg.IntOpt('lease_retry_interval',
               default=60,
               min=1,
               help="""
Seconds between two evacuations of an unfenced host's instances that the
disk leases refused.

With no fence agent, a failed host whose disks are on shared storage under
working disk leases is evacuated to the hosts that share that storage only:
there a guest that still runs on the failed host (a partition, not a power
loss) keeps its lease and the new guest is refused, with the disks kept.
Instances so refused stay on the failed host; every this many seconds the
monitor evacuates those left there again, until the leases are free (the
host really died or was fenced) or the host comes back.

Related options: ``fence_command``, ``check_interval``.
"""),
    cfg.StrOpt('libvirt_uri',
               help="""
How the monitor reaches a compute host's libvirtd, read-only, to ask
whether guests still run there: a libvirt URI with ``%s`` where the host's
name goes (the name its compute service reports).

A host whose nova-compute missed its heartbeats but whose libvirtd answers
with guests running is not failed: only nova-compute is gone. It is
neither fenced nor evacuated; an alert says so (``nova-manage ha
alerts``), and with ``recovery = masakari`` Masakari gets a process-failure
notification (it disables the compute service). A libvirtd that does not
answer within ``probe_timeout``, or answers with nothing running, leaves
the decision to the heartbeats.

Possible values:

* unset (default): no libvirtd is asked; heartbeats decide alone, so a
  host whose nova-compute alone died is taken for a failed one (fenced,
  with a fence agent).
* a URI template, e.g. ``qemu+tcp://%s/system`` or
  ``qemu+ssh://nova@%s/system`` (the monitor's user needs read-only
  access only).

Related options: ``probe_timeout``, ``fence_command``.
"""),
    cfg.IntOpt('probe_timeout',
               default=5,
               min=1,
               help="""
Seconds a compute host's libvirtd may take to answer before it counts as
not reached.

Related options: ``libvirt_uri``.
"""),
    cfg.StrOpt('region',
               default='RegionOne',
               help="""
The region this monitor watches: one monitor acts per region at a time,
however many run (the lease is taken per region).
"""),
    cfg.StrOpt('recovery',
               default='builtin',
               choices=[
                   ('builtin', 'the monitor evacuates a failed host itself, '
                               'through host-evacuate'),
                   ('masakari', 'the monitor posts a host-failure '
                                'notification to Masakari, which '
                                'evacuates'),
               ],
               help="""
Who evacuates a failed host once the monitor fenced it (or found it safe
without fencing) and forced its compute service down.

With ``masakari`` the monitor posts Masakari's host-failure notification
(``POST /v1/notifications``, type ``COMPUTE_HOST``) to the ``instance-ha``
endpoint of the service catalog, as the service user of ``[masakari]``, and
Masakari's engine recovers the host through the Compute API according to
its failover segment (``auto``, ``reserved_host``, ...). The host must be
in one of Masakari's segments. A Masakari that answers an error, or none,
gets an alert and the notification is posted again at the next check; the
monitor never evacuates a fenced host itself then.

A host recovered without fencing (no ``fence_command``, its disks on shared
storage under working disk leases) is evacuated by the monitor itself even
with ``masakari``: only to the hosts that share its storage, where the
leases refuse a second guest while the first may still run. Masakari's
evacuations cannot be held to those hosts.

Related options: ``[masakari]`` (where Masakari is and who the monitor is
to it).
"""),
]


def register_opts(conf):
    conf.register_group(ha_group)
    conf.register_opts(ha_opts, group=ha_group)


def list_opts():
    return {ha_group: ha_opts}
