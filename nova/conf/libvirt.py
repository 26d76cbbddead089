"""Options of the libvirt virt driver."""

from oslo_config import cfg

libvirt_group = cfg.OptGroup('libvirt', title='Libvirt options')

libvirt_opts = [
    cfg.StrOpt('virt_type',
               default='kvm',
               choices=('kvm', 'qemu'),
               help="""
Domain type libvirt creates guests with.

Possible values:

* ``kvm``: hardware acceleration
* ``qemu``: software emulation (TCG); use it where ``/dev/kvm`` cannot boot
  a guest

Related options: ``connection_uri``.
"""),
    cfg.StrOpt('connection_uri',
               default='',
               help="""
libvirt URI to connect to.

When empty, ``qemu:///system``. ``test:///<absolute path>.xml`` uses libvirt's
own test driver with that node file (one file per simulated host), which
needs no daemon.

Related options: ``virt_type``.
"""),
    cfg.StrOpt('vif_driver',
               choices=('auto', 'linuxbridge', 'noop'),
               default='auto',
               help="""
How instance VIFs are plugged on this host.

Possible values:

* ``linuxbridge``: a tap device per port attached to the network's Linux
  bridge; plugging fails when the bridge does not exist on this host
* ``noop``: nothing is created on the host; plugging still fails when the
  network's bridge is not listed in ``[network] bridges`` (used with
  libvirt's test driver)
* ``auto``: ``noop`` for ``test://`` URIs, ``linuxbridge`` otherwise
"""),
    cfg.StrOpt('images_type',
               choices=('qcow2', 'raw'),
               default='qcow2',
               help="""
Format of the instance disks created from an image.

Possible values:

* ``qcow2``: a copy-on-write overlay backed by the cached base image in
  ``<instances_path>/_base/``
* ``raw``: a full raw copy of the image, independent of the cache

Related options: ``instances_path``.
"""),
    cfg.StrOpt('config_dir',
               default='/etc/libvirt',
               help="""
libvirt's configuration directory on this host, where nova-compute reads
which lock manager libvirtd runs with (``qemu.conf``: ``lock_manager``;
``qemu-lockd.conf``, ``qemu-sanlock.conf``).

The service records what it reads in its service row (shown by ``GET
/os-disk-leases`` and ``nova service-list``), counting lockd's leases as
none when its mount table shows they cannot reach another host (a
``file_lockspace_dir`` off the mount of ``instances_path``, NFS mounted
with ``nolock`` or ``local_lock``), and warns, at start, when the host
shares its instance storage with another host while either takes no disk
leases: then nothing stops an evacuation from starting a second QEMU on
the disks of a guest that still runs on a partitioned host
(doc/source/cleanup.rst, "Fencing").
"""),
    cfg.IntOpt('wait_running_timeout',
               default=60,
               min=1,
               help="Seconds spawn waits for a started guest to report "
                    "running."),
]


def register_opts(conf):
    conf.register_group(libvirt_group)
    conf.register_opts(libvirt_opts, group=libvirt_group)


def list_opts():
    return {libvirt_group: libvirt_opts}
