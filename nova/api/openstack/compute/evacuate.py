"""The ``evacuate`` server action (admin only).

By microversion, as the reference says:

* below 2.14 ``onSharedStorage`` is required and passed on as the
  operator's claim (the target host still checks it against evidence);
* from 2.14 it is gone and the hosts decide from evidence alone;
* from 2.29 ``force`` skips the checks of a named target host; forcing
  needs a named host;
* from 2.68 ``force`` is refused (400) again;
* from 2.95 the evacuated server ends STOPPED (``SHUTOFF``) on its new
  host, its guest spawned powered off, whatever its state before; below
  2.95 it comes back in the state it had.

``adminPass`` is part of the reference's body, but nothing here can set a
password inside a guest; a request carrying one is refused (400) rather
than accepted and silently ignored, and no response carries one.

The answer is 200 with no body (the reference's 200; its ``adminPass``
is optional and never given here).
"""

from nova.api.openstack.compute.schemas import evacuate as schemas
from nova.api.openstack import validation
from nova.api.openstack import wsgi
from nova import exception
from nova.model import vm_states


class EvacuateAction:
    def __init__(self, compute_api):
        self.compute_api = compute_api

    schema_for = staticmethod(schemas.evacuate_for)

    def run(self, req, instance, argument):
        """Evacuate ``instance``; ``argument`` matched ``schema_for``."""
        host = argument.get('host')
        on_shared_storage = None
        if not req.is_version('2.14'):
            on_shared_storage = validation.to_bool(
                argument['onSharedStorage'])
        if 'adminPass' in argument:
            if on_shared_storage:
                raise exception.ValidationError(
                    detail="admin password can't be changed on existing "
                           "disk")
            raise exception.ValidationError(
                detail='adminPass is not supported: this deployment cannot '
                       'set a password inside a guest.')
        force = validation.to_bool(argument.get('force', False))
        if force and host is None:
            raise exception.ValidationError(
                detail="Can't force to a non-provided destination")
        if host is not None and host == instance.host:
            raise exception.ValidationError(
                detail="The target host can't be the same one.")
        extra = {}
        if req.is_version('2.95'):
            extra['target_state'] = vm_states.STOPPED
        self.compute_api.evacuate(req.context, instance, host=host,
                                  on_shared_storage=on_shared_storage,
                                  force=force, **extra)
        return wsgi.Result(None, status=200)
