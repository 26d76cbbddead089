"""An in-memory virt driver that keeps the cleanup contract for real.

``FakeDriver`` simulates one hypervisor host: its domains and plugged VIFs
live in memory, but the instance directories and disks are real files under
``settings.instances_path``, so tests can check on the file system what every
operation leaves behind. It honours every docstring of
``nova.virt.driver.ComputeDriver``.

Two kinds of failures can be provoked without patching code:

* a real one: a VIF whose network bridge the host lacks cannot be plugged.
  The host's bridges start as ``settings.bridges`` and are a mutable set,
  ``driver.bridges``, as ``ip link add/del`` would change them::

      driver.bridges.discard('br-int')   # the next plug_vifs fails

* an injected one at a named step (``STEPS``)::

      driver.fail_at('power_on.plug_vifs')             # fail once
      driver.fail_at('spawn.start', exc=MyError, times=None)  # always
      driver.clear_failures()

VIFs that are not ``active`` are waited for like a real driver does: plug,
start the guest paused, wait through ``virtapi.wait_for_instance_event`` for
one ``network-vif-plugged`` event per such VIF (up to
``settings.vif_plugging_timeout``), then let it run.

Lifecycle events are handed to the registered listener synchronously, after
the driver's own lock is released.
"""

import dataclasses
import json
import os
import threading

from oslo_log import log as logging
from oslo_utils import excutils

from nova import exception
from nova.image import qemu_img
from nova.model import diagnostics
from nova.model import hardware
from nova.model import network as network_model
from nova.model import power_state
from nova.virt import driver
from nova.virt import event as virtevent
from nova.virt import guest_start

LOG = logging.getLogger(__name__)

DISK = 'disk'
DISK_INFO = 'disk.info'
# A fake disk is small but not empty, so a truncation or rewrite shows up in
# its sha256.
_DISK_HEADER = b'FAKEDISK1\n'

# Every step fail_at accepts. '<op>.plug_vifs' fails after the first VIF of
# that operation is plugged; '<op>' alone fails where the guest is started
# (for reboot: after the guest was stopped, as a hard reboot would).
STEPS = frozenset((
    'init_host',
    'spawn.create_disk', 'spawn.plug_vifs', 'spawn.define', 'spawn.start',
    'power_on.plug_vifs', 'power_on',
    'power_off',
    'reboot.soft', 'reboot.plug_vifs', 'reboot',
    'suspend',
    'snapshot',
    'resume.plug_vifs', 'resume',
    'pause', 'unpause',
    'resume_state_on_host_boot.plug_vifs', 'resume_state_on_host_boot',
    'destroy',
))


@dataclasses.dataclass
class FakeDomain:
    """One simulated libvirt domain."""
    uuid: str
    name: str
    state: int = power_state.SHUTDOWN
    # True while a managed-save image exists (suspended guest).
    saved_memory: bool = False


@dataclasses.dataclass
class _Failure:
    exc: object
    remaining: int | None


def _default_exception(step, host):
    if step.endswith('plug_vifs'):
        return exception.VirtualInterfacePlugException(
            reason='injected failure at step %s' % step)
    if step == 'power_off':
        return exception.InstancePowerOffFailure(
            reason='injected failure at step %s' % step)
    if step == 'init_host':
        return exception.HypervisorUnavailable(host=host)
    return exception.InjectedFailure(step=step)


