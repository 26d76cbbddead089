"""The libvirt compute driver: orchestration only.

The work is done elsewhere: ``host.py`` (connection, events), ``guest.py``
(one domain), ``designer.py`` + ``config/`` (domain XML), ``disks.py``,
``imagebackend.py``, ``imagecache.py`` (disks and images),
``cache_cleanup.py`` (the image cache's housekeeping), ``vif.py`` (ports),
``instancedir.py`` (paths and the only deletions).

Cleanup contract (doc/source/cleanup.rst, "Operation by operation"):
``_create_domain_and_network`` cleans up a failed start through
``_cleanup_failed_start``, which deletes disks only when
``destroy_disks_on_failures`` is true, and only ``spawn`` sets it. A
failed spawn removes exactly what its ``SpawnRecord`` says it created;
nothing else here deletes files except ``cleanup(destroy_disks=True)``.
"""

import contextlib
import os
import threading
import time

from oslo_concurrency import processutils
from oslo_log import log as logging

from nova import exception
from nova import fileio
from nova.image import glance as image_glance
from nova.image import meta as image_meta_mod
from nova.image import qemu_img
from nova.image import source as image_source
from nova.image import store as image_store
from nova.model import hardware
from nova.model import network as network_model
from nova.model import power_state
from nova.virt import driver
from nova.virt import guest_start
from nova.virt import instancedir
from nova.virt.libvirt import blockinfo
from nova.virt.libvirt import cache_cleanup
from nova.virt.libvirt import designer
from nova.virt.libvirt import disks
from nova.virt.libvirt import host as libvirt_host
from nova.virt.libvirt import imagebackend
from nova.virt.libvirt import imagecache
from nova.virt.libvirt import lock_config
from nova.virt.libvirt import vif as libvirt_vif

LOG = logging.getLogger(__name__)

GiB = 1024 ** 3
# NOVA_STATES a guest may be in for resume_state_on_host_boot to leave it.
_LEAVE_ON_HOST_BOOT = (power_state.RUNNING, power_state.SUSPENDED,
                       power_state.NOSTATE, power_state.PAUSED)


