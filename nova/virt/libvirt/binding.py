"""The one module that imports libvirt-python.

Everything else in ``nova.virt.libvirt`` reaches libvirt through the names
below, so a test or a tool has one place to look at (and the rest of the
package reads as Nova code, not as binding calls).

libvirt's event loop is process-wide: ``virEventRegisterDefaultImpl`` must
run before the first ``open`` whose events we want, and one thread must keep
calling ``virEventRunDefaultImpl``. ``start_event_loop`` does both, once.
"""

import threading

import libvirt

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

Error = libvirt.libvirtError
virConnect = libvirt.virConnect
virDomain = libvirt.virDomain

# Error codes and domains we act on.
ERR_NO_SUPPORT = libvirt.VIR_ERR_NO_SUPPORT
ERR_INVALID_ARG = libvirt.VIR_ERR_INVALID_ARG
ERR_NO_DOMAIN = libvirt.VIR_ERR_NO_DOMAIN
ERR_OPERATION_INVALID = libvirt.VIR_ERR_OPERATION_INVALID
ERR_SYSTEM_ERROR = libvirt.VIR_ERR_SYSTEM_ERROR
ERR_INTERNAL_ERROR = libvirt.VIR_ERR_INTERNAL_ERROR
ERR_NO_CONNECT = libvirt.VIR_ERR_NO_CONNECT
ERR_INVALID_CONN = libvirt.VIR_ERR_INVALID_CONN
ERR_OPERATION_TIMEOUT = libvirt.VIR_ERR_OPERATION_TIMEOUT
# A lock manager refused a lease (lockd: "resource busy: Lockspace
# resource '<disk>' is locked", domain FROM_LOCKSPACE).
ERR_RESOURCE_BUSY = libvirt.VIR_ERR_RESOURCE_BUSY
ERR_XML_INVALID_SCHEMA = libvirt.VIR_ERR_XML_INVALID_SCHEMA
FROM_REMOTE = libvirt.VIR_FROM_REMOTE
FROM_RPC = libvirt.VIR_FROM_RPC
FROM_QEMU = libvirt.VIR_FROM_QEMU
FROM_LOCKING = libvirt.VIR_FROM_LOCKING
FROM_LOCKSPACE = libvirt.VIR_FROM_LOCKSPACE

# Domain states (virDomainState).
DOMAIN_NOSTATE = libvirt.VIR_DOMAIN_NOSTATE
DOMAIN_RUNNING = libvirt.VIR_DOMAIN_RUNNING
DOMAIN_BLOCKED = libvirt.VIR_DOMAIN_BLOCKED
DOMAIN_PAUSED = libvirt.VIR_DOMAIN_PAUSED
DOMAIN_SHUTDOWN = libvirt.VIR_DOMAIN_SHUTDOWN
DOMAIN_SHUTOFF = libvirt.VIR_DOMAIN_SHUTOFF
DOMAIN_CRASHED = libvirt.VIR_DOMAIN_CRASHED
DOMAIN_PMSUSPENDED = libvirt.VIR_DOMAIN_PMSUSPENDED

