"""The contract between the compute manager and a hypervisor.

Every method says what it leaves on the host when it succeeds and when it
fails, in the terms of the cleanup contract (doc/source/cleanup.rst). The
artefacts of an instance on a host are: the domain (definition and, when
running, its process), its VIFs, the instance directory
``<instances_path>/<uuid>/`` and the disks and metadata files in it. Base
images in ``_base/`` are shared and never removed by any method here.

Only these may delete an instance's disks: ``destroy``/``cleanup`` with
``destroy_disks=True`` (delete, or a host that no longer owns the instance
and does not share its storage), and the cleanup of a failed ``spawn``,
which removes exactly what that attempt created.

``nova/tests/fixtures/driver_contract.py`` holds the contract's tests;
each driver runs them (``nova/tests/unit/virt/test_fake.py``,
``nova/tests/unit/virt/libvirt/test_contract.py``).
"""

from collections.abc import Iterable
from collections.abc import Mapping
import contextlib
import importlib
import os
import threading

from oslo_log import log as logging
from oslo_utils import excutils

from nova import crashpoint
from nova import exception
from nova.image import meta as image_meta_mod
from nova.image import source as image_source
from nova.model import diagnostics
from nova.model import hardware
from nova.model import network as network_model
from nova.model import task_states
from nova.virt import housekeeping
from nova.virt import instancedir
from nova.virt import journal
from nova.virt import ownership
from nova.virt import stale_files
from nova.virt import storage_identity

LOG = logging.getLogger(__name__)

# The temporary file of a snapshot in the instance's directory, named by
# the image's id: a dead process's is a ``.part-`` file like a spawn's,
# which ``stale_files`` removes once old (no journal names the id).
SNAPSHOT_PART = 'snapshot.part-%s'


