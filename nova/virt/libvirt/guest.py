"""One libvirt domain, spoken of as a guest.

``Guest`` is the only code besides ``host.py`` that calls a ``virDomain``;
it turns libvirt errors into the project's exceptions here, at the
boundary: a missing domain (``VIR_ERR_NO_DOMAIN``) is ``InstanceNotFound``,
a failed start ``InstancePowerOnFailure`` and so on.

A start refused because a disk is in use elsewhere is ``DiskLeaseHeld``,
naming the disk, whichever of the two guards refused it (libvirt 9.0,
QEMU 7.2):

* libvirt's lock manager (``lock_manager = "lockd"``): the lease on the
  disk is held by another virtlockd. ``VIR_ERR_RESOURCE_BUSY`` from
  ``VIR_FROM_LOCKSPACE``, "resource busy: Lockspace resource '<disk>' is
  locked" (with a ``file_lockspace_dir``, '<disk>' is the SHA-256 of the
  disk's path, mapped back here). libvirt takes leases when the guest's
  vCPUs start, so a guest started paused is refused by ``resume()``.
* QEMU's own image locking: the image is open in another QEMU.
  ``VIR_ERR_INTERNAL_ERROR`` from ``VIR_FROM_QEMU``, "... Failed to get
  "write" lock\nIs another process using the image [<disk>]?". On one
  file system both see each other, and QEMU, which opens its images
  before libvirt asks for the leases, refuses first.

Example::

    guest = host.get_guest(instance.uuid)
    if guest.is_active():
        guest.poweroff()
    guest.undefine()
"""

import contextlib
import hashlib
import re
import time
import xml.etree.ElementTree as etree

from oslo_log import log as logging

from nova import exception
from nova.model import diagnostics
from nova.model import hardware
from nova.model import power_state
from nova.virt.libvirt import binding

LOG = logging.getLogger(__name__)

# libvirt domain state -> Nova power state. A shut-off domain that holds a
# managed-save image is reported SUSPENDED (see Guest.get_power_state).
POWER_STATE_MAP = {
    binding.DOMAIN_NOSTATE: power_state.NOSTATE,
    binding.DOMAIN_RUNNING: power_state.RUNNING,
    binding.DOMAIN_BLOCKED: power_state.RUNNING,
    binding.DOMAIN_PAUSED: power_state.PAUSED,
    binding.DOMAIN_SHUTDOWN: power_state.SHUTDOWN,
    binding.DOMAIN_SHUTOFF: power_state.SHUTDOWN,
    binding.DOMAIN_CRASHED: power_state.CRASHED,
    binding.DOMAIN_PMSUSPENDED: power_state.SUSPENDED,
}

_POLL_INTERVAL = 0.05

_LOCKSPACE_BUSY = re.compile(r"Lockspace resource '(?P<disk>[^']+)' is "
                             r"locked")
_QEMU_LOCK = re.compile(r'Failed to get (?:shared )?"[a-z ]+" lock')
_QEMU_LOCK_IMAGE = re.compile(r'Is another process using the image '
                              r'\[(?P<disk>[^\]]+)\]')


def power_state_of(state: int, has_managed_save: bool) -> int:
    """The power state of a domain in libvirt ``state``: a shut off one
    with saved memory is suspended."""
    if state == binding.DOMAIN_SHUTOFF and has_managed_save:
        return power_state.SUSPENDED
    return POWER_STATE_MAP.get(state, power_state.NOSTATE)


def disk_paths(xml: str) -> list[str]:
    """The files of a domain's disks (``<source file=...>``)."""
    try:
        root = etree.fromstring(xml)
    except etree.ParseError:
        return []
    return [source.get('file', '') for source in
            root.findall('./devices/disk/source') if source.get('file')]


def lease_refusal(error, disks=()) -> exception.DiskLeaseHeld | None:
    """``DiskLeaseHeld`` when ``error`` says a disk is in use elsewhere,
    else None. ``disks``: the domain's disk files, to name the disk of a
    lease that libvirt reports by hash (a ``file_lockspace_dir``)."""
    code = binding.error_code(error)
    if code is None:
        return None
    message = error.get_error_message() or str(error)
    if code == binding.ERR_RESOURCE_BUSY:
        match = _LOCKSPACE_BUSY.search(message)
        disk = match.group('disk') if match else None
        if disk is not None and disk not in disks:
            for path in disks:
                if hashlib.sha256(path.encode()).hexdigest() == \
                        disk.rsplit('/', 1)[-1]:
                    disk = path
                    break
        return exception.DiskLeaseHeld(
            disk=disk or 'a disk of the guest',
            reason='its lease is held by another lock manager '
                   '(libvirt: %s)' % message.strip())
    lock = _QEMU_LOCK.search(message)
    if lock is not None:
        match = _QEMU_LOCK_IMAGE.search(message)
        return exception.DiskLeaseHeld(
            disk=match.group('disk') if match else 'a disk of the guest',
            reason='another QEMU has it open (QEMU\'s image lock: %s)'
                   % lock.group(0))
    return None


