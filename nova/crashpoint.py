"""Named points where a test can make the process die as a power cut would.

``reached(name)`` does nothing unless ``[fault_injection] crash_point`` is
``name``; then the process sends itself SIGKILL: no exception, no
``finally``, no cleanup, exactly what a kill -9 or an OOM kill leaves.
Crash tests run a compute service (or one operation of its manager) in a
process of its own with the option set, wait for it to die, restart the
host and check what the restart leaves: no orphan, no partial disk ever
booted, every disk that existed before byte for byte as it was.

``before_kill`` hooks run just before the signal. They exist for the
libvirt *test* driver only: its domains live in the dying process, while a
real libvirtd outlives nova-compute, so a test registers a hook that writes
the test driver's domains into its node file (what libvirtd would still
hold). Product code registers none.

``[fault_injection] stall_point`` names a point where the process, the
first time it gets there, stops itself with SIGSTOP instead: a hung NFS
write, or a host cut off from the control plane, at exactly that step; a
test continues it (SIGCONT) once it has given up on what it was doing.

The same points are where a test holds an operation still, as a hung NFS
write or a slow image lookup would: ``observe(hook)`` has ``hook(name)``
called at every point reached, in the thread that reached it, and the
hook may block. In the product one observer is registered: ``nova.phases``
marks the time each point is reached (never blocking), as the boundaries
of an operation's phases.

The points, in the order an operation reaches them:
"""

import dataclasses
import os
import signal
import threading
from typing import Callable

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# Where this module can kill the process, in the order an operation
# reaches them.
POINTS = {
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
    'hamonitor.after_fence':
        'nova-hamonitor fenced a failed host and recorded it; the host\'s '
        'service not forced down yet, its evacuation not started',
    'hamonitor.after_notify':
        'nova-hamonitor posted a failed host\'s notification and Masakari '
        'took it; its uuid not recorded with the recovery yet',
}


@dataclasses.dataclass(frozen=True)
class Settings:
    """``[fault_injection]``: where to crash, where to stall."""
    crash_point: str | None = None
    stall_point: str | None = None


# Nothing is injected until the configuration says where its settings
# are (nova.conf.storage does, when it registers them).
_settings: Callable[[], Settings] = Settings
__doc__ += ''.join('\n* ``%s``: %s' % item for item in POINTS.items())

_before_kill = []
_observers: list = []
_stalled: set = set()


def read_settings_from(reader: Callable[[], Settings]) -> None:
    """Where ``reached`` reads the settings, each time it is called (a
    test's configuration override takes effect at once)."""
    global _settings
    _settings = reader


def before_kill(hook) -> None:
    """Run ``hook()`` just before a crash (tests only, see above)."""
    _before_kill.append(hook)


def observe(hook):
    """Call ``hook(name)`` at every point reached (see above); the
    function that stops it."""
    _observers.append(hook)
    return lambda: _observers.remove(hook)


def reached(name: str) -> None:
    if name not in POINTS:
        raise ValueError('unknown crash point %r' % name)
    for hook in tuple(_observers):
        hook(name)
    settings = _settings()
    if settings.stall_point == name and name not in _stalled:
        _stalled.add(name)
        LOG.critical('Stall point %s reached: stopping process %d', name,
                     os.getpid())
        # NOTE: to this thread, not the process: a SIGSTOP sent to the
        # process is taken by its main thread, and this one ran on until
        # the group stop reached it (a token check passed, then the stop,
        # then the guest started on SIGCONT without a second look). Sent
        # to itself, it stops before this call returns; the stop is still
        # the whole process's.
        signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)
    wanted = settings.crash_point
    if not wanted or wanted != name:
        return
    LOG.critical('Crash point %s reached: killing process %d', name,
                 os.getpid())
    for hook in _before_kill:
        hook()
    os.kill(os.getpid(), signal.SIGKILL)