# Lifecycle events (virDomainEventType) and the detail we look at.
EVENT_ID_LIFECYCLE = libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE
EVENT_STARTED = libvirt.VIR_DOMAIN_EVENT_STARTED
EVENT_SUSPENDED = libvirt.VIR_DOMAIN_EVENT_SUSPENDED
EVENT_RESUMED = libvirt.VIR_DOMAIN_EVENT_RESUMED
EVENT_STOPPED = libvirt.VIR_DOMAIN_EVENT_STOPPED
EVENT_SHUTDOWN = libvirt.VIR_DOMAIN_EVENT_SHUTDOWN
EVENT_PMSUSPENDED = libvirt.VIR_DOMAIN_EVENT_PMSUSPENDED
EVENT_CRASHED = libvirt.VIR_DOMAIN_EVENT_CRASHED
EVENT_STOPPED_SAVED = libvirt.VIR_DOMAIN_EVENT_STOPPED_SAVED
# Why a guest stopped (virDomainEventStoppedDetailType), by the names
# Masakari's payloads use (``STOPPED_FAILED``).
EVENT_STOPPED_DETAILS = {
    libvirt.VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN: 'STOPPED_SHUTDOWN',
    libvirt.VIR_DOMAIN_EVENT_STOPPED_DESTROYED: 'STOPPED_DESTROYED',
    libvirt.VIR_DOMAIN_EVENT_STOPPED_CRASHED: 'STOPPED_CRASHED',
    libvirt.VIR_DOMAIN_EVENT_STOPPED_MIGRATED: 'STOPPED_MIGRATED',
    libvirt.VIR_DOMAIN_EVENT_STOPPED_SAVED: 'STOPPED_SAVED',
    libvirt.VIR_DOMAIN_EVENT_STOPPED_FAILED: 'STOPPED_FAILED',
    libvirt.VIR_DOMAIN_EVENT_STOPPED_FROM_SNAPSHOT: 'STOPPED_FROM_SNAPSHOT',
}

# Flags.
DEFINE_VALIDATE = libvirt.VIR_DOMAIN_DEFINE_VALIDATE
START_PAUSED = libvirt.VIR_DOMAIN_START_PAUSED
UNDEFINE_MANAGED_SAVE = libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE
UNDEFINE_SNAPSHOTS_METADATA = libvirt.VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA
DESTROY_GRACEFUL = libvirt.VIR_DOMAIN_DESTROY_GRACEFUL
LIST_DOMAINS_ALL = 0
LIST_DOMAINS_ACTIVE = libvirt.VIR_CONNECT_LIST_DOMAINS_ACTIVE
LIST_DOMAINS_MANAGEDSAVE = libvirt.VIR_CONNECT_LIST_DOMAINS_MANAGEDSAVE
STATS_STATE = libvirt.VIR_DOMAIN_STATS_STATE

_loop_lock = threading.Lock()
_loop_thread = None


def _quiet_error_handler(_ctx, _error):
    # libvirt prints every error to stderr by default; we raise and log
    # them ourselves, with the instance they are about.
    pass


libvirt.registerErrorHandler(_quiet_error_handler, None)


def _run_event_loop():
    while True:
        try:
            libvirt.virEventRunDefaultImpl()
        except Exception:  # keep the loop alive, whatever a callback did
            LOG.exception('libvirt event loop iteration failed')


def start_event_loop() -> None:
    """Register libvirt's default event loop and run it in a thread, once."""
    global _loop_thread
    with _loop_lock:
        if _loop_thread is not None:
            return
        libvirt.virEventRegisterDefaultImpl()
        _loop_thread = threading.Thread(target=_run_event_loop,
                                        name='libvirt-event-loop',
                                        daemon=True)
        _loop_thread.start()


def open_connection(uri: str) -> 'libvirt.virConnect':
    return libvirt.open(uri or None)


def active_domain_count(uri: str) -> int:
    """How many domains run (or are paused) at ``uri``, through a
    read-only connection opened and closed for the question: another
    service's look at a host (nova-hamonitor's probe). ``Error`` when
    that libvirtd cannot be reached."""
    conn = libvirt.openReadOnly(uri)
    try:
        return len(conn.listAllDomains(LIST_DOMAINS_ACTIVE))
    finally:
        conn.close()


def error_code(error: Exception) -> int | None:
    if isinstance(error, Error):
        return error.get_error_code()
    return None


def is_connection_error(error: Exception) -> bool:
    """Whether ``error`` says the connection itself is gone."""
    if not isinstance(error, Error):
        return False
    code = error.get_error_code()
    if code in (ERR_NO_CONNECT, ERR_INVALID_CONN):
        return True
    return (code in (ERR_SYSTEM_ERROR, ERR_INTERNAL_ERROR,
                     ERR_OPERATION_TIMEOUT)
            and error.get_error_domain() in (FROM_REMOTE, FROM_RPC))