class ComputeDriver:
    """Base class of the virt drivers.

    A driver is built with the manager's ``VirtAPI`` and the ``HostSettings``
    of the host it serves; it reads no global configuration.
    """

    capabilities: dict[str, bool] = {}

    def __init__(self, virtapi, settings):
        self.virtapi = virtapi
        self.settings = settings
        self._event_callback = None
        self._vif_listeners = []
        # Ids of the spawn attempts this driver runs: an open journal of
        # this host that is not among them was left by a dead process.
        # Changed and copied under the lock, so a reader never sees the
        # set change during its copy.
        self._live_attempts: set[str] = set()
        self._live_attempts_lock = threading.Lock()

    # -- host ------------------------------------------------------------

    def init_host(self, host):
        """Connect to the hypervisor and prepare the host.

        Success: the driver can serve every other call. Failure: raises
        ``HypervisorUnavailable``; nothing on the host changed.
        """
        raise NotImplementedError()

    def cleanup_host(self, host):
        """Release the hypervisor connection at service stop. Guests run on."""

    def is_hypervisor_available(self) -> bool:
        """Whether the hypervisor answers now; never raises.

        Called by the service before every heartbeat, so it must be cheap
        and must not block for long: a driver answers from the state of
        its connection (and may try to reconnect). While it is false the
        compute service does not heartbeat, so the host reads as down.
        The default, for drivers with no connection to lose, is True.
        """
        return True

    def register_event_listener(self, callback):
        """Hand lifecycle events (``virt.event.LifecycleEvent``) to it."""
        self._event_callback = callback

    def emit_event(self, event):
        if self._event_callback is not None:
            self._event_callback(event)

    def get_available_nodes(self, refresh: bool = False) -> list[str]:
        """Names of the nodes this driver serves (one for libvirt)."""
        return [self.settings.host]

    def get_available_resource(self, nodename: str
                               ) -> hardware.HostResources:
        """Return a ``model.hardware.HostResources`` of the node."""
        raise NotImplementedError()

    # -- instance storage (shared by the drivers that keep instance
    # directories under instances_path) --------------------------------

    def get_host_uptime(self) -> str:
        """The host's ``uptime`` line (time up, users, load averages).
        Reads only; raises ``NotImplementedError`` if the driver cannot."""
        raise NotImplementedError()

    def get_instance_diagnostics(self, instance) -> diagnostics.Diagnostics:
        """What the hypervisor says of the instance's guest now (CPU time,
        memory, disk and NIC counters). Reads only; ``InstanceNotFound``
        when the host has no guest for it."""
        raise NotImplementedError()

    def get_storage_status(self) -> storage_identity.StorageStatus:
        """What ``instances_path`` says about its storage, read now.

        Never creates the identity marker. ``identity`` None means
        unknown (missing, malformed, a symlink ...), and unknown never
        leads to a deletion; ``unavailable_reason`` means nothing may be
        written there (``instances_path_must_be_mounted`` and it is not).
        """
        return storage_identity.read(
            self.settings.instances_path,
            must_be_mounted=self.settings.instances_path_must_be_mounted)

    def get_disk_leases(self):
        """What keeps a second host from running this host's disks: a
        ``nova.virt.libvirt.lock_config.DiskLeases``, or None when the
        driver cannot tell (the base driver)."""
        return None

    def get_storage_identity(self) -> str | None:
        """Identity of the storage behind ``instances_path``, or None.

        Two hosts whose identities are equal share their instance
        storage. The compute service records it with every heartbeat, so
        the comparison works while the other host is down. An instance
        directory is never evidence of shared storage.
        """
        return self.get_storage_status().identity

    def init_storage_identity(self) -> str | None:
        """Give a new, empty ``instances_path`` an identity (a compute
        service's first start); None when it holds instances already, or
        when it must be a mount point and is not (never mark the bare
        mount point)."""
        if self.get_storage_status().unavailable_reason:
            return None
        return storage_identity.create_if_new(self.settings.instances_path)

    def _instance_dir(self, instance) -> instancedir.InstanceDir:
        return instancedir.InstanceDir(self.settings.instances_path,
                                       instance.uuid)

    def instance_dir_path(self, instance) -> str:
        """Where the instance's directory is (or would be) on this host."""
        return self._instance_dir(instance).path

    def instance_dir_exists(self, instance) -> bool:
        """Whether anything is at the instance's directory path."""
        return os.path.lexists(self._instance_dir(instance).path)

    def read_ownership_stamp(self, instance) -> ownership.OwnerStamp | None:
        """Who wrote the instance's directory here; None without one.
        ``InvalidOwnershipStamp`` when it cannot be trusted."""
        return ownership.read(self._instance_dir(instance))

    def quarantine_instance_files(self, instance, reason: str) -> str | None:
        """Move the instance's directory aside instead of deleting it
        (``instancedir.InstanceDir.quarantine``); its new path, or None
        when there was none. The domain must be gone already."""
        dest = self._instance_dir(instance).quarantine(reason)
        if dest is not None:
            crashpoint.reached('quarantine.after_rename')
        return dest

    def _remove_instance_dir(self, instance) -> None:
        """``destroy_disks=True``: remove the instance's directory if this
        host wrote it on this storage (or an older release wrote it with
        no stamp); move it aside when its stamp names another host or
        storage, since then it is not this host's to delete."""
        idir = self._instance_dir(instance)
        if not os.path.lexists(idir.path):
            return
        idir.check_inside()
        try:
            stamp = ownership.read(idir)
        except exception.InvalidOwnershipStamp as e:
            idir.quarantine(e.format_message())
            return
        identity = self.get_storage_identity()
        if stamp is not None and not stamp.left_by(self.settings.host,
                                                   identity):
            idir.quarantine('asked to delete it on %s (storage %s), but it '
                            'was %s' % (self.settings.host, identity,
                                        stamp.describe()))
            return
        idir.remove()

    # -- spawn attempts and their journals ------------------------------

    @contextlib.contextmanager
    def _spawn_journal(self, instance, attempt, destroy_guest,
                       new_files=(), small_files=(), vifs=None):
        """The journal of a spawn attempt, with its directory made (or
        adopted) and stamped; ``new_files`` and ``small_files`` are what
        it plans to make, ``vifs`` the VIFs it plugs
        (``journal.SpawnJournal.begin``, one journal write for all of
        them). Every write of the journal checks the attempt's token
        first (``journal.Attempt.check``). On any failure inside, a token
        lost included, everything the attempt created is undone
        (``destroy_guest()`` first, when it got as far as starting one)
        and the failure re-raised. An attempt the caller did not pass is
        completed here on success; one it passed is the caller's to
        complete (``complete_attempt``) once the result is recorded, so
        that a crash before that is undone at restart."""
        status = self.get_storage_status()
        if status.unavailable_reason:
            raise exception.StorageUnavailable(
                reason=status.unavailable_reason)
        own = attempt is None
        if own:
            attempt = journal.Attempt.new(journal.BUILD)
        self._attempt_started(attempt)
        spawn_journal = journal.SpawnJournal.begin(
            self._instance_dir(instance), self.settings.host, attempt,
            new_files=new_files,
            small_files=(ownership.STAMP,) + tuple(small_files), guest=True,
            vifs=vifs)
        try:
            spawn_journal.make_dir()
            crashpoint.reached('spawn.after_mkdir')
            spawn_journal.write_file(ownership.STAMP, ownership.OwnerStamp.new(
                instance.uuid, self.settings.host, status.identity,
                attempt.operation, attempt.id, attempt.migration).to_json())
            yield spawn_journal
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.error('Spawn failed; removing what attempt %s created',
                          attempt.id, instance=instance)
                try:
                    spawn_journal.undo(destroy_guest)
                    self._attempt_ended(attempt)
                except Exception:
                    LOG.exception('Undoing attempt %s failed; its journal '
                                  'is kept for the next start', attempt.id,
                                  instance=instance)
        if own:
            self.complete_attempt(instance, attempt)

    def interrupted_attempts(self):
        """(journals, unreadable) of this host's spawn attempts that no
        process of this host runs any more (a restart cut them short)."""
        found, unreadable = journal.find(self.settings.instances_path,
                                         self.settings.host)
        live = self.live_attempts()
        return [j for j in found if j.attempt.id not in live], unreadable

    def live_attempts(self) -> frozenset[str]:
        """The ids of the spawn attempts this driver runs now: begun
        (``spawn``) and neither completed nor undone, and the image ids of
        the snapshots it takes now (their temporary files are named by
        them). A copy, safe to read from any thread while attempts begin
        and end."""
        with self._live_attempts_lock:
            return frozenset(self._live_attempts)

    def _attempt_started(self, attempt) -> None:
        with self._live_attempts_lock:
            self._live_attempts.add(attempt.id)

    def _attempt_ended(self, attempt) -> None:
        with self._live_attempts_lock:
            self._live_attempts.discard(attempt.id)

    def complete_attempt(self, instance, attempt) -> None:
        """The result of ``attempt`` is recorded: forget its journal."""
        journal.SpawnJournal(self._instance_dir(instance), self.settings.host,
                             attempt).complete()
        self._attempt_ended(attempt)

    def undo_attempt(self, context, instance, attempt,
                     keep_files: str | None = None) -> bool:
        """Undo ``attempt`` from its journal: its guest powered off at
        once (no clean shutdown: the guest of an attempt that did not land
        must not write another byte) and removed with the VIFs the journal
        recorded (never a disk by that), then exactly the files it created
        removed and the ones it rewrote put back; with ``keep_files`` (a
        reason) only its ``.part-`` files (``SpawnJournal.undo``). False
        when it has no journal (it was completed or undone already).
        ``InvalidJournal`` when the journal cannot be trusted: nothing is
        undone then."""
        path = journal.SpawnJournal(self._instance_dir(instance),
                                    self.settings.host, attempt).path
        if not os.path.exists(path):
            return False
        spawn_journal = journal.SpawnJournal.load(
            self.settings.instances_path, path)

        def destroy_guest():
            vifs = spawn_journal.guest_vifs() or instance.network_info
            self.stop_guest_now(instance)
            self.destroy(context, instance, vifs, destroy_disks=False)

        spawn_journal.undo(destroy_guest, keep_files=keep_files)
        self._attempt_ended(attempt)
        return True

    def stop_guest_now(self, instance) -> None:
        """Power the instance's guest off at once, if it has one that
        runs: no clean shutdown, for a guest that must not write another
        byte (a stale copy, the guest of an attempt that did not land)."""
        if self.instance_exists(instance):
            try:
                self.power_off(instance, timeout=0)
            except exception.InstanceNotFound:
                pass

    # -- housekeeping of instances_path ---------------------------------

    def remove_stale_temporary_files(self, older_than: float,
                                     dry_run: bool = False
                                     ) -> list[housekeeping.Finding]:
        """Remove the temporary files of work that died; one
        ``housekeeping.Finding`` a file looked at.

        The base driver's are the ``.part-`` files of instance directories
        whose attempt has no journal of any host on this storage and is not
        among ``live_attempts()``, and the journal's own temporary files
        (``nova.virt.stale_files``); a driver with temporary files of its
        own (an image cache's fetches) adds them. Each only when last
        modified before ``older_than`` (a ``time.time()`` value; the
        caller passes one before its process started and long enough ago
        for another host's work in progress to be young). Kept: anything
        younger, anything of a live attempt or one with a journal, every
        ``.part-`` file while a journal file's name cannot be read, and
        what is not a regular file. Never raises for one file. With
        ``dry_run`` nothing changes. The caller makes sure the storage has
        no problem first.
        """
        return stale_files.remove(self.settings.instances_path,
                                  self.live_attempts(), older_than,
                                  dry_run=dry_run)

    def manage_image_cache(self, min_age: float, dry_run: bool = False
                           ) -> list[housekeeping.Finding]:
        """Age out the base images no disk under ``instances_path``
        uses, once last used more than ``min_age`` seconds ago; one
        ``housekeeping.Finding`` a base image looked at.

        Kept: a base image some disk of an instance directory (a
        quarantined one included) has as its backing file, one used less
        than ``min_age`` seconds ago, one a fetch holds the lock of, and
        every one while the disks of some directory cannot all be told.
        Never raises for one file. With ``dry_run`` nothing changes. The
        base driver keeps no image cache (``capabilities['has_imagecache']``
        false): it finds nothing and changes nothing.
        """
        return []

    # -- inventory -------------------------------------------------------

    def list_instance_uuids(self) -> list[str]:
        """UUIDs of every instance the hypervisor has a domain for."""
        raise NotImplementedError()

    def get_power_states(self) -> dict[str, int]:
        """{instance UUID: power state} of every domain of this host, in
        as few hypervisor calls as the driver can (``init_host`` reads
        them all at once)."""
        states = {}
        for uuid in self.list_instance_uuids():
            try:
                states[uuid] = self.get_info(_Named(uuid)).state
            except exception.InstanceNotFound:
                continue        # gone since it was listed
        return states

    def instance_exists(self, instance) -> bool:
        return instance.uuid in self.list_instance_uuids()

    def get_info(self, instance) -> hardware.InstanceInfo:
        """Return ``model.hardware.InstanceInfo``, or ``InstanceNotFound``."""
        raise NotImplementedError()

    def instance_on_disk(self, instance):
        """Whether this instance's disks are present on this host's storage.

        True for an instance directory with its disks; this alone never
        says that storage is shared with another host.
        """
        raise NotImplementedError()

    # -- lifecycle -------------------------------------------------------

    def spawn(self, context, instance,
              image_meta: image_meta_mod.ImageMeta | None,
              network_info: network_model.NetworkInfo | None = None,
              power_on: bool = True,
              attempt: journal.Attempt | None = None) -> None:
        """Create and start a guest for ``instance``.

        Disks that already exist in the instance directory (an evacuation
        onto shared storage) are reused, not rebuilt; their formats come
        from ``disk.info``, never from probing them.

        Success: domain defined and running (or defined and stopped when
        ``power_on`` is false), VIFs plugged, instance directory with disks
        and metadata files, stamped with this host (``ownership.py``).
        Failure, at any step: the host is as it was before the call. The
        domain is undefined, the VIFs unplugged, and every file and
        directory this attempt created removed; files and directories that
        existed before the call are kept, the ones it rewrote put back.

        What the attempt creates is journaled on disk first, and every disk
        gets its final name only once complete, so a crash at any instant
        can be undone at restart. ``attempt`` (``journal.Attempt``) names
        the operation the spawn belongs to; when given, the caller calls
        ``complete_attempt`` once it has recorded the result (or
        ``undo_attempt`` if it could not). Without one the spawn completes
        its own. ``StorageUnavailable`` before anything changed when the
        instance storage is not there.
        """
        raise NotImplementedError()

    def destroy(self, context, instance,
                network_info: network_model.NetworkInfo,
                destroy_disks: bool = True) -> None:
        """Power off and remove the guest, then ``cleanup``.

        Success: no domain, no VIFs; the instance directory is removed when
        ``destroy_disks`` is true and untouched otherwise. Destroying what
        is already gone succeeds. Never deletes anything outside the
        instance's own directory under ``instances_path``, and never a
        directory whose ownership stamp names another host or storage: that
        one is moved to quarantine instead.
        """
        raise NotImplementedError()

    def cleanup(self, context, instance,
                network_info: network_model.NetworkInfo,
                destroy_disks: bool = True,
                destroy_vifs: bool = True) -> None:
        """Remove what is left of a guest that no longer runs.

        Undefines the domain, unplugs the VIFs when ``destroy_vifs``, and
        removes the instance directory only when ``destroy_disks``.
        Idempotent.
        """
        raise NotImplementedError()

    def power_off(self, instance, timeout: float = 0,
                  retry_interval: float = 0) -> None:
        """Stop the guest: clean shutdown for up to ``timeout`` s, then forced.

        Success: domain defined and shut off; VIFs, directory and disks
        untouched. Failure: raises ``InstancePowerOffFailure``; disks
        untouched.
        """
        raise NotImplementedError()

    def power_on(self, context, instance,
                 network_info: network_model.NetworkInfo) -> None:
        """Start a stopped guest (a hard reboot of its definition).

        Success: running, VIFs plugged. Failure: the domain is stopped or
        undefined, the VIFs unplugged, the instance directory and every disk
        byte-for-byte intact, so the next ``power_on`` can succeed.
        """
        raise NotImplementedError()

    def reboot(self, context, instance, network_info, reboot_type):
        """Reboot the guest; ``reboot_type`` is ``'SOFT'`` or ``'HARD'``.

        A soft reboot that does not complete falls back to a hard one.
        Failure: directory and disks untouched; a later hard reboot or
        ``power_on`` can succeed.
        """
        raise NotImplementedError()

    def snapshot(self, context, instance, image_id: str,
                 update_task_state) -> None:
        """Upload a flattened copy of the root disk as the data of the
        queued image ``image_id`` (where this host's images are).

        ``update_task_state(task_state, expected_state=...)`` saves the
        instance's task state by compare-and-swap, checking it is still
        this host's and not being deleted: called with
        ``image_pending_upload`` before the guest is touched and with
        ``image_uploading`` before the upload, it raises to stop the
        snapshot. The copy is made into ``snapshot.part-<image id>`` in
        the instance's directory (``_flatten_root_disk``), which is
        removed in every outcome; the instance's disks are only read.
        Failure: the guest runs (or not) as before, disks untouched, no
        temporary file left; the image is the caller's to delete.
        """
        image_id = instancedir.validated_uuid(image_id)
        idir = self._instance_dir(instance)
        name = SNAPSHOT_PART % image_id
        update_task_state(task_states.IMAGE_PENDING_UPLOAD)
        # Among the live ids, so the stale file cleanup of this process
        # never takes the file for a dead snapshot's.
        with self._live_attempts_lock:
            self._live_attempts.add(image_id)
        try:
            self._flatten_root_disk(instance, idir.file(name))
            update_task_state(
                task_states.IMAGE_UPLOADING,
                expected_state=task_states.IMAGE_PENDING_UPLOAD)
            image_source.for_host(self.settings).upload(image_id,
                                                        idir.file(name))
        finally:
            idir.remove_file(name)
            with self._live_attempts_lock:
                self._live_attempts.discard(image_id)

    def _flatten_root_disk(self, instance, dest: str) -> None:
        """Write the root disk, backing files merged, to ``dest`` as
        qcow2: crash-consistent (a running guest is paused for the copy,
        not quiesced). Only reads the instance's disks."""
        raise NotImplementedError()

    def suspend(self, context, instance):
        """Save the guest's memory and stop it (managed save).

        Failure: the guest keeps running or stays stopped; disks untouched.
        """
        raise NotImplementedError()

    def resume(self, context, instance,
               network_info: network_model.NetworkInfo) -> None:
        """Start a suspended guest from its saved memory.

        Failure: directory and disks untouched; the instance can be resumed
        or started again.
        """
        raise NotImplementedError()

    def pause(self, instance) -> None:
        """Stop the running guest's vCPUs, keeping it in memory.

        Success: the guest is PAUSED, its process (and so its disks, its
        memory and its VIFs) still there. Failure: raises
        ``InstancePauseFailure`` (a guest that is not running cannot be
        paused); the guest as it was, disks untouched.
        """
        raise NotImplementedError()

    def unpause(self, instance) -> None:
        """Let a paused guest's vCPUs run again.

        Success: the guest is RUNNING. Failure: raises
        ``InstanceUnpauseFailure`` (a guest that is not paused cannot be
        unpaused); disks untouched, and a later unpause can succeed.
        """
        raise NotImplementedError()

    def resume_state_on_host_boot(
            self, context, instance,
            network_info: network_model.NetworkInfo) -> None:
        """Start a guest that was running before the host went down.

        Failure: directory and disks untouched.
        """
        raise NotImplementedError()

    # -- networking ------------------------------------------------------

    def plug_vifs(self, instance,
                  network_info: network_model.NetworkInfo) -> None:
        """Create the host side of each VIF.

        Failure: raises ``VirtualInterfacePlugException`` naming the cause
        (for example a missing bridge); VIFs plugged by this call are
        unplugged again.
        """
        raise NotImplementedError()

    def unplug_vifs(self, instance,
                    network_info: network_model.NetworkInfo) -> None:
        """Remove the host side of each VIF. Idempotent."""
        raise NotImplementedError()

    def add_vif_listener(self, callback) -> None:
        """Have ``callback(instance_uuid)`` called whenever this driver
        plugged or unplugged VIFs of that instance, so the host's network
        agent looks at its ports at once instead of at its next poll. It
        must return quickly: it runs in the operation that plugged them."""
        self._vif_listeners.append(callback)

    def _vifs_changed(self, instance_uuid: str | None) -> None:
        """Drivers call this after they plugged or unplugged VIFs of
        ``instance_uuid`` (None: of instances they cannot name)."""
        for callback in list(self._vif_listeners):
            try:
                callback(instance_uuid)
            except Exception:
                LOG.exception('VIF listener failed')

    def plugged_vifs_by_instance(self) -> dict[str, set[str]]:
        """The port ids whose VIF is plugged on this host now, by the uuid
        of the instance they were plugged for.

        The host's network agent (``nova.network.agent``) reads it once
        per full look to mark ports ``ACTIVE`` and send
        ``network-vif-plugged``, as Neutron's agent watches its bridges:
        one call for every instance, not one per instance. A driver that
        cannot tell returns an empty mapping (the default): its ports are
        then never reported plugged, and waiting for the event times out.
        """
        return {}

    def plugged_vif_ids(self, instance_uuid: str | None = None
                        ) -> set[str]:
        """Port ids whose VIF is plugged on this host now, as a set: of
        ``instance_uuid`` when given, else of every instance (what
        ``plugged_vifs_by_instance`` says; a driver that can answer for
        one instance more cheaply does)."""
        return ports_plugged(self.plugged_vifs_by_instance(), instance_uuid)


