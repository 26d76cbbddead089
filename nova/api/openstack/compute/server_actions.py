"""``POST /servers/{server_id}/action``: one action per request.

The body names the action by its only key (``{"os-stop": null}``). Each
action is checked in this order, so a refused request changes nothing:
the body's shape, the policy (admin-only actions answer 403 before
anything is looked up), the action's own schema, the server (404), then
the compute API, whose state checks answer 409.

``lock`` (2.73: with a ``locked_reason``) and ``unlock``: a locked
server refuses every other action from anyone but an administrator
(409). An owner lifts its own lock; lifting an administrator's needs
``os-lock-server:unlock:unlock_override``.

``rebuild`` runs the same-host rebuild (``nova.compute.rebuild``) from
``imageRef``, also setting what the body gives (name, metadata, access
addresses, description 2.19, key_name 2.54, user_data 2.57, hostname
2.90), and answers 202 with the server (``views.changed``) showing the
new image, and ``adminPass`` when ``[api] enable_instance_password`` is
set (never stored or set in the guest, as for create).

``createImage`` and ``createBackup`` queue an image of the server's root
disk (``compute.api.API.snapshot``/``backup``; the host uploads it) and
answer 202 with the image's link in ``Location`` (below 2.45) or its id
in the body (2.45 and later).
"""

import dataclasses
from typing import Callable

from nova.api.openstack import common
from nova.api.openstack.compute import admin_password
from nova.api.openstack.compute import evacuate
from nova.api.openstack.compute.schemas import server_images
from nova.api.openstack.compute.schemas import servers as schemas
from nova.api.openstack.compute import servers
from nova.api.openstack.compute.views import servers as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import validation
from nova.api.openstack import wsgi
from nova.compute import instance_lock
from nova.conf import CONF
from nova import exception


@dataclasses.dataclass(frozen=True)
class Action:
    rule: str
    admin_only: bool
    # handler(req, instance, argument) -> wsgi.Result
    handler: Callable
    # The argument's schema, or a function of the microversion giving one.
    schema: dict | Callable | None = None

    def schema_at(self, version) -> dict | None:
        return self.schema(version) if callable(self.schema) else self.schema


