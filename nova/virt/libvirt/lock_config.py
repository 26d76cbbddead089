"""Which disk leases this host's libvirt takes, read from its configuration.

libvirt does not say over its API which lock manager it runs with, so the
compute service reads what libvirtd reads: ``qemu.conf`` in libvirt's
configuration directory (``[libvirt] config_dir``, ``/etc/libvirt``) and,
for the lock manager it names, that plugin's file. A disk is protected
only when the plugin takes a lease on every disk by itself
(``auto_disk_leases``): this project writes no ``<lease>`` elements.

=========================  ==================================================
``qemu.conf``              disk leases
=========================  ==================================================
no ``lock_manager`` (or    none
``"nop"``)
``lock_manager = "lockd"`` yes, unless ``qemu-lockd.conf`` sets
                           ``auto_disk_leases = 0`` (on by default); on the
                           disk files themselves, or in ``file_lockspace_dir``
``lock_manager =           only with ``auto_disk_leases = 1`` in
"sanlock"``                ``qemu-sanlock.conf`` (off by default)
anything else              unknown
=========================  ==================================================

A file that cannot be read makes the answer unknown, never "none".
libvirtd reads its configuration when it starts, so what is read here is
what a libvirtd started since the last change runs with.

Configured leases of lockd count only where they reach the other hosts
(``lease_reach``: the lockspace on the storage of ``instances_path``, no
NFS mount keeping the locks on this host). When they cannot, the answer
is "none", and when the mount table cannot tell, unknown; ``reason`` says
why in both cases (it is shown with the answer, ``GET /os-disk-leases``).

Example::

    leases = lock_config.read('/etc/libvirt', '/var/lib/nova/instances')
    leases.manager        # 'lockd', 'sanlock', 'none' or None (unknown)
    leases.detail         # what was read, in words
    leases.reason         # why configured leases do not count, or None
"""

import dataclasses
import os
import re

from nova.virt.libvirt import lease_reach

LOCKD = 'lockd'
SANLOCK = 'sanlock'
NONE = 'none'

# libvirt's configuration syntax: ``name = value``, value a quoted string
# or an integer (lists are never needed here), ``#`` to the end of a line.
_SETTING = re.compile(r'^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*'
                      r'(?:"(?P<string>(?:[^"\\]|\\.)*)"|(?P<int>-?\d+))')


@dataclasses.dataclass(frozen=True)
class DiskLeases:
    """What protects this host's disks from a second host."""
    manager: str | None     # LOCKD, SANLOCK, NONE, or None: unknown
    detail: str
    # Why the leases libvirt is configured to take protect nothing
    # (manager NONE) or may not (None); None when nothing was found
    # against them, or none are configured.
    reason: str | None = None

    @property
    def protected(self) -> bool | None:
        """True with leases, False without, None when unknown."""
        if self.manager is None:
            return None
        return self.manager != NONE


def parse(text: str) -> dict:
    """{name: str or int} of a libvirt configuration file's settings (the
    last of a name wins, as in libvirt)."""
    settings: dict[str, str | int] = {}
    for line in text.splitlines():
        match = _SETTING.match(line)
        if match is None:
            continue
        if match.group('int') is not None:
            settings[match.group('name')] = int(match.group('int'))
        else:
            settings[match.group('name')] = re.sub(
                r'\\(.)', r'\1', match.group('string'))
    return settings


def _read(path):
    """(settings, None), ({}, None) when the file does not exist, or
    (None, why) when it cannot be read."""
    try:
        with open(path) as f:
            return parse(f.read()), None
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as e:
        return None, 'cannot read %s: %s' % (path, getattr(e, 'strerror',
                                                           None) or e)


def read(config_dir: str, instances_path: str | None = None,
         mountinfo: str | None = None) -> DiskLeases:
    """The disk leases libvirt's configuration in ``config_dir`` gives to
    the disks under ``instances_path``: lockd's checked against the mount
    table (``mountinfo``, by default this process's) when it is given."""
    qemu_conf = os.path.join(config_dir, 'qemu.conf')
    settings, problem = _read(qemu_conf)
    if settings is None:
        return DiskLeases(None, problem)
    manager = settings.get('lock_manager', 'nop')
    if manager == 'nop':
        return DiskLeases(NONE, '%s sets no lock_manager: libvirt takes no '
                                'disk leases' % qemu_conf)
    if manager not in (LOCKD, SANLOCK):
        return DiskLeases(None, '%s: lock_manager = "%s" is not known here'
                          % (qemu_conf, manager))
    plugin_conf = os.path.join(config_dir, 'qemu-%s.conf' % manager)
    plugin, problem = _read(plugin_conf)
    if plugin is None:
        return DiskLeases(None, problem)
    # lockd leases every disk unless told not to; sanlock only when told.
    auto = plugin.get('auto_disk_leases', 1 if manager == LOCKD else 0)
    if not auto:
        return DiskLeases(NONE, '%s: lock_manager = "%s" but %s has '
                                'auto_disk_leases = 0, and nova writes no '
                                '<lease> elements: no disk is leased'
                          % (qemu_conf, manager, plugin_conf))
    lockspace = None
    if manager == LOCKD:
        lockspace = plugin.get('file_lockspace_dir') or None
        where = ('in the lockspace directory %s' % lockspace if lockspace
                 else 'on the disk files themselves')
    else:
        where = 'in %s' % plugin.get('disk_lease_dir',
                                     '/var/lib/libvirt/sanlock')
    detail = 'lock_manager = "%s" (%s): a lease on every disk, %s' % (
        manager, qemu_conf, where)
    if manager != LOCKD or instances_path is None:
        return DiskLeases(manager, detail)
    reach = lease_reach.check(instances_path, lockspace, mountinfo)
    if reach.crosses:
        return DiskLeases(manager, '%s (%s)' % (detail, reach.reason))
    # Leases that stay on this host protect from nothing: "none", as if
    # none were configured, so that everything reading the answer warns.
    return DiskLeases(NONE if reach.crosses is False else None,
                      '%s; but %s' % (detail, reach.reason),
                      reason=reach.reason)