class FakeDriver(driver.ComputeDriver):

    # Spawns make raw disks of their own: no base images to age out.
    capabilities = {'supports_evacuate': True, 'has_imagecache': False}

    def __init__(self, virtapi, settings):
        super().__init__(virtapi, settings)
        self.bridges = set(settings.bridges)
        self._lock = threading.RLock()
        self._domains = {}
        self._vifs = {}           # instance uuid -> {port id: VIF}
        self._failures = {}       # step -> _Failure
        self._initialised = False

    # -- failure injection ------------------------------------------------

    def fail_at(self, step, exc=None, times=1):
        """Make ``step`` (one of ``STEPS``) raise.

        ``exc`` is an exception instance or class; by default the exception
        the contract names for that step (``VirtualInterfacePlugException``
        for plugging, ``InstancePowerOffFailure`` for power_off,
        ``HypervisorUnavailable`` for init_host, ``InjectedFailure``
        otherwise). ``times`` is how many calls fail; ``None`` means every
        call until ``clear_failures``.
        """
        if step not in STEPS:
            raise ValueError('unknown step %r; steps are %s'
                             % (step, sorted(STEPS)))
        if times is not None and times < 1:
            raise ValueError('times must be None or at least 1')
        with self._lock:
            self._failures[step] = _Failure(exc, times)

    def clear_failures(self):
        with self._lock:
            self._failures.clear()

    def _maybe_fail(self, step, instance=None):
        with self._lock:
            failure = self._failures.get(step)
            if failure is None:
                return
            if failure.remaining is not None:
                failure.remaining -= 1
                if failure.remaining == 0:
                    del self._failures[step]
        exc = failure.exc
        if exc is None:
            exc = _default_exception(step, self.settings.host)
        elif isinstance(exc, type):
            exc = exc()
        LOG.info('Failing at step %s as told', step, instance=instance)
        raise exc

    # -- what tests may look at --------------------------------------------

    def domain(self, instance_uuid):
        """A copy of the domain of an instance, or None."""
        with self._lock:
            dom = self._domains.get(instance_uuid)
            return dataclasses.replace(dom) if dom else None

    def plugged_vifs(self, instance_uuid):
        """Port ids of the VIFs plugged on this host for an instance."""
        with self._lock:
            return frozenset(self._vifs.get(instance_uuid, {}))

    def simulate_shutdown(self, instance_uuid):
        """The guest shut itself down (or QEMU died): a Stopped event."""
        self._set_state(instance_uuid, power_state.SHUTDOWN)

    def simulate_host_reboot(self):
        """The host went down and came back: guests are off, VIFs gone.

        Definitions, saved memory and files persist, as on a real host.
        """
        with self._lock:
            for dom in self._domains.values():
                dom.state = power_state.SHUTDOWN
            self._vifs.clear()

    # -- host ----------------------------------------------------------------

    def init_host(self, host):
        self._maybe_fail('init_host')
        os.makedirs(self.settings.instances_path, exist_ok=True)
        self._initialised = True

    def get_available_resource(self, nodename):
        with self._lock:
            used = len(self._domains)
        return hardware.HostResources(
            hypervisor_hostname=nodename, vcpus=8, memory_mb=16384,
            local_gb=200, vcpus_used=used, memory_mb_used=512 * used,
            local_gb_used=used, hypervisor_type='fake')

    # -- reading -----------------------------------------------------------

    # What the fake host's uptime says (a real one changes; the format is
    # what clients parse).
    UPTIME = (' 08:32:11 up 93 days, 18:25, 12 users,  load average: '
              '0.20, 0.12, 0.14')

    def get_host_uptime(self):
        return self.UPTIME

    def get_instance_diagnostics(self, instance):
        """Fixed counters for the guest's flavor, its VIFs and its disk:
        the shape a real driver gives, with figures a test can predict."""
        with self._lock:
            dom = self._domains.get(instance.uuid)
            if dom is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            state = power_state.STATE_MAP.get(dom.state, 'pending')
        flavor = instance.flavor
        vcpus = flavor.vcpus if flavor is not None else 1
        memory_mb = flavor.memory_mb if flavor is not None else 0
        plugged = self.plugged_vif_ids(instance.uuid)
        vifs = [vif for vif in instance.network_info or ()
                if vif.id in plugged]
        return diagnostics.Diagnostics(
            state=state, driver='fake', hypervisor='fake',
            hypervisor_os='fake-os', uptime=46664, config_drive=False,
            memory_maximum=memory_mb, memory_used=memory_mb,
            cpu_details=tuple(diagnostics.CpuDetails(
                id=n, time=17300000000, utilisation=15)
                for n in range(vcpus)),
            nic_details=tuple(diagnostics.NicDetails(
                mac_address=vif.address, rx_octets=2070139, rx_errors=0,
                rx_drop=0, rx_packets=26701, rx_rate=None,
                tx_octets=140208, tx_errors=0, tx_drop=0, tx_packets=662,
                tx_rate=None) for vif in vifs),
            disk_details=(diagnostics.DiskDetails(
                read_bytes=262144, read_requests=112, write_bytes=5778432,
                write_requests=488, errors_count=1),))

    # -- inventory -----------------------------------------------------------

    def list_instance_uuids(self):
        with self._lock:
            return list(self._domains)

    def get_power_states(self):
        with self._lock:
            return {uuid: dom.state for uuid, dom in self._domains.items()}

    def get_info(self, instance):
        with self._lock:
            dom = self._domains.get(instance.uuid)
            if dom is None:
                raise exception.InstanceNotFound(instance_id=instance.uuid)
            return hardware.InstanceInfo(state=dom.state,
                                         internal_id=dom.name)

    def instance_on_disk(self, instance):
        return os.path.isfile(self._instance_dir(instance).file(DISK))

    # -- lifecycle --

    def spawn(self, context, instance, image_meta, network_info=None,
              power_on=True, attempt=None):
        network_info = network_info or network_model.NetworkInfo()
        with self._lock:
            if instance.uuid in self._domains:
                raise exception.InstanceExists(name=instance.uuid)
        with self._spawn_journal(instance, attempt,
                                 lambda: self._forget_guest(instance),
                                 new_files=(DISK,), small_files=(DISK_INFO,),
                                 vifs=network_info) as spawn_journal:
            self._create_image(instance, image_meta, spawn_journal)
            # The journal removes what the attempt made, disks included,
            # once the failure leaves it; the start forgets the guest.
            self._start(instance, network_info, 'spawn',
                        lambda: self._forget_guest(instance), spawning=True,
                        power_on=power_on, destroy_disks_on_failures=True,
                        attempt=spawn_journal.attempt)
        LOG.info('Spawned guest', instance=instance)

    def destroy(self, context, instance, network_info, destroy_disks=True):
        if destroy_disks:
            # Refuse a bad path before anything changes.
            self._instance_dir(instance).check_inside()
        self._maybe_fail('destroy', instance)
        self._set_state(instance.uuid, power_state.SHUTDOWN,
                        missing_ok=True)
        self.cleanup(context, instance, network_info,
                     destroy_disks=destroy_disks)

    def cleanup(self, context, instance, network_info, destroy_disks=True,
                destroy_vifs=True):
        # Validate the path first: a bad path must not leave half a cleanup.
        idir = self._instance_dir(instance) if destroy_disks else None
        if idir is not None:
            idir.check_inside()
        with self._lock:
            self._domains.pop(instance.uuid, None)
        if destroy_vifs:
            self._unplug_all(instance)
        if idir is not None:
            self._remove_instance_dir(instance)

    def power_off(self, instance, timeout=0, retry_interval=0):
        self._require_domain(instance)
        self._maybe_fail('power_off', instance)
        self._set_state(instance.uuid, power_state.SHUTDOWN,
                        saved_memory=False)

    def power_on(self, context, instance, network_info):
        self._hard_reboot(context, instance, network_info, 'power_on',
                          exception.InstancePowerOnFailure)

    def reboot(self, context, instance, network_info, reboot_type):
        if reboot_type == 'SOFT' and self._soft_reboot(instance):
            return
        self._hard_reboot(context, instance, network_info, 'reboot',
                          exception.InstanceRebootFailure)

    def suspend(self, context, instance):
        dom = self._require_domain(instance)
        if dom.state not in (power_state.RUNNING, power_state.PAUSED):
            raise exception.InstanceSuspendFailure(
                reason='guest is not running')
        self._maybe_fail('suspend', instance)
        self._set_state(instance.uuid, power_state.SUSPENDED,
                        saved_memory=True)

    def _flatten_root_disk(self, instance, dest):
        self._require_domain(instance)
        # A fake disk is raw bytes: qemu-img makes a real qcow2 of it.
        qemu_img.convert(self._instance_dir(instance).file(DISK), 'raw',
                         dest, 'qcow2')
        # An injected failure finds the copy made: the caller removes it.
        self._maybe_fail('snapshot', instance)

    def resume(self, context, instance, network_info):
        dom = self._require_domain(instance)
        if not dom.saved_memory:
            raise exception.InstanceResumeFailure(
                reason='guest has no saved memory to resume from')
        plugged_before = self._plugged(instance.uuid)
        # Resume re-plugs (idempotent) but does not wait for events: the
        # ports stayed bound while the guest was suspended. On failure the
        # saved memory and the definition stay, so a later resume can
        # succeed; VIFs go back to how they were.
        self._start(instance, network_info, 'resume',
                    lambda: self._restore_vifs(instance, plugged_before),
                    vifs_already_plugged=True)

    def pause(self, instance):
        self._change_pause(instance, 'pause', power_state.RUNNING,
                           power_state.PAUSED, exception.InstancePauseFailure)

    def unpause(self, instance):
        self._change_pause(instance, 'unpause', power_state.PAUSED,
                           power_state.RUNNING,
                           exception.InstanceUnpauseFailure)

    def _change_pause(self, instance, step, from_state, to_state, failure):
        dom = self._require_domain(instance)
        if dom.state != from_state:
            raise failure(reason='guest is %s, not %s' % (
                power_state.STATE_MAP.get(dom.state),
                power_state.STATE_MAP[from_state]))
        self._maybe_fail(step, instance)
        self._set_state(instance.uuid, to_state)

    def resume_state_on_host_boot(self, context, instance, network_info):
        with self._lock:
            dom = self._domains.get(instance.uuid)
            if dom is not None and dom.state == power_state.RUNNING:
                return
        self._hard_reboot(context, instance, network_info,
                          'resume_state_on_host_boot',
                          exception.InstanceResumeFailure)

    # -- networking --

    def plug_vifs(self, instance, network_info):
        self._plug_vifs(instance, network_info, None)

    def plugged_vifs_by_instance(self):
        with self._lock:
            return {uuid: set(vifs) for uuid, vifs in self._vifs.items()}

    def plugged_vif_ids(self, instance_uuid=None):
        with self._lock:
            return driver.ports_plugged(self._vifs, instance_uuid)

    def unplug_vifs(self, instance, network_info):
        with self._lock:
            plugged = self._vifs.get(instance.uuid, {})
            for vif in network_info:
                plugged.pop(vif.id, None)
            if not plugged:
                self._vifs.pop(instance.uuid, None)
        self._vifs_changed(instance.uuid)

    # -- internals --

    def _require_domain(self, instance):
        dom = self.domain(instance.uuid)
        if dom is None:
            raise exception.InstanceNotFound(instance_id=instance.uuid)
        return dom

    def _plugged(self, instance_uuid):
        with self._lock:
            return dict(self._vifs.get(instance_uuid, {}))

    def _restore_vifs(self, instance, plugged):
        with self._lock:
            if plugged:
                self._vifs[instance.uuid] = dict(plugged)
            else:
                self._vifs.pop(instance.uuid, None)

    def _unplug_all(self, instance):
        with self._lock:
            self._vifs.pop(instance.uuid, None)

    def _set_state(self, instance_uuid, state, saved_memory=None,
                   missing_ok=False):
        with self._lock:
            dom = self._domains.get(instance_uuid)
            if dom is None:
                if missing_ok:
                    return
                raise exception.InstanceNotFound(instance_id=instance_uuid)
            changed = dom.state != state
            dom.state = state
            if saved_memory is not None:
                dom.saved_memory = saved_memory
        if changed:
            self._emit(instance_uuid, state)

    def _emit(self, instance_uuid, state):
        transition = {
            power_state.RUNNING: virtevent.EVENT_LIFECYCLE_STARTED,
            power_state.SHUTDOWN: virtevent.EVENT_LIFECYCLE_STOPPED,
            power_state.PAUSED: virtevent.EVENT_LIFECYCLE_PAUSED,
            power_state.SUSPENDED: virtevent.EVENT_LIFECYCLE_SUSPENDED,
        }.get(state)
        if transition is not None:
            self.emit_event(virtevent.LifecycleEvent(instance_uuid,
                                                     transition))

    def _plug_vifs(self, instance, network_info, step):
        """Plug every VIF; on failure unplug those this call plugged."""
        newly_plugged = []
        try:
            for index, vif in enumerate(network_info):
                if vif.network.bridge not in self.bridges:
                    raise exception.VirtualInterfacePlugException(
                        reason='bridge %s of network %s does not exist on '
                               'host %s' % (vif.network.bridge,
                                            vif.network.label,
                                            self.settings.host))
                with self._lock:
                    plugged = self._vifs.setdefault(instance.uuid, {})
                    if vif.id not in plugged:
                        newly_plugged.append(vif.id)
                    plugged[vif.id] = vif
                if index == 0 and step:
                    self._maybe_fail(step, instance)
            if not network_info and step:
                self._maybe_fail(step, instance)
        except Exception:
            with excutils.save_and_reraise_exception():
                with self._lock:
                    plugged = self._vifs.get(instance.uuid, {})
                    for port_id in newly_plugged:
                        plugged.pop(port_id, None)
                    if not plugged:
                        self._vifs.pop(instance.uuid, None)
        self._vifs_changed(instance.uuid)

    def _start(self, instance, network_info, op, undo, spawning=False,
               **request):
        """``guest_start.start`` with this driver's steps (``_FakeStart``);
        ``request``: the rest of its ``StartRequest``."""
        guest_start.start(
            self.virtapi, self.settings,
            _FakeStart(self, instance, network_info, op, undo, spawning),
            guest_start.StartRequest(instance, network_info, **request))

    def _define(self, instance):
        with self._lock:
            if instance.uuid not in self._domains:
                self._domains[instance.uuid] = FakeDomain(
                    uuid=instance.uuid,
                    name='instance-%s' % instance.uuid[:8])

    def _create_image(self, instance, image_meta, spawn_journal):
        """Make the disk and disk.info, reusing existing ones; each is
        complete before it has its final name."""
        idir = spawn_journal.idir
        disk = idir.file(DISK)
        if os.path.exists(disk):
            LOG.info('Reusing existing disk %s', disk, instance=instance)
        else:
            with open(spawn_journal.creating(DISK), 'wb') as f:
                f.write(_DISK_HEADER)
                # Fail half-way, so cleanup has a partial disk to remove.
                self._maybe_fail('spawn.create_disk', instance)
                f.write(('%s %s\n' % (instance.uuid,
                                      _image_id(image_meta))).encode())
            spawn_journal.commit(DISK)
        if not os.path.exists(idir.file(DISK_INFO)):
            spawn_journal.write_file(DISK_INFO, json.dumps({DISK: 'raw'}))

    def _forget_guest(self, instance):
        """A failed spawn's guest: no domain, no VIFs."""
        with self._lock:
            self._domains.pop(instance.uuid, None)
            self._vifs.pop(instance.uuid, None)

    def _soft_reboot(self, instance):
        """True if the guest rebooted in place; False to fall back to hard."""
        dom = self.domain(instance.uuid)
        if dom is None or dom.state != power_state.RUNNING:
            return False
        try:
            self._maybe_fail('reboot.soft', instance)
        except Exception as e:
            LOG.warning('Soft reboot failed (%s); trying a hard reboot', e,
                        instance=instance)
            return False
        LOG.info('Guest rebooted in place', instance=instance)
        return True

    def _hard_reboot(self, context, instance, network_info, op,
                     missing_disk_error):
        """Stop the guest and start it again from its definition and disks.

        A missing definition is made again from the instance, as the
        libvirt driver regenerates its XML; missing disks are an error.
        Failure: guest stopped, VIFs unplugged, files untouched.
        """
        disk = self._instance_dir(instance).file(DISK)
        if not os.path.isfile(disk):
            raise missing_disk_error(reason='disk %s does not exist' % disk)
        self._set_state(instance.uuid, power_state.SHUTDOWN,
                        saved_memory=False, missing_ok=True)
        self._unplug_all(instance)
        self._define(instance)

        def undo():
            LOG.error('Could not start the guest; it stays defined and '
                      'stopped with its disks', instance=instance)
            self._set_state(instance.uuid, power_state.SHUTDOWN,
                            missing_ok=True)
            self._unplug_all(instance)
        self._start(instance, network_info, op, undo)