class ServerActionsController:
    def __init__(self, compute_api):
        self.compute_api = compute_api
        self.evacuate = evacuate.EvacuateAction(compute_api)
        self.actions = {
            'os-start': Action('os_compute_api:servers:start', False,
                               self._start, schemas.no_argument),
            'os-stop': Action('os_compute_api:servers:stop', False,
                              self._stop, schemas.no_argument),
            'reboot': Action('os_compute_api:servers:reboot', False,
                             self._reboot, schemas.reboot),
            'suspend': Action('os_compute_api:os-suspend-server:suspend',
                              False, self._suspend, schemas.no_argument),
            'resume': Action('os_compute_api:os-suspend-server:resume',
                             False, self._resume, schemas.no_argument),
            'pause': Action('os_compute_api:os-pause-server:pause',
                            False, self._pause, schemas.no_argument),
            'unpause': Action('os_compute_api:os-pause-server:unpause',
                              False, self._unpause, schemas.no_argument),
            'os-resetState': Action(
                'os_compute_api:os-admin-actions:reset_state', True,
                self._reset_state, schemas.reset_state),
            'evacuate': Action('os_compute_api:os-evacuate', True,
                               self.evacuate.run,
                               self.evacuate.schema_for),
            'lock': Action('os_compute_api:os-lock-server:lock', False,
                           self._lock, schemas.lock_for),
            'unlock': Action('os_compute_api:os-lock-server:unlock', False,
                             self._unlock, schemas.no_argument),
            'rebuild': Action('os_compute_api:servers:rebuild', False,
                              self._rebuild, schemas.rebuild_for),
            'createImage': Action('os_compute_api:servers:create_image',
                                  False, self._create_image,
                                  server_images.create_image),
            'createBackup': Action('os_compute_api:os-create-backup', False,
                                   self._create_backup,
                                   server_images.create_backup),
            # Known to the reference, not done here: answered for the
            # server they name (404 for none) rather than as unknown.
            'migrate': Action('os_compute_api:os-migrate-server:migrate',
                              True, self._migrate, schemas.migrate),
            'restore': Action('os_compute_api:os-deferred-delete:restore',
                              False, self._restore, schemas.no_argument),
            'forceDelete': Action('os_compute_api:os-deferred-delete:force',
                                  False, self._force_delete,
                                  schemas.no_argument),
        }

    def routes(self) -> list[Route]:
        return [Route('POST', '/servers/{server_id}/action', self.action,
                      body=self.body_schema)]

    def body_schema(self, version) -> dict:
        """An action body at ``version``: one key, the action's name, with
        its argument (what ``action`` checks, step by step)."""
        return {
            'type': 'object', 'minProperties': 1, 'maxProperties': 1,
            'properties': {name: action.schema_at(version) or {}
                           for name, action in self.actions.items()},
            'additionalProperties': False,
        }

    def action(self, req, server_id):
        body = req.json_body()
        if not isinstance(body, dict) or len(body) != 1:
            raise exception.ValidationError(
                detail='Malformed request body: an action body has exactly '
                       'one key, the name of the action.')
        (name, argument), = body.items()
        action = self.actions.get(name)
        if action is None:
            raise exception.ValidationError(
                detail='There is no such action: %s' % name[:100])
        if action.admin_only:
            policy.authorize(req.context, action.rule)
        schema = action.schema_at(req.api_version)
        if schema is not None:
            try:
                validation.validate(schema, argument)
            except exception.ValidationError as e:
                raise exception.ValidationError(
                    detail='Invalid input for action %s: %s'
                           % (name, e.format_message()))
        instance = common.get_instance(self.compute_api, req.context,
                                       server_id)
        policy.authorize(req.context, action.rule,
                         target_project_id=instance.project_id)
        return action.handler(req, instance, argument)

    def _accepted(self):
        return wsgi.Result(None, status=202)

    def _start(self, req, instance, _argument):
        self.compute_api.start(req.context, instance)
        return self._accepted()

    def _stop(self, req, instance, _argument):
        self.compute_api.stop(req.context, instance)
        return self._accepted()

    def _reboot(self, req, instance, argument):
        self.compute_api.reboot(req.context, instance,
                                argument['type'].upper())
        return self._accepted()

    def _suspend(self, req, instance, _argument):
        self.compute_api.suspend(req.context, instance)
        return self._accepted()

    def _resume(self, req, instance, _argument):
        self.compute_api.resume(req.context, instance)
        return self._accepted()

    def _pause(self, req, instance, _argument):
        self.compute_api.pause(req.context, instance)
        return self._accepted()

    def _unpause(self, req, instance, _argument):
        self.compute_api.unpause(req.context, instance)
        return self._accepted()

    def _image_created(self, req, image_id):
        # The reference: a Location header before 2.45, the id in the
        # body from then on. The link is the compute API's image proxy.
        if req.is_version('2.45'):
            return wsgi.Result({'image_id': image_id}, status=202)
        location = common.links(req, 'images', image_id)[0]['href']
        return wsgi.Result(None, status=202,
                           headers={'Location': location})

    def _create_image(self, req, instance, argument):
        image_id = self.compute_api.snapshot(
            req.context, instance, argument['name'],
            metadata=argument.get('metadata'),
            token=req.headers.get('X-Auth-Token'))
        return self._image_created(req, image_id)

    def _create_backup(self, req, instance, argument):
        image_id = self.compute_api.backup(
            req.context, instance, argument['name'],
            argument['backup_type'], int(argument['rotation']),
            metadata=argument.get('metadata'),
            token=req.headers.get('X-Auth-Token'))
        return self._image_created(req, image_id)

    def _reset_state(self, req, instance, argument):
        self.compute_api.reset_state(req.context, instance,
                                     argument['state'])
        return self._accepted()

    def _lock(self, req, instance, argument):
        self.compute_api.lock(req.context, instance,
                              (argument or {}).get('locked_reason'))
        return self._accepted()

    def _unlock(self, req, instance, _argument):
        if not instance_lock.locked_by_requester(req.context, instance):
            policy.authorize(
                req.context,
                'os_compute_api:os-lock-server:unlock:unlock_override',
                target_project_id=instance.project_id)
        self.compute_api.unlock(req.context, instance)
        return self._accepted()

    def _migrate(self, req, instance, _argument):
        raise exception.ActionNotSupported(
            action='Cold migration',
            reason='evacuate a server off a failed host instead')

    @staticmethod
    def _not_soft_deleted(instance, method):
        # Deletes here are immediate ([DEFAULT] reclaim_instance_interval
        # is 0 in Nova's terms): no server is ever SOFT_DELETED, so
        # restore and forceDelete find every server in the wrong state,
        # as Nova answers them for a server that was not soft-deleted.
        return exception.InstanceInvalidState(
            instance_uuid=instance.uuid, attr='vm_state',
            state=instance.vm_state, method=method)

    def _restore(self, req, instance, _argument):
        raise self._not_soft_deleted(instance, 'restore')

    def _force_delete(self, req, instance, _argument):
        raise self._not_soft_deleted(instance, 'forceDelete')

    def _rebuild(self, req, instance, argument):
        image_ref = servers.last_segment(argument['imageRef'])
        if not common.uuid_like(image_ref):
            raise exception.ValidationError(
                detail='Invalid imageRef provided: %s' % argument['imageRef'])
        metadata = argument.get('metadata')
        try:
            image = self.compute_api.rebuild(
                req.context, instance, image_ref,
                changes=servers.changes_of(argument), metadata=metadata,
                preserve_ephemeral=argument.get('preserve_ephemeral', False))
        except (exception.ImageNotFound, exception.KeypairNotFound) as e:
            # What the body refers to is missing: a 400, as for create.
            raise exception.ValidationError(detail=e.format_message())
        view = views.changed(req, instance, rebuild=True, metadata=metadata)
        # The image the rebuild boots; the instance records it when the
        # rebuild lands (the reference shows it at once too).
        view['image'] = views.image_link(req, image.id)
        if CONF.api.enable_instance_password:
            view['adminPass'] = (argument['adminPass']
                                 if 'adminPass' in argument
                                 else admin_password.generate())
        return wsgi.Result({'server': view}, status=202)
