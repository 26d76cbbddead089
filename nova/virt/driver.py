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

``nova/tests/unit/virt/contract.py`` holds the contract's tests; each driver
runs them (``test_fake.py``, ``libvirt/test_contract.py``).
"""

import importlib

from nova import exception


class ComputeDriver:
    """Base class of the virt drivers.

    A driver is built with the manager's ``VirtAPI`` and the ``HostSettings``
    of the host it serves; it reads no global configuration.
    """

    capabilities = {}

    def __init__(self, virtapi, settings):
        self.virtapi = virtapi
        self.settings = settings
        self._event_callback = None

    # -- host ------------------------------------------------------------

    def init_host(self, host):
        """Connect to the hypervisor and prepare the host.

        Success: the driver can serve every other call. Failure: raises
        ``HypervisorUnavailable``; nothing on the host changed.
        """
        raise NotImplementedError()

    def cleanup_host(self, host):
        """Release the hypervisor connection at service stop. Guests run on."""

    def is_hypervisor_available(self):
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

    def get_available_nodes(self, refresh=False):
        """Names of the nodes this driver serves (one for libvirt)."""
        return [self.settings.host]

    def get_available_resource(self, nodename):
        """Return a ``virt.hardware.HostResources`` of the node."""
        raise NotImplementedError()

    def get_storage_identity(self):
        """Identity of the storage behind ``instances_path``.

        A UUID kept in a marker file at the root of ``instances_path``, made
        on first use. Two hosts whose identities are equal share their
        instance storage. The manager records it in the service record, so
        the comparison works while the other host is down. An instance
        directory is never evidence of shared storage.
        """
        raise NotImplementedError()

    # -- inventory -------------------------------------------------------

    def list_instance_uuids(self):
        """UUIDs of every instance the hypervisor has a domain for."""
        raise NotImplementedError()

    def instance_exists(self, instance):
        return instance.uuid in self.list_instance_uuids()

    def get_info(self, instance):
        """Return ``virt.hardware.InstanceInfo``, or ``InstanceNotFound``."""
        raise NotImplementedError()

    def instance_on_disk(self, instance):
        """Whether this instance's disks are present on this host's storage.

        True for an instance directory with its disks; this alone never
        says that storage is shared with another host.
        """
        raise NotImplementedError()

    # -- lifecycle -------------------------------------------------------

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, network_info=None, block_device_info=None,
              power_on=True):
        """Create and start a guest for ``instance``.

        Disks that already exist in the instance directory (an evacuation
        onto shared storage) are reused, not rebuilt.

        Success: domain defined and running (or defined and stopped when
        ``power_on`` is false), VIFs plugged, instance directory with disks
        and metadata files. Failure, at any step: the host is as it was
        before the call. The domain is undefined, the VIFs unplugged, and
        every file and directory this attempt created removed; files and
        directories that existed before the call are kept.
        """
        raise NotImplementedError()

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True):
        """Power off and remove the guest, then ``cleanup``.

        Success: no domain, no VIFs; the instance directory is removed when
        ``destroy_disks`` is true and untouched otherwise. Destroying what
        is already gone succeeds. Never deletes anything outside the
        instance's own directory under ``instances_path``.
        """
        raise NotImplementedError()

    def cleanup(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_vifs=True):
        """Remove what is left of a guest that no longer runs.

        Undefines the domain, unplugs the VIFs when ``destroy_vifs``, and
        removes the instance directory only when ``destroy_disks``.
        Idempotent.
        """
        raise NotImplementedError()

    def power_off(self, instance, timeout=0, retry_interval=0):
        """Stop the guest: clean shutdown for up to ``timeout`` s, then forced.

        Success: domain defined and shut off; VIFs, directory and disks
        untouched. Failure: raises ``InstancePowerOffFailure``; disks
        untouched.
        """
        raise NotImplementedError()

    def power_on(self, context, instance, network_info,
                 block_device_info=None):
        """Start a stopped guest (a hard reboot of its definition).

        Success: running, VIFs plugged. Failure: the domain is stopped or
        undefined, the VIFs unplugged, the instance directory and every disk
        byte-for-byte intact, so the next ``power_on`` can succeed.
        """
        raise NotImplementedError()

    def reboot(self, context, instance, network_info, reboot_type,
               block_device_info=None, bad_volumes_callback=None):
        """Reboot the guest; ``reboot_type`` is ``'SOFT'`` or ``'HARD'``.

        A soft reboot that does not complete falls back to a hard one.
        Failure: directory and disks untouched; a later hard reboot or
        ``power_on`` can succeed.
        """
        raise NotImplementedError()

    def suspend(self, context, instance):
        """Save the guest's memory and stop it (managed save).

        Failure: the guest keeps running or stays stopped; disks untouched.
        """
        raise NotImplementedError()

    def resume(self, context, instance, network_info, block_device_info=None):
        """Start a suspended guest from its saved memory.

        Failure: directory and disks untouched; the instance can be resumed
        or started again.
        """
        raise NotImplementedError()

    def resume_state_on_host_boot(self, context, instance, network_info,
                                  block_device_info=None):
        """Start a guest that was running before the host went down.

        Failure: directory and disks untouched.
        """
        raise NotImplementedError()

    # -- networking ------------------------------------------------------

    def plug_vifs(self, instance, network_info):
        """Create the host side of each VIF.

        Failure: raises ``VirtualInterfacePlugException`` naming the cause
        (for example a missing bridge); VIFs plugged by this call are
        unplugged again.
        """
        raise NotImplementedError()

    def unplug_vifs(self, instance, network_info):
        """Remove the host side of each VIF. Idempotent."""
        raise NotImplementedError()

    def plugged_vif_ids(self, instance_uuid=None):
        """Port ids whose VIF is plugged on this host now, as a set.

        Only for ``instance_uuid`` when given, else for every instance.
        The host's network agent (``nova.network.agent``) polls it to mark
        ports ``ACTIVE`` and send ``network-vif-plugged``, as Neutron's
        agent watches its bridges. A driver that cannot tell returns an
        empty set (the default): its ports are then never reported
        plugged, and waiting for the event times out.
        """
        return set()


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