class _FakeStart:
    """The fake driver's steps of one ``guest_start.start``.

    ``op`` names the steps ``fail_at`` may fail: ``<op>.plug_vifs``, then
    ``<op>`` where the vCPUs start (a spawn's are ``spawn.define`` and
    ``spawn.start``); a spawn alone defines the guest here (the others
    start the definition they have). ``undo`` is what a failed start of
    that operation puts back.
    """

    def __init__(self, driver, instance, network_info, op, undo, spawning):
        self.driver = driver
        self.instance = instance
        self.network_info = network_info
        self.op = op
        self._undo = undo
        self.spawning = spawning

    def plug_vifs(self):
        self.driver._plug_vifs(self.instance, self.network_info,
                               self.op + '.plug_vifs')

    def define(self):
        if self.spawning:
            self.driver._maybe_fail('spawn.define', self.instance)
            self.driver._define(self.instance)

    def launch(self, pause):
        self.driver._maybe_fail('spawn.start' if self.spawning else self.op,
                                self.instance)
        # A guest that starts has no saved memory any more (resume).
        self.driver._set_state(
            self.instance.uuid,
            power_state.PAUSED if pause else power_state.RUNNING,
            saved_memory=False)

    def resume(self):
        self.driver._set_state(self.instance.uuid, power_state.RUNNING)

    def undo(self, destroy_disks):
        self._undo()

    def failure(self, exc):
        return exc


def _image_id(image_meta):
    if image_meta is None:
        return None
    if isinstance(image_meta, dict):
        return image_meta.get('id')
    return getattr(image_meta, 'id', None)
