"""What a service calls on the manager it runs: the manager protocol.

A ``nova.service.Service`` serves a manager's public methods over RPC and,
around them, calls the hooks below at fixed points of its life. A manager
subclasses ``Manager`` and overrides the hooks it needs; the defaults do
nothing, so a manager without a host (the conductor) has nothing to write.

========================  ==================================================
hook                      when the service calls it
========================  ==================================================
``init_host()``           before serving; again, with backoff, while it
                          raises ``HypervisorUnavailable``
``is_hypervisor_``        before each heartbeat: no heartbeat (the service
``available()``           reads as down) while it answers False
``update_service_``       before each heartbeat, with the service's row:
``record(row)``           facts to write with it (a compute host's storage)
``stop_waiting_for_``     on stop, once no request can arrive: in-flight
``events()``              operations waiting for external events give up
``cleanup_host()``        last on stop: release the hypervisor
========================  ==================================================

Periodic tasks are methods decorated with ``nova.periodic.periodic_task``;
the service runs them (``periodic.tasks_of``).

Example::

    class ConductorManager(manager.Manager):
        def evacuate_instance(self, ctxt, instance, migration, ...):
            ...
"""


class Manager:
    """The base of every manager a service runs (see the module)."""

    def init_host(self) -> None:
        """Prepare the host before the service serves."""

    def is_hypervisor_available(self) -> bool:
        """Whether the service may heartbeat (it has no hypervisor)."""
        return True

    def update_service_record(self, service) -> None:
        """Set fields of the service's row (``objects.Service``) that are
        written with the next heartbeat."""

    def stop_waiting_for_events(self) -> None:
        """Give up every wait for external events."""

    def cleanup_host(self) -> None:
        """Release what ``init_host`` took."""
