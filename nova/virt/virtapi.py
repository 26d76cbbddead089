"""What a virt driver may ask of the compute manager.

Drivers never touch the database or RPC. The one service they need from
the manager is waiting for external events (``network-vif-plugged``), which
arrive through the REST API and the manager's ``external_instance_event``.
"""

import abc


class VirtAPI(abc.ABC):

    @abc.abstractmethod
    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        """Context manager: wait for events while the body runs.

        ``event_names`` is a list of ``(name, tag)`` pairs such as
        ``('network-vif-plugged', port_id)``. The waiter is registered before
        the body runs (so an event that arrives during the body is not
        lost) and, on leaving the body, blocks until every event arrived or
        ``deadline`` seconds passed. On timeout it raises the built-in
        ``TimeoutError``. For each event whose status is
        ``failed``, ``error_callback(event_name, instance)`` is called; it
        may raise to abort. With no ``error_callback`` a failed event
        raises ``VirtualInterfaceCreateException``.
        """
