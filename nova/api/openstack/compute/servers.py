"""``/servers``: list, show, create and delete servers.

The list's query parameters by microversion: ``changes-since`` (every
version) and ``changes-before`` (2.66) select the servers updated, or
deleted, in that window; ``locked`` from 2.73; ``user_id``, ``vm_state``,
``task_state`` and ``power_state`` for non-admins too from 2.83; from 2.75
a parameter the list does not know is a 400 (below, it is ignored).
``ip`` and ``ip6`` are regular expressions matched, as the reference
matches them, at the start of any of the server's fixed IPv4 (``ip``) or
IPv6 (``ip6``) addresses; ``ip6`` is for administrators below 2.5 (it is
ignored for others there), for everyone from 2.5.

Create takes ``host`` and ``hypervisor_hostname`` from 2.74
(administrators): the server is placed there if that host is up, enabled
and has room, else the request is refused (400) and nothing is created.

Create takes ``os:scheduler_hints`` (or ``OS-SCH-HNT:scheduler_hints``)
with ``group`` only: the server group of the caller's project the server
joins (``server_groups.py``); any other hint is a 400.
Create takes ``availability_zone``: the server is placed only on a compute
host of that zone (an unknown zone is a 400), and an evacuation keeps it
there; ``zone:host`` and ``zone:host:node`` (administrators) name the host
as 2.74's ``host`` does.

Create takes ``accessIPv4`` and ``accessIPv6`` (stored, shown on the
server; nothing here routes them) and ``adminPass`` at every version, and
``hostname`` from 2.90 (one DNS label; from 2.94 a fully qualified domain
name). The response carries ``adminPass`` when ``[api]
enable_instance_password`` is set: the one given or a generated one. No
guest agent sets it in the guest, and it is stored nowhere. Create also
takes ``metadata`` (keys 1-255 characters, values up to 255) and, from
2.19, ``description``.

``PUT /servers/{id}`` changes the name, the access addresses, from 2.19
the description and from 2.90 the hostname, and answers the server
(``views.changed``).
"""

import ipaddress
import re

from oslo_utils import strutils

from nova.api.openstack import common
from nova.api.openstack.compute import admin_password
from nova.api.openstack.compute.schemas import servers as schemas
from nova.api.openstack.compute.views import servers as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova.compute import availability_zones
from nova.conf import CONF
from nova import exception
from nova import objects
from nova.objects import base as obj_base
from nova.objects import instance_metadata as metadata_obj


# Filters of the servers list that compare a field of the server.
_FIELD_FILTERS = ('image', 'flavor', 'user_id', 'vm_state', 'task_state',
                  'power_state')
# Those only administrators may use below 2.83.
_ADMIN_FIELD_FILTERS = ('user_id', 'vm_state', 'task_state', 'power_state')
# Every query parameter the servers list acts on (some only from a
# microversion, some only for administrators): from 2.75 any other is a
# 400, below it is ignored, as the reference does.
_KNOWN_QUERY = frozenset(('all_tenants', 'project_id', 'tenant_id', 'host',
                          'deleted', 'status', 'name', 'limit', 'marker',
                          'changes-since', 'changes-before', 'locked',
                          'ip', 'ip6', *_FIELD_FILTERS))


def _check_known_query(req) -> None:
    if not req.is_version('2.75'):
        return
    unknown = sorted(set(req.GET.keys()) - _KNOWN_QUERY)
    if unknown:
        raise exception.ValidationError(
            detail='Invalid input for query parameters %s: additional '
                   'properties are not allowed (this API filters servers '
                   'by %s).' % (', '.join(n[:100] for n in unknown[:10]),
                                ', '.join(sorted(_KNOWN_QUERY))))


def _canonical_ip(text: str | None) -> str | None:
    """An address the schema accepted, written as the API shows it
    (``2001:DB8:0::1`` is ``2001:db8::1``)."""
    return None if text is None else str(ipaddress.ip_address(text))


