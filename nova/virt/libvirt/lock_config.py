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

Example::

    leases = lock_config.read('/etc/libvirt')
    leases.manager        # 'lockd', 'sanlock', 'none' or None (unknown)
    leases.detail         # what was read, in words
"""

import dataclasses
import os
import re

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


def read(config_dir: str) -> DiskLeases:
    """The disk leases libvirt's configuration in ``config_dir`` gives."""
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
    if manager == LOCKD:
        where = plugin.get('file_lockspace_dir')
        where = ('in the lockspace directory %s' % where if where
                 else 'on the disk files themselves')
    else:
        where = 'in %s' % plugin.get('disk_lease_dir',
                                     '/var/lib/libvirt/sanlock')
    return DiskLeases(manager, 'lock_manager = "%s" (%s): a lease on every '
                               'disk, %s' % (manager, qemu_conf, where))