def ports_plugged(plugged: Mapping[str, Iterable[str]],
                  instance_uuid: str | None = None) -> set[str]:
    """The port ids of ``plugged`` ({instance uuid: port ids}): of
    ``instance_uuid`` when given, else of every instance."""
    if instance_uuid is not None:
        return set(plugged.get(instance_uuid, ()))
    return set().union(*plugged.values())


def load_compute_driver(virtapi, settings, compute_driver):
    """Build the driver named ``<module under nova.virt>.<Class>``."""
    module_name, _, class_name = compute_driver.rpartition('.')
    if not module_name or not class_name:
        raise exception.InvalidConfiguration(
            reason='compute_driver %r is not <module>.<Class>'
                   % compute_driver)
    try:
        module = importlib.import_module('nova.virt.' + module_name)
        driver_class = getattr(module, class_name)
    except (ImportError, AttributeError) as e:
        raise exception.InvalidConfiguration(
            reason='cannot load compute_driver %r: %s' % (compute_driver, e))
    if not (isinstance(driver_class, type)
            and issubclass(driver_class, ComputeDriver)):
        raise exception.InvalidConfiguration(
            reason='%r is not a ComputeDriver' % compute_driver)
    return driver_class(virtapi, settings)


class _Named:
    """Stands for an instance where only its UUID is needed."""

    def __init__(self, uuid: str):
        self.uuid = uuid