def last_segment(ref) -> str:
    """``flavorRef``/``imageRef`` may be a URL; its last segment is the id."""
    text = str(ref)
    return text.rstrip('/').rsplit('/', 1)[-1]


def _requested_zone(context, server: dict,
                    destination: dict) -> str | None:
    """The zone a create asks for; a host named in it (``zone:host``,
    administrators only) fills ``destination`` unless 2.74's did."""
    try:
        requested = availability_zones.RequestedZone.parse(
            server.get('availability_zone'))
    except exception.InvalidInput as e:
        raise exception.ValidationError(detail=e.format_message())
    if requested.names_a_host:
        policy.authorize(context, 'os_compute_api:servers:create:forced_host')
        if not destination:
            destination.update(requested_host=requested.host,
                               requested_node=requested.node)
    return requested.zone


# Request attributes and the instance fields they set (update, rebuild).
_CHANGED_FIELDS = {'name': 'display_name',
                   'description': 'display_description',
                   'hostname': 'hostname', 'key_name': 'key_name',
                   'user_data': 'user_data'}


def changes_of(server: dict) -> dict:
    """The instance fields a validated update or rebuild body sets."""
    changes = {field: server[name]
               for name, field in _CHANGED_FIELDS.items() if name in server}
    for name, field in (('accessIPv4', 'access_ip_v4'),
                        ('accessIPv6', 'access_ip_v6')):
        if name in server:
            changes[field] = _canonical_ip(server[name])
    if 'OS-DCF:diskConfig' in server:
        changes['auto_disk_config'] = auto_disk_config(server)
    return changes


