"""``/servers``: list, show, create and delete servers."""

import re

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import servers as schemas
from nova.api.openstack.compute.views import servers as views
from nova.api.openstack import policy
from nova.api.openstack import wsgi
from nova.api.openstack.router import Route
from nova import exception
from nova import objects


def _last_segment(ref) -> str:
    """``flavorRef``/``imageRef`` may be a URL; its last segment is the id."""
    text = str(ref)
    return text.rstrip('/').rsplit('/', 1)[-1]


class ServersController:
    def __init__(self, compute_api, max_limit: int):
        self.compute_api = compute_api
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/servers', self.index),
            Route('GET', '/servers/detail', self.detail),
            Route('POST', '/servers', self.create,
                  body=schemas.create_for),
            Route('GET', '/servers/{server_id}', self.show),
            Route('DELETE', '/servers/{server_id}', self.delete),
        ]

    # -- listing -------------------------------------------------------------

    def _filtered(self, req) -> list:
        context = req.context
        policy.authorize(context, 'os_compute_api:servers:index')
        admin_filters = policy.check(
            context, 'os_compute_api:servers:allow_all_filters')
        all_tenants = common.query_value(req, 'all_tenants')
        all_projects = False
        if all_tenants is not None:
            policy.authorize(context,
                             'os_compute_api:servers:index:get_all_tenants')
            # The reference: present and not false-like means "all".
            all_projects = all_tenants.lower() not in ('0', 'false', 'off',
                                                       'no')
        project = context.project_id
        if all_projects:
            project = (common.query_value(req, 'project_id')
                       or common.query_value(req, 'tenant_id'))
        host = common.query_value(req, 'host') if admin_filters else None
        include_deleted = False
        deleted = common.query_value(req, 'deleted')
        if deleted is not None and admin_filters:
            include_deleted = deleted.lower() in ('1', 'true', 'yes', 'on')
        instances = self.compute_api.get_all(
            context, host=host, include_deleted=include_deleted)
        if include_deleted:
            instances = [i for i in instances if i.deleted]
        if project is not None:
            instances = [i for i in instances if i.project_id == project]
        instances = self._by_status(req, instances)
        instances = self._by_name(req, instances)
        # Newest first, as the reference's default sort (created_at desc).
        instances = list(reversed(instances))
        limit, marker = common.limit_and_marker(req, self.max_limit)
        return common.paginate(instances, limit, marker,
                               key=lambda i: i.uuid)

    def _by_status(self, req, instances):
        status = common.query_value(req, 'status')
        if status is None:
            return instances
        if common.vm_states_for_status(status) is None:
            if req.is_version('2.38'):
                raise exception.ValidationError(
                    detail='Invalid status value: %s' % status)
            return []
        shown = status.upper()
        return [i for i in instances
                if common.status_from_state(i.vm_state,
                                            i.task_state) == shown]

    def _by_name(self, req, instances):
        name = common.query_value(req, 'name')
        if name is None:
            return instances
        # The reference treats the name filter as a regular expression.
        try:
            pattern = re.compile(name)
        except re.error as e:
            raise exception.ValidationError(
                detail='Invalid name filter %r: %s' % (name, e))
        return [i for i in instances
                if pattern.search(i.display_name or '')]

    def index(self, req):
        return {'servers': [views.basic(req, i)
                            for i in self._filtered(req)]}

    def detail(self, req):
        instances = self._filtered(req)
        services = self._services_for_host_status(req)
        return {'servers': [views.detail(req, i, services)
                            for i in instances]}

    @staticmethod
    def _services_for_host_status(req):
        # host_status (2.16) is shown to administrators only.
        if req.is_version('2.16') and req.context.is_admin:
            return views.compute_services_by_host(req.context)
        return None

    def show(self, req, server_id):
        policy.authorize(req.context, 'os_compute_api:servers:show')
        instance = common.get_instance(self.compute_api, req.context,
                                       server_id)
        services = self._services_for_host_status(req)
        return {'server': views.detail(req, instance, services)}

    # -- create and delete ---------------------------------------------------

    def create(self, req):
        context = req.context
        policy.authorize(context, 'os_compute_api:servers:create')
        body = req.validated_body()
        server = body['server']
        image_ref = _last_segment(server['imageRef'])
        if not common.uuid_like(image_ref):
            raise exception.ValidationError(
                detail='Invalid imageRef provided: %s' % server['imageRef'])
        flavor_id = _last_segment(server['flavorRef'])
        networks = self._requested_networks(context, server.get('networks'))
        try:
            # Checked before anything is created, so that a request naming
            # a missing network leaves no instance behind.
            for network in networks:
                objects.Network.get_by_uuid(context, network['uuid'])
            instance = self.compute_api.create(
                context, server['name'], image_ref, flavor_id,
                networks=networks)
        except (exception.FlavorNotFound, exception.ImageNotFound,
                exception.NetworkNotFound) as e:
            # What the body refers to is missing: the request is wrong,
            # not the URL (the reference answers 400).
            raise exception.ValidationError(detail=e.format_message())
        view = {'id': instance.uuid,
                'links': common.links(req, 'servers', instance.uuid),
                'OS-DCF:diskConfig': 'MANUAL',
                'security_groups': [{'name': 'default'}]}
        return wsgi.Result({'server': view}, status=202,
                           headers={'Location': view['links'][0]['href']})

    @staticmethod
    def _requested_networks(context, requested) -> list[dict]:
        """The networks to attach, as ``[{'uuid': ...}]``.

        ``none``: no network. ``auto`` (and, below 2.37, no ``networks``
        at all): the only network there is, as the reference's automatic
        allocation does when exactly one network is available; none when
        there is none, and a 400 when there are several to choose from.
        """
        if requested == 'none':
            return []
        if requested is None or requested == 'auto':
            available = objects.Network.get_all(context)
            if len(available) > 1:
                raise exception.ValidationError(
                    detail='Multiple possible networks found, use a '
                           'Network ID to be more specific.')
            return [{'uuid': n.uuid} for n in available]
        return [{'uuid': n['uuid']} for n in requested]

    def delete(self, req, server_id):
        policy.authorize(req.context, 'os_compute_api:servers:delete')
        instance = common.get_instance(self.compute_api, req.context,
                                       server_id)
        self.compute_api.delete(req.context, instance)
        return wsgi.Result(None, status=204)