class LibvirtDriver(driver.ComputeDriver):
    capabilities = {'supports_evacuate': True, 'has_imagecache': True}

    def __init__(self, virtapi, settings):
        super().__init__(virtapi, settings)
        self.host = libvirt_host.Host(settings.connection_uri, settings.host,
                                      lifecycle_handler=self.emit_event)
        self.vif_driver = libvirt_vif.get_vif_driver(settings)
        self.image_cache = imagecache.ImageCache(settings.instances_path)
        self._image_store = None
        self._arch = None
        # Spawn attempts in progress, by instance UUID: their journals.
        self._spawn_journals = {}
        self._journals_lock = threading.Lock()

    # -- host ------------------------------------------------------------

    def init_host(self, host):
        self.host.connect()
        os.makedirs(self.settings.instances_path, exist_ok=True)

    def cleanup_host(self, host):
        self.vif_driver.close()
        self.host.close()

    def is_hypervisor_available(self):
        return self.host.is_available()

    def get_disk_leases(self):
        """The disk leases libvirtd's configuration gives (read from
        ``settings.libvirt_config_dir``: ``lock_config``), checked to
        reach other hosts from ``instances_path`` (``lease_reach``)."""
        return lock_config.read(self.settings.libvirt_config_dir,
                                self.settings.instances_path)

    def get_available_resource(self, nodename):
        node = self.host.get_node_info()
        vcpus_used = memory_used = 0
        for guest in self.host.list_guests():
            vcpus, memory_mb = guest.get_resources()
            vcpus_used += vcpus
            memory_used += memory_mb
        os.makedirs(self.settings.instances_path, exist_ok=True)
        st = os.statvfs(self.settings.instances_path)
        total_gb = st.f_blocks * st.f_frsize // GiB
        free_gb = st.f_bavail * st.f_frsize // GiB
        return hardware.HostResources(
            hypervisor_hostname=self.settings.host, vcpus=node.cpus,
            memory_mb=node.memory_mb, local_gb=total_gb,
            vcpus_used=vcpus_used, memory_mb_used=memory_used,
            local_gb_used=total_gb - free_gb,
            hypervisor_type=node.hypervisor_type)

    def get_host_uptime(self):
        out, _err = processutils.execute('env', 'LANG=C', 'uptime')
        return out.strip()

    def get_instance_diagnostics(self, instance):
        hypervisor = self.host.get_node_info().hypervisor_type.lower()
        return self.host.get_guest(instance.uuid).get_diagnostics(
            hypervisor)

    def _resolve_image(self, image_meta) -> image_meta_mod.ImageMeta:
        """An ``ImageMeta``, or one looked up in the store by the id or
        name in a dict or string (what a caller with no store at hand
        passes)."""
        if isinstance(image_meta, image_meta_mod.ImageMeta):
            return image_meta
        if isinstance(image_meta, dict):
            image_meta = image_meta.get('id') or image_meta.get('name')
        if not image_meta:
            raise exception.ImageNotFound(image_id=image_meta)
        return self.image_store.find(image_meta)

    @property
    def image_store(self) -> (image_store.ImageStore
                              | image_glance.GlanceImages):
        """Where this host's images come from: its image store, or
        Glance (``[image] backend``)."""
        if self._image_store is None:
            self._image_store = image_source.for_host(self.settings)
        return self._image_store

    # -- housekeeping of instances_path ---------------------------------

    def remove_stale_temporary_files(self, older_than, dry_run=False):
        """The base driver's, and the temporary files of image fetches
        that died (``cache_cleanup.remove_fetch_leftovers``)."""
        return (super().remove_stale_temporary_files(older_than,
                                                     dry_run=dry_run)
                + cache_cleanup.remove_fetch_leftovers(
                    self.image_cache, older_than, dry_run=dry_run))

    def manage_image_cache(self, min_age, dry_run=False):
        return cache_cleanup.remove_unused_bases(self.image_cache, min_age,
                                                 dry_run=dry_run)

    # -- inventory -------------------------------------------------------

    def list_instance_uuids(self):
        return [guest.uuid for guest in self.host.list_guests()]

    def instance_exists(self, instance):
        return self.host.find_guest(instance.uuid) is not None

    def get_power_states(self):
        return self.host.power_states()

    def get_info(self, instance):
        return self.host.get_guest(instance.uuid).get_info()

    def instance_on_disk(self, instance):
        idir = self._instance_dir(instance)
        return os.path.isfile(idir.file(instancedir.DISK))

    # -- spawn -----------------------------------------------------------

    def spawn(self, context, instance, image_meta, network_info=None,
              power_on=True, attempt=None):
        """Boot a new guest; on failure remove what this attempt made.

        ``image_meta`` None: the image is gone, boot from the disks
        already in the instance directory (shared storage);
        ``ImageNotFound`` before anything changed if there is no root disk.
        ``attempt`` (``journal.Attempt``): see ``ComputeDriver.spawn``.
        """
        # None: a guest without VIFs (the contract allows it).
        network_info = network_info or network_model.NetworkInfo()
        idir = self._instance_dir(instance)
        if image_meta is not None:
            image_meta = self._resolve_image(image_meta)
        elif not os.path.isfile(idir.file(instancedir.DISK)):
            # NOTE: None is what an evacuation onto shared storage passes
            # when the image was deleted: only disks already here can boot.
            raise exception.ImageNotFound(image_id=instance.image_ref)
        if self.host.find_guest(instance.uuid) is not None:
            raise exception.InstanceExists(
                name=designer.domain_name(instance.uuid))

        def destroy_guest():
            self._cleanup_failed_start(context, instance, network_info,
                                       None, destroy_disks=False)

        # One layout for the files the journal expects and the disks made.
        layout = blockinfo.disks_for(instance.flavor)
        with self._spawn_journal(
                instance, attempt, destroy_guest,
                new_files=disks.planned_files(layout, image_meta),
                small_files=(instancedir.DISK_INFO,
                             instancedir.LIBVIRT_XML),
                vifs=network_info) as spawn_journal:
            with self._journals_lock:
                self._spawn_journals[instance.uuid] = spawn_journal
            try:
                images = disks.create_for_spawn(
                    spawn_journal, instance, layout, image_meta,
                    self.settings, self.image_store, self.image_cache)
                xml = self._get_guest_xml(instance, images, network_info)
                guest = self._create_domain_and_network(
                    context, xml, instance, network_info, power_on=power_on,
                    destroy_disks_on_failures=True,
                    attempt=spawn_journal.attempt)
                if power_on:
                    self._wait_for_running(instance, guest)
                # Last, so a failure never changed a libvirt.xml that was
                # there before (shared storage).
                spawn_journal.write_file(instancedir.LIBVIRT_XML, xml)
            finally:
                with self._journals_lock:
                    self._spawn_journals.pop(instance.uuid, None)
        LOG.info('Spawned the guest', instance=instance)

    def _get_guest_xml(self, instance, images, network_info) -> str:
        if self._arch is None:
            self._arch = self.host.get_node_info().arch
        interfaces = [self.vif_driver.get_config(instance, vif)
                      for vif in network_info]
        domain = designer.build_domain(
            instance, self.settings.virt_type, self._arch, images.disks,
            interfaces,
            console_path=self._instance_dir(instance).file(
                instancedir.CONSOLE_LOG),
            kernel_boot=images.kernel_boot)
        return domain.to_xml()

    def _wait_for_running(self, instance, guest):
        timeout = self.settings.wait_running_timeout
        if not guest.wait_for_power_state({power_state.RUNNING}, timeout):
            raise exception.InstancePowerOnFailure(
                reason='the guest did not reach running within %s s'
                       % timeout)

    # -- starting a domain, and undoing a failed start ----------------------

    def _create_domain_and_network(self, context, xml, instance,
                                   network_info, power_on=True,
                                   vifs_already_plugged=False,
                                   destroy_disks_on_failures=False,
                                   attempt=None):
        """Plug VIFs, define, start (paused until the VIFs are bound):
        ``guest_start.start`` with this driver's steps; the guest.

        On any failure, a failed or late network-vif-plugged event
        included, ``_cleanup_failed_start`` undoes the start; disks go only
        when ``destroy_disks_on_failures`` (spawn alone). ``attempt`` (a
        spawn's ``journal.Attempt``) has its token checked at each step.
        """
        steps = _LibvirtStart(self, context, instance, network_info, xml)
        guest_start.start(self.virtapi, self.settings, steps,
                          guest_start.StartRequest(
                              instance, network_info, power_on=power_on,
                              vifs_already_plugged=vifs_already_plugged,
                              destroy_disks_on_failures=(
                                  destroy_disks_on_failures),
                              attempt=attempt))
        return steps.guest

    def _local_domain_using(self, instance, disk):
        """The name of another running domain of this host whose disks
        include ``disk``, or None (then the holder is on another host)."""
        try:
            guests = self.host.list_guests()
        except exception.NovaException:
            return None
        for guest in guests:
            if guest.uuid == instance.uuid:
                continue
            try:
                if guest.is_active() and any(
                        _same_file(disk, path)
                        for path in guest.disk_paths()):
                    return guest.name
            except exception.NovaException:
                continue
        return None

    def _cleanup_failed_start(self, context, instance, network_info, guest,
                              destroy_disks):
        """Power off, undefine, unplug; disks only if ``destroy_disks``.

        ``destroy_disks`` removes what the spawn attempt in progress
        created (its journal), never anything that was there before.
        A definition holding a suspended guest's saved memory is kept (a
        resume that failed before starting can be tried again).
        """
        if guest is None:
            guest = self.host.find_guest(instance.uuid)
        if guest is not None:
            with contextlib.suppress(exception.InstanceNotFound):
                if guest.is_active():
                    guest.poweroff()
                if destroy_disks or not guest.has_managed_save():
                    guest.undefine()
                else:
                    LOG.warning('Keeping the definition: it holds the '
                                'saved memory of the suspended guest',
                                instance=instance)
        self.unplug_vifs(instance, network_info)
        if destroy_disks:
            with self._journals_lock:
                spawn_journal = self._spawn_journals.get(instance.uuid)
            if spawn_journal is None:
                LOG.warning('No spawn in progress: no disks to remove',
                            instance=instance)
            else:
                spawn_journal.undo()

    # -- destroy ---------------------------------------------------------

    def destroy(self, context, instance, network_info, destroy_disks=True):
        idir = self._instance_dir(instance)  # InvalidUUID before anything
        if destroy_disks and os.path.lexists(idir.path):
            idir.check_inside()
        guest = self.host.find_guest(instance.uuid)
        if guest is not None:
            with contextlib.suppress(exception.InstanceNotFound):
                if guest.is_active():
                    self._stop(instance, guest, self.settings.shutdown_timeout)
        self.cleanup(context, instance, network_info,
                     destroy_disks=destroy_disks)

    def cleanup(self, context, instance, network_info, destroy_disks=True,
                destroy_vifs=True):
        idir = self._instance_dir(instance)
        if destroy_disks and os.path.lexists(idir.path):
            idir.check_inside()  # refuse before changing anything
        guest = self.host.find_guest(instance.uuid)
        if guest is not None:
            with contextlib.suppress(exception.InstanceNotFound):
                if guest.is_active():
                    guest.poweroff()
                guest.undefine()
        if destroy_vifs:
            self.unplug_vifs(instance, network_info)
        if destroy_disks:
            self._remove_instance_dir(instance)

    # -- power -----------------------------------------------------------

    def _stop(self, instance, guest, timeout, retry_interval=0):
        """Clean shutdown for up to ``timeout`` s, then forced.

        A paused guest is forced at once: its vCPUs do not run, so its OS
        cannot act on the request, and waiting would only delay a delete
        by the whole timeout.
        """
        if (timeout and guest.get_power_state() != power_state.PAUSED
                and self._clean_shutdown(instance, guest, timeout,
                                         retry_interval)):
            return
        guest.poweroff()
        LOG.info('Powered the guest off', instance=instance)

    def _clean_shutdown(self, instance, guest, timeout, retry_interval):
        """Ask the guest to shut down (again every ``retry_interval`` s)
        until it is off or ``timeout`` s passed; True if it is off."""
        deadline = time.monotonic() + timeout
        while True:
            if guest.get_power_state() == power_state.SHUTDOWN:
                LOG.info('The guest shut down cleanly', instance=instance)
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                guest.shutdown()
            except exception.InstancePowerOffFailure:
                if guest.is_active():
                    raise
                continue  # it went off by itself meanwhile
            guest.wait_for_power_state({power_state.SHUTDOWN},
                                       min(retry_interval or remaining,
                                           remaining))
        LOG.warning('The guest did not shut down within %s s', timeout,
                    instance=instance)
        return False

    def power_off(self, instance, timeout=0, retry_interval=0):
        guest = self.host.get_guest(instance.uuid)
        if guest.is_active():
            self._stop(instance, guest, timeout, retry_interval)

    def power_on(self, context, instance, network_info):
        self._hard_reboot(context, instance, network_info)

    def reboot(self, context, instance, network_info, reboot_type):
        if reboot_type == 'SOFT':
            try:
                if self._soft_reboot(instance):
                    return
            except exception.NovaException as e:
                LOG.warning('Soft reboot failed (%s); rebooting hard', e,
                            instance=instance)
        self._hard_reboot(context, instance, network_info)

    def _soft_reboot(self, instance) -> bool:
        """Shut down and start the same definition; False: go hard."""
        guest = self.host.get_guest(instance.uuid)
        if not guest.is_active():
            return False
        if not self._clean_shutdown(instance, guest,
                                    self.settings.shutdown_timeout, 0):
            return False
        guest.launch()
        self._wait_for_running(instance, guest)
        LOG.info('Rebooted the guest (soft)', instance=instance)
        return True

    def _image_meta_or_none(self, instance):
        if not instance.image_ref:
            return None
        try:
            return self.image_store.find(instance.image_ref)
        except (exception.ImageNotFound, exception.InvalidConfiguration):
            return None

    def _xml_from_disks(self, instance, network_info):
        """(the disks as they are, the XML to boot them)."""
        images = disks.load_existing(
            self._instance_dir(instance), instance,
            self._image_meta_or_none(instance), self.image_store,
            self.image_cache)
        return images, self._get_guest_xml(instance, images, network_info)

    def _hard_reboot(self, context, instance, network_info):
        """Redefine from the disks and start. Never creates or removes a
        disk; a missing one is ``DiskNotFound`` before anything changed."""
        images, xml = self._xml_from_disks(instance, network_info)
        guest = self.host.find_guest(instance.uuid)
        if guest is not None:
            if guest.is_active():
                guest.poweroff()
            guest.undefine()
        guest = self._create_domain_and_network(
            context, xml, instance, network_info,
            vifs_already_plugged=False, destroy_disks_on_failures=False)
        self._wait_for_running(instance, guest)
        # Only after success, so a failed start leaves the directory as
        # it was, byte for byte.
        idir = self._instance_dir(instance)
        fileio.write_atomically(idir.file(instancedir.LIBVIRT_XML), xml)
        if images.disk_info_legacy:
            imagebackend.write_disk_info(idir.file(instancedir.DISK_INFO),
                                         images.formats)
        LOG.info('Rebooted the guest (hard)', instance=instance)

    def suspend(self, context, instance):
        guest = self.host.get_guest(instance.uuid)
        if not guest.is_active():
            raise exception.InstanceSuspendFailure(
                reason='the guest is not running')
        guest.managed_save()
        LOG.info('Suspended the guest', instance=instance)

    def _flatten_root_disk(self, instance, dest):
        idir = self._instance_dir(instance)
        root = idir.file(instancedir.DISK)
        fmt = imagebackend.existing_format(
            root, imagebackend.read_disk_info(
                idir.file(instancedir.DISK_INFO)))
        guest = self.host.find_guest(instance.uuid)
        # Only a running guest writes to its disk: pause its vCPUs for
        # the copy (crash-consistent), and only a guest we paused is
        # let run again. A paused, suspended or stopped one stays so.
        pause = (guest is not None
                 and guest.get_power_state() == power_state.RUNNING)
        if pause:
            guest.pause()
        try:
            # QEMU holds its image lock while the guest exists, paused
            # or not.
            qemu_img.convert(root, fmt, dest, 'qcow2',
                             force_share=guest is not None)
        finally:
            if pause:
                guest.resume()
        LOG.info('Copied the root disk for a snapshot (guest %s)',
                 'paused' if pause else 'not running', instance=instance)

    def resume(self, context, instance, network_info):
        guest = self.host.find_guest(instance.uuid)
        if guest is not None:
            # The existing definition: starting it restores saved memory.
            xml = guest.get_xml()
        else:
            _images, xml = self._xml_from_disks(instance, network_info)
        guest = self._create_domain_and_network(
            context, xml, instance, network_info,
            vifs_already_plugged=True, destroy_disks_on_failures=False)
        self._wait_for_running(instance, guest)
        LOG.info('Resumed the guest', instance=instance)

    def pause(self, instance):
        guest = self._guest_in(instance, power_state.RUNNING,
                               exception.InstancePauseFailure)
        guest.pause()
        LOG.info('Paused the guest', instance=instance)

    def unpause(self, instance):
        guest = self._guest_in(instance, power_state.PAUSED,
                               exception.InstanceUnpauseFailure)
        guest.resume(failure=exception.InstanceUnpauseFailure)
        LOG.info('Unpaused the guest', instance=instance)

    def _guest_in(self, instance, wanted, failure):
        """The instance's guest, if libvirt shows it ``wanted``; else
        ``failure`` naming the state it is in."""
        guest = self.host.get_guest(instance.uuid)
        state = guest.get_power_state()
        if state != wanted:
            raise failure(reason='the guest is %s, not %s' % (
                power_state.STATE_MAP.get(state),
                power_state.STATE_MAP[wanted]))
        return guest

    def resume_state_on_host_boot(self, context, instance, network_info):
        guest = self.host.find_guest(instance.uuid)
        if guest is not None and guest.get_power_state() in (
                _LEAVE_ON_HOST_BOOT):
            return
        self._hard_reboot(context, instance, network_info)

    # -- networking ------------------------------------------------------

    def plug_vifs(self, instance, network_info):
        plugged = []
        try:
            for vif in network_info:
                self.vif_driver.plug(instance, vif)
                plugged.append(vif)
        except Exception:
            self.unplug_vifs(instance, plugged)
            raise
        self._vifs_changed(instance.uuid)

    def plugged_vifs_by_instance(self):
        return self.vif_driver.plugged_vifs_by_instance()

    def plugged_vif_ids(self, instance_uuid=None):
        return self.vif_driver.plugged_vif_ids(instance_uuid)

    def unplug_vifs(self, instance, network_info):
        for vif in network_info:
            try:
                self.vif_driver.unplug(instance, vif)
            except exception.NovaException as e:
                LOG.error('Failed to unplug VIF %(vif)s: %(err)s',
                          {'vif': vif.id, 'err': e}, instance=instance)
        self._vifs_changed(instance.uuid)


class _LibvirtStart:
    """The libvirt steps of one ``guest_start.start``: the domain is
    defined from ``xml`` and kept as ``guest``."""

    def __init__(self, driver, context, instance, network_info, xml):
        self.driver = driver
        self.context = context
        self.instance = instance
        self.network_info = network_info
        self.xml = xml
        self.guest = None

    def plug_vifs(self):
        self.driver.plug_vifs(self.instance, self.network_info)

    def define(self):
        self.guest = self.driver.host.define_guest(self.xml)

    def launch(self, pause):
        self.guest.launch(pause=pause)

    def resume(self):
        self.guest.resume()

    def undo(self, destroy_disks):
        self.driver._cleanup_failed_start(
            self.context, self.instance, self.network_info, self.guest,
            destroy_disks)

    def failure(self, exc):
        # A lease libvirt says is held by an unknown holder: when a
        # running domain of this host uses the disk, say which.
        if isinstance(exc, exception.DiskLeaseHeld) and \
                not exc.holder_known:
            local = self.driver._local_domain_using(self.instance, exc.disk)
            if local is not None:
                return exception.DiskLeaseHeld(
                    disk=exc.disk, local_domain=local, reason=exc.reason)
        return exc


def _same_file(a, b):
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