def auto_disk_config(server: dict) -> bool:
    """Whether a validated body asks for ``OS-DCF:diskConfig`` AUTO;
    MANUAL when it names none, as Nova does for an image that does not
    ask for AUTO itself."""
    return server.get('OS-DCF:diskConfig') == 'AUTO'


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
            Route('PUT', '/servers/{server_id}', self.update,
                  body=schemas.update_for),
            Route('DELETE', '/servers/{server_id}', self.delete),
        ]

    # -- listing -------------------------------------------------------------

    def _filtered(self, req) -> tuple[list, int]:
        context = req.context
        policy.authorize(context, 'os_compute_api:servers:index')
        _check_known_query(req)
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
        window = common.changes_window(req, None)
        include_deleted = False
        deleted = common.query_value(req, 'deleted')
        if deleted is not None and admin_filters:
            include_deleted = deleted.lower() in ('1', 'true', 'yes', 'on')
        instances = self.compute_api.get_all(
            context, host=host,
            include_deleted=include_deleted or window.given)
        if include_deleted:
            instances = [i for i in instances if i.deleted]
        # changes-since/-before also find the servers deleted in the
        # window, as the reference's do.
        instances = [i for i in instances if window.contains(i.updated_at)]
        if project is not None:
            instances = [i for i in instances if i.project_id == project]
        instances = self._by_status(req, instances)
        instances = self._by_name(req, instances)
        instances = self._by_fields(req, instances, admin_filters)
        instances = self._by_locked(req, instances)
        instances = self._by_ip(req, instances, admin_filters)
        # Newest first, as the reference's default sort (created_at desc).
        instances = list(reversed(instances))
        limit, marker = common.limit_and_marker(req, self.max_limit)
        return common.paginate(instances, limit, marker,
                               key=lambda i: i.uuid), limit

    @staticmethod
    def _with_links(req, collection: str, shown: dict, page: list,
                    limit: int) -> dict:
        """``servers_links`` (a ``next`` link) when the page is full."""
        links = common.collection_links(req, collection, page, limit,
                                        key=lambda i: i.uuid)
        if links:
            shown['servers_links'] = links
        return shown

    @staticmethod
    def _by_fields(req, instances, admin_filters):
        """``image``, ``flavor`` (everyone), ``user_id``, ``vm_state``,
        ``task_state``, ``power_state`` (administrators; from 2.83
        everyone). A filter the caller may not use is ignored, as the
        reference ignores it."""
        wanted = {}
        for name in _FIELD_FILTERS:
            value = common.query_value(req, name)
            if value is None:
                continue
            if (name in _ADMIN_FIELD_FILTERS and not admin_filters
                    and not req.is_version('2.83')):
                continue
            wanted[name] = value
        if 'power_state' in wanted:
            try:
                wanted['power_state'] = int(wanted['power_state'])
            except ValueError:
                raise exception.ValidationError(
                    detail='Invalid power_state filter %r: an integer is '
                           'expected.' % wanted['power_state'][:100])
        if 'image' in wanted:
            wanted['image'] = last_segment(wanted['image'])
        if 'flavor' in wanted:
            wanted['flavor'] = last_segment(wanted['flavor'])

        def value_of(instance, name):
            if name == 'image':
                return instance.image_ref
            if name == 'flavor':
                return instance.flavor.flavorid if instance.flavor else None
            return getattr(instance, name)
        return [i for i in instances
                if all(value_of(i, name) == value
                       for name, value in wanted.items())]

    @staticmethod
    def _by_locked(req, instances):
        """``locked`` (2.73): the servers locked, or not."""
        if not req.is_version('2.73'):
            return instances
        text = common.query_value(req, 'locked')
        if text is None:
            return instances
        try:
            locked = strutils.bool_from_string(text, strict=True)
        except ValueError:
            raise exception.ValidationError(
                detail='Invalid locked filter %r: a boolean is expected.'
                       % text[:100])
        return [i for i in instances if i.locked == locked]

    @staticmethod
    def _by_ip(req, instances, admin_filters):
        """``ip`` (IPv4) and ``ip6`` (IPv6; administrators only below
        2.5): a server with a fixed address of that version that the
        regular expression matches from its start."""
        wanted = {}
        for name, version in (('ip', 4), ('ip6', 6)):
            text = common.query_value(req, name)
            if text is None:
                continue
            if name == 'ip6' and not admin_filters and \
                    not req.is_version('2.5'):
                continue
            try:
                wanted[version] = re.compile(text)
            except re.error as e:
                raise exception.ValidationError(
                    detail='Invalid %s filter %r: %s' % (name, text[:100],
                                                         e))
        if not wanted:
            return instances

        def matches(instance):
            for vif in instance.network_info or ():
                for address in vif.ips:
                    pattern = wanted.get(
                        ipaddress.ip_address(address).version)
                    if pattern is not None and pattern.match(address):
                        return True
            return False
        return [i for i in instances if matches(i)]

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
        instances, limit = self._filtered(req)
        return self._with_links(
            req, 'servers', {'servers': [views.basic(req, i)
                                         for i in instances]},
            instances, limit)

    def detail(self, req):
        # The servers, their metadata, hosts and zones: one transaction.
        with obj_base.reads_together():
            instances, limit = self._filtered(req)
            services = self._services_for_host_status(req)
            metadata = metadata_obj.InstanceMetadata.get_for(
                req.context, [i.uuid for i in instances])
            return self._with_links(
                req, 'servers/detail', {'servers': [
                    views.detail(req, i, services,
                                 metadata=metadata.get(i.uuid, {}))
                    for i in instances]}, instances, limit)

    @staticmethod
    def _services_for_host_status(req, instance=None):
        # host_status (2.16) is shown to administrators only. ``instance``:
        # the one server shown, whose host's service alone is read.
        if req.is_version('2.16') and req.context.is_admin:
            return views.compute_services_by_host(req.context, instance)
        return None

    def show(self, req, server_id):
        policy.authorize(req.context, 'os_compute_api:servers:show')
        # The server, its metadata, host and zone: one transaction (what
        # the clients polling a boot ask for most).
        with obj_base.reads_together():
            instance = common.get_instance(self.compute_api, req.context,
                                           server_id)
            services = self._services_for_host_status(req, instance)
            return {'server': views.detail(req, instance, services,
                                           show=True)}

    # -- create and delete ---------------------------------------------------

    def create(self, req):
        context = req.context
        policy.authorize(context, 'os_compute_api:servers:create')
        body = req.validated_body()
        server = body['server']
        image_ref = last_segment(server['imageRef'])
        if not common.uuid_like(image_ref):
            raise exception.ValidationError(
                detail='Invalid imageRef provided: %s' % server['imageRef'])
        for mapping in server.get('block_device_mapping_v2', ()):
            if mapping['uuid'] != image_ref:
                raise exception.ValidationError(
                    detail='block_device_mapping_v2 may only name the '
                           'image of imageRef as the local root disk: '
                           'this service has no volumes.')
        flavor_id = last_segment(server['flavorRef'])
        destination = {}
        if 'host' in server or 'hypervisor_hostname' in server:
            # 2.74 (the schema has them from there): administrators only.
            policy.authorize(
                context,
                'os_compute_api:servers:create:requested_destination')
            destination = {'requested_host': server.get('host'),
                           'requested_node': server.get(
                               'hypervisor_hostname')}
        requested_zone = _requested_zone(context, server, destination)
        hints = (body.get('os:scheduler_hints')
                 or body.get('OS-SCH-HNT:scheduler_hints') or {})
        try:
            # Read before anything is created, so that a request naming a
            # missing network leaves no instance behind; handed on as
            # read (the create does not read them again).
            networks = self._requested_networks(context,
                                                server.get('networks'))
            instance = self.compute_api.create(
                context, server['name'], image_ref, flavor_id,
                networks=networks, hostname=server.get('hostname'),
                access_ip_v4=_canonical_ip(server.get('accessIPv4')),
                access_ip_v6=_canonical_ip(server.get('accessIPv6')),
                key_name=server.get('key_name'),
                group_uuid=hints.get('group'),
                availability_zone=requested_zone,
                metadata=server.get('metadata'),
                description=server.get('description'),
                auto_disk_config=auto_disk_config(server),
                **destination)
        except (exception.FlavorNotFound, exception.ImageNotFound,
                exception.NetworkNotFound, exception.KeypairNotFound,
                exception.ComputeHostNotFound,
                exception.InstanceGroupNotFound) as e:
            # What the body refers to is missing: the request is wrong,
            # not the URL (the reference answers 400).
            raise exception.ValidationError(detail=e.format_message())
        view = {'id': instance.uuid,
                'links': common.links(req, 'servers', instance.uuid),
                'OS-DCF:diskConfig': views.disk_config(instance),
                'security_groups': [{'name': 'default'}]}
        if CONF.api.enable_instance_password:
            # The one given, even empty (as the reference answers it).
            view['adminPass'] = (server['adminPass'] if 'adminPass' in server
                                 else admin_password.generate())
        return wsgi.Result({'server': view}, status=202,
                           headers={'Location': view['links'][0]['href']})

    @staticmethod
    def _requested_networks(context, requested) -> list:
        """The networks to attach, read (``objects.Network``;
        ``NetworkNotFound`` when one is missing).

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
            return available
        return [objects.Network.get_by_uuid(context, n['uuid'])
                for n in requested]

    def update(self, req, server_id):
        context = req.context
        body = req.validated_body()
        instance = common.get_instance(self.compute_api, context,
                                       server_id)
        policy.authorize(context, 'os_compute_api:servers:update',
                         target_project_id=instance.project_id)
        self.compute_api.update(context, instance,
                                changes_of(body['server']))
        return {'server': views.changed(req, instance)}

    def delete(self, req, server_id):
        policy.authorize(req.context, 'os_compute_api:servers:delete')
        instance = common.get_instance(self.compute_api, req.context,
                                       server_id)
        self.compute_api.delete(req.context, instance)
        return wsgi.Result(None, status=204)