class Guest:
    def __init__(self, domain: binding.virDomain, host_name: str = ''):
        self._domain = domain
        self._host_name = host_name
        self.uuid = domain.UUIDString()
        self.name = domain.name()

    def __repr__(self):
        return '<Guest %s>' % self.uuid

    @contextlib.contextmanager
    def _translate(self, failure=exception.InternalError, **kwargs):
        """Raise libvirt errors as the project's exceptions."""
        try:
            yield
        except binding.Error as e:
            if binding.error_code(e) == binding.ERR_NO_DOMAIN:
                raise exception.InstanceNotFound(instance_id=self.uuid)
            if binding.is_connection_error(e):
                raise exception.HypervisorUnavailable(host=self._host_name)
            refusal = lease_refusal(e, self._disks_quietly())
            if refusal is not None:
                LOG.error('Disk in use elsewhere: %s', e,
                          instance_uuid=self.uuid)
                raise refusal from e
            message = e.get_error_message() or str(e)
            if failure is exception.InternalError:
                raise exception.InternalError(err=message)
            raise failure(reason=message, **kwargs)

    def _disks_quietly(self) -> list[str]:
        try:
            return disk_paths(self._domain.XMLDesc(0))
        except binding.Error:
            return []

    def disk_paths(self) -> list[str]:
        """The files of this domain's disks."""
        return disk_paths(self.get_xml())

    # -- state -------------------------------------------------------------

    def _state(self) -> int:
        with self._translate():
            return self._domain.state()[0]

    def is_active(self) -> bool:
        with self._translate():
            return bool(self._domain.isActive())

    def has_managed_save(self) -> bool:
        with self._translate():
            return bool(self._domain.hasManagedSaveImage(0))

    def get_power_state(self) -> int:
        state = self._state()
        return power_state_of(state, state == binding.DOMAIN_SHUTOFF
                              and self.has_managed_save())

    def get_info(self) -> hardware.InstanceInfo:
        return hardware.InstanceInfo(state=self.get_power_state(),
                                     internal_id=self.name)

    def get_resources(self) -> tuple[int, int]:
        """(vcpus, memory in MiB) the domain is defined with."""
        with self._translate():
            _state, max_mem_kib, _mem, vcpus, _cpu = self._domain.info()
        return vcpus, max_mem_kib // 1024

    def get_xml(self) -> str:
        with self._translate():
            return self._domain.XMLDesc(0)

    def _counters(self, method: str, device: str) -> tuple | None:
        """A device's counters, or None when libvirt cannot read them
        (a driver without them, a device without a host-side name)."""
        try:
            return getattr(self._domain, method)(device)
        except binding.Error as e:
            if binding.error_code(e) == binding.ERR_NO_DOMAIN:
                raise exception.InstanceNotFound(instance_id=self.uuid)
            LOG.debug('No %s for %s: %s', method, device, e,
                      instance_uuid=self.uuid)
            return None

    def get_diagnostics(self, hypervisor: str) -> diagnostics.Diagnostics:
        """The domain's figures now: CPU time by vCPU, memory, and the
        counters of each disk and interface libvirt can read."""
        with self._translate():
            state, max_mem_kib, mem_kib, vcpus, _cpu_ns = self._domain.info()
            xml = self._domain.XMLDesc(0)
        try:
            root: etree.Element | None = etree.fromstring(xml)
        except etree.ParseError:
            root = None
        try:
            vcpu_times = [(n, cpu_ns) for n, _state, cpu_ns, _pcpu
                          in self._domain.vcpus()[0]]
        except binding.Error:
            vcpu_times = [(n, None) for n in range(vcpus)]
        disks = []
        for target in ([] if root is None else
                       root.findall('./devices/disk/target')):
            stats = self._counters('blockStats', target.get('dev', ''))
            if stats is not None:
                rd_req, rd_bytes, wr_req, wr_bytes, errs = stats
                disks.append(diagnostics.DiskDetails(
                    read_bytes=rd_bytes, read_requests=rd_req,
                    write_bytes=wr_bytes, write_requests=wr_req,
                    errors_count=errs))
        nics = []
        for interface in ([] if root is None else
                          root.findall('./devices/interface')):
            device, mac = interface.find('target'), interface.find('mac')
            stats = (None if device is None else
                     self._counters('interfaceStats', device.get('dev', '')))
            if stats is None:
                continue
            (rx_bytes, rx_packets, rx_errs, rx_drop,
             tx_bytes, tx_packets, tx_errs, tx_drop) = stats
            nics.append(diagnostics.NicDetails(
                mac_address=None if mac is None else mac.get('address'),
                rx_octets=rx_bytes, rx_errors=rx_errs, rx_drop=rx_drop,
                rx_packets=rx_packets, tx_octets=tx_bytes,
                tx_errors=tx_errs, tx_drop=tx_drop, tx_packets=tx_packets))
        return diagnostics.Diagnostics(
            state=power_state.STATE_MAP[power_state_of(state, False)],
            driver='libvirt', hypervisor=hypervisor,
            hypervisor_os='linux',
            memory_maximum=max_mem_kib // 1024, memory_used=mem_kib // 1024,
            cpu_details=tuple(diagnostics.CpuDetails(id=n, time=cpu_ns)
                              for n, cpu_ns in vcpu_times),
            disk_details=tuple(disks), nic_details=tuple(nics))

    def wait_for_power_state(self, wanted: set[int], timeout: float) -> bool:
        """Poll until the power state is one of ``wanted``; False on timeout.
        """
        deadline = time.monotonic() + timeout
        while True:
            if self.get_power_state() in wanted:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_INTERVAL)

    # -- transitions -------------------------------------------------------

    def launch(self, pause: bool = False) -> None:
        """Start the defined domain (from its managed save, if it has one).

        ``pause`` starts it with its vCPUs stopped. Drivers without
        ``VIR_DOMAIN_START_PAUSED`` (libvirt's test driver) are started and
        paused at once instead.
        """
        with self._translate(exception.InstancePowerOnFailure):
            if not pause:
                self._domain.create()
                return
            try:
                self._domain.createWithFlags(binding.START_PAUSED)
                return
            except binding.Error as e:
                if binding.error_code(e) not in (binding.ERR_NO_SUPPORT,
                                                 binding.ERR_INVALID_ARG):
                    raise
            self._domain.create()
            self._domain.suspend()

    def resume(self, failure=exception.InstanceResumeFailure) -> None:
        """Let a paused guest run; a libvirt error raises ``failure``."""
        with self._translate(failure):
            self._domain.resume()

    def pause(self) -> None:
        """Stop the guest's vCPUs (``virDomainSuspend``): the QEMU
        process, its memory and its open disks stay."""
        with self._translate(exception.InstancePauseFailure):
            self._domain.suspend()

    def shutdown(self) -> None:
        """Ask the guest OS to shut down (ACPI); returns at once."""
        with self._translate(exception.InstancePowerOffFailure):
            self._domain.shutdown()

    def poweroff(self) -> None:
        """Stop the guest at once. A guest that is not running is fine."""
        with self._translate(exception.InstancePowerOffFailure):
            try:
                self._domain.destroy()
            except binding.Error as e:
                if (binding.error_code(e) == binding.ERR_OPERATION_INVALID
                        and not self._domain.isActive()):
                    return
                raise

    def managed_save(self) -> None:
        with self._translate(exception.InstanceSuspendFailure):
            self._domain.managedSave(0)

    def undefine(self) -> None:
        """Remove the definition, its managed-save image and snapshot
        metadata.

        Drivers that reject the flags are retried without them, removing
        the managed-save image first by hand.
        """
        flags = (binding.UNDEFINE_MANAGED_SAVE
                 | binding.UNDEFINE_SNAPSHOTS_METADATA)
        with self._translate():
            try:
                self._domain.undefineFlags(flags)
                return
            except binding.Error as e:
                if binding.error_code(e) not in (binding.ERR_NO_SUPPORT,
                                                 binding.ERR_INVALID_ARG):
                    raise
            LOG.debug('undefineFlags(%s) unsupported, falling back', flags,
                      instance_uuid=self.uuid)
            if self._domain.hasManagedSaveImage(0):
                self._domain.managedSaveRemove(0)
            self._domain.undefine()
