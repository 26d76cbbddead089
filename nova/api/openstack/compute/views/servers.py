"""How a server looks in responses (``GET /servers[/detail|/{id}]``).

Field names and shapes are the reference's. Attributes whose policy is
admin-only (``OS-EXT-SRV-ATTR:*``, ``host_status``) appear only for
administrators; ``fault`` only for servers in ERROR (or deleted). An
administrator reads the fault's ``message`` and, for a 500, its
``details`` (the traceback); anyone else reads the sentence stored for
the owner and no ``details``: the message names hosts, paths and storage
identities (doc/source/cleanup.rst, "Who reads a fault").

Fields by microversion beyond the base: ``OS-EXT-SRV-ATTR`` extras 2.3,
``locked`` 2.9, ``host_status`` 2.16, ``description`` 2.19, ``tags`` 2.26,
the embedded flavor 2.47, ``trusted_image_certificates`` 2.63 (null: no
image is signature-checked here), ``server_groups`` 2.71 (show only:
the group the server is in, if any), ``locked_reason`` 2.73, and from 2.90
``OS-EXT-SRV-ATTR:hostname`` for every user who may see the server.
``accessIPv4`` and ``accessIPv6`` are what the create or an update gave,
empty strings when none did; ``adminPass`` is never shown (it is not
stored). ``metadata`` is the server's metadata (``instance_metadata``).
``OS-EXT-AZ:availability_zone`` is the zone of the server's host.
``OS-DCF:diskConfig`` (every microversion, in the create answer too) is
what the create, the last rebuild or an update asked for, ``MANUAL``
when none did.

``PUT /servers/{id}`` and the rebuild action answer ``changed`` below
2.75: the reference's shorter view (no extended attributes, addresses
without their type and MAC), with ``key_name`` (2.54) and ``user_data``
(2.57) for a rebuild; from 2.75 they answer the ``show`` view (a rebuild
with ``user_data`` instead of ``OS-EXT-SRV-ATTR:user_data``).
"""

import hashlib
import ipaddress

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.compute import availability_zones
from nova.compute import hostnames
from nova.conf import CONF
from nova import exception
from nova.model import binaries
from nova.model import vm_states
from nova import objects
from nova.objects import instance_group as group_obj
from nova.objects import instance_metadata as metadata_obj

# Statuses during which the reference shows "progress".
_PROGRESS_STATUSES = ('ACTIVE', 'BUILD', 'REBUILD', 'RESIZE',
                      'VERIFY_RESIZE', 'MIGRATING')


def host_id_of(project_id: str | None, host: str | None) -> str:
    """An opaque per-project name of ``host`` (the reference's hostId)."""
    if not host:
        return ''
    return hashlib.sha224(
        ((project_id or '') + host).encode('utf-8')).hexdigest()


def host_id(instance) -> str:
    """The hostId of a server's host."""
    return host_id_of(instance.project_id, instance.host)


def _ip_version(address: str) -> int:
    try:
        return ipaddress.ip_address(address).version
    except ValueError:
        return 4


def addresses(network_info) -> dict:
    """``{label: [{"version", "addr", "OS-EXT-IPS..."}]}`` of the VIFs."""
    result = {}
    for vif in network_info or ():
        entries = result.setdefault(vif.network.label, [])
        for address in vif.ips:
            entries.append({
                'version': _ip_version(address),
                'addr': address,
                'OS-EXT-IPS:type': 'fixed',
                'OS-EXT-IPS-MAC:mac_addr': vif.address,
            })
    return result


def image_link(req, image_ref: str | None):
    """``image`` of a server booted from ``image_ref``."""
    if not image_ref:
        return ''
    prefix = common.link_prefix(req)
    return {'id': image_ref,
            'links': [{'rel': 'bookmark', 'href': '%s/images/%s'
                       % (prefix, image_ref)}]}


def _flavor(req, instance):
    flavor = instance.flavor
    if flavor is None:
        return {}
    if req.is_version('2.47'):
        return {'vcpus': flavor.vcpus, 'ram': flavor.memory_mb,
                'disk': flavor.root_gb, 'ephemeral': flavor.ephemeral_gb,
                'swap': flavor.swap, 'original_name': flavor.name,
                'extra_specs': dict(flavor.extra_specs)}
    prefix = common.link_prefix(req)
    return {'id': flavor.flavorid,
            'links': [{'rel': 'bookmark', 'href': '%s/flavors/%s'
                       % (prefix, flavor.flavorid)}]}


def fault(context, instance) -> dict | None:
    if instance.vm_state not in (vm_states.ERROR, vm_states.DELETED):
        return None
    found = objects.InstanceFault.get_latest_for_instance(context,
                                                          instance.uuid)
    if found is None:
        return None
    shown = {'code': found.code, 'created': common.isotime(found.created_at)}
    if context.is_admin:
        shown['message'] = found.message
        # Only a 500 has them (older rows of other codes may too).
        if found.details:
            shown['details'] = found.details
    else:
        shown['message'] = owner_message(found.user_message, found.code)
    return shown


def owner_message(stored: str | None, code: int | None) -> str:
    """What the server's owner reads of a failure: the sentence stored
    for them, or for a row written before one was (NULL) the sentence of
    its code; never the operator's message."""
    return stored or exception.safe_message_for_code(code)


def host_status(service) -> str:
    """UP, DOWN, MAINTENANCE (disabled) or UNKNOWN (no service record)."""
    if service is None:
        return 'UNKNOWN'
    if service.forced_down or not service.is_up(CONF.service_down_time):
        return 'DOWN'
    if service.disabled:
        return 'MAINTENANCE'
    return 'UP'


def basic(req, instance) -> dict:
    return {'id': instance.uuid, 'name': instance.display_name,
            'links': common.links(req, 'servers', instance.uuid)}


def disk_config(instance) -> str:
    """``OS-DCF:diskConfig`` as the create, rebuild or update set it."""
    return 'AUTO' if instance.auto_disk_config else 'MANUAL'


def hostname(instance) -> str:
    """The guest's hostname as the API shows it: the one stored at
    create, or for a row written before it was stored, the one derived
    from the display name."""
    if instance.hostname is not None:
        return instance.hostname
    return hostnames.from_display_name(instance.display_name,
                                       instance.uuid)


def _zones(req) -> availability_zones.ZoneMap:
    """The hosts' zones, read once a request (a list shows many
    servers)."""
    zones = req.environ.get('nova.zone_map')
    if zones is None:
        zones = availability_zones.ZoneMap.read(req.context)
        req.environ['nova.zone_map'] = zones
    return zones


def _metadata_of(context, instance, metadata):
    if metadata is not None:
        return metadata
    return metadata_obj.InstanceMetadata.get(context, instance.uuid)


def _common(req, instance, metadata) -> dict:
    """The fields every full view has (the reference's base view)."""
    status = common.status_from_state(instance.vm_state, instance.task_state)
    view = basic(req, instance)
    view.update({
        'status': status,
        'tenant_id': instance.project_id,
        'user_id': instance.user_id,
        'metadata': _metadata_of(req.context, instance, metadata),
        'hostId': host_id(instance),
        'image': image_link(req, instance.image_ref),
        'flavor': _flavor(req, instance),
        'created': common.isotime(instance.created_at),
        'updated': common.isotime(instance.updated_at),
        # Empty when not given, as the reference shows them.
        'accessIPv4': instance.access_ip_v4 or '',
        'accessIPv6': instance.access_ip_v6 or '',
        'OS-DCF:diskConfig': disk_config(instance),
    })
    if status in _PROGRESS_STATUSES:
        view['progress'] = 0
    return view


def _since_2_9(req, instance, view, show) -> None:
    """The fields later microversions add to every full view."""
    if req.is_version('2.9'):
        view['locked'] = instance.locked
    if req.is_version('2.19'):
        view['description'] = instance.display_description
    if req.is_version('2.26'):
        view['tags'] = []
    if req.is_version('2.63'):
        view['trusted_image_certificates'] = None
    if req.is_version('2.71') and show:
        group = group_obj.InstanceGroup.get_by_instance_uuid(req.context,
                                                             instance.uuid)
        view['server_groups'] = [] if group is None else [group.uuid]
    if req.is_version('2.73'):
        view['locked_reason'] = instance.locked_reason


def changed(req, instance, rebuild=False, metadata=None) -> dict:
    """The view ``PUT /servers/{id}`` (and, with ``rebuild``, the
    rebuild action) answers."""
    if req.is_version('2.75'):
        services = (compute_services_by_host(req.context, instance)
                    if req.context.is_admin else None)
        view = detail(req, instance, services, show=True, metadata=metadata)
        if rebuild:
            view.pop('OS-EXT-SRV-ATTR:user_data', None)
            view['user_data'] = instance.user_data
        return view
    view = _common(req, instance, metadata)
    view['addresses'] = {
        label: [{'version': a['version'], 'addr': a['addr']}
                for a in entries]
        for label, entries in addresses(instance.network_info).items()}
    shown_fault = fault(req.context, instance)
    if shown_fault is not None:
        view['fault'] = shown_fault
    if rebuild and req.is_version('2.54'):
        view['key_name'] = instance.key_name
    if rebuild and req.is_version('2.57'):
        view['user_data'] = instance.user_data
    _since_2_9(req, instance, view, show=True)
    return view


def detail(req, instance, services=None, show=False,
           metadata=None) -> dict:
    """The full view; ``services``: compute services by host (2.16);
    ``show``: the view of ``GET /servers/{id}`` (``server_groups``);
    ``metadata``: the server's, when the caller read it already (a list
    reads every server's in one query)."""
    context = req.context
    view = _common(req, instance, metadata)
    view.update({
        'addresses': addresses(instance.network_info),
        'key_name': instance.key_name,
        'config_drive': '',
        'OS-EXT-AZ:availability_zone': availability_zones.instance_zone(
            _zones(req), instance),
        'OS-EXT-STS:vm_state': instance.vm_state,
        'OS-EXT-STS:task_state': instance.task_state,
        'OS-EXT-STS:power_state': instance.power_state,
        'OS-SRV-USG:launched_at': common.dbtime(instance.launched_at),
        'OS-SRV-USG:terminated_at': common.dbtime(instance.terminated_at),
        'os-extended-volumes:volumes_attached': [],
    })
    if policy.check(context, 'os_compute_api:os-extended-server-attributes'):
        view['OS-EXT-SRV-ATTR:host'] = instance.host
        view['OS-EXT-SRV-ATTR:hypervisor_hostname'] = instance.node
        view['OS-EXT-SRV-ATTR:instance_name'] = 'instance-%s' % (
            instance.uuid,)
        if req.is_version('2.3'):
            view.update({
                'OS-EXT-SRV-ATTR:hostname': hostname(instance),
                'OS-EXT-SRV-ATTR:reservation_id': '',
                'OS-EXT-SRV-ATTR:launch_index': 0,
                'OS-EXT-SRV-ATTR:kernel_id': '',
                'OS-EXT-SRV-ATTR:ramdisk_id': '',
                'OS-EXT-SRV-ATTR:root_device_name': None,
                'OS-EXT-SRV-ATTR:user_data': instance.user_data,
            })
        if req.is_version('2.16') and services is not None:
            view['host_status'] = (host_status(services.get(instance.host))
                                   if instance.host else '')
    _since_2_9(req, instance, view, show)
    if req.is_version('2.90'):
        view['OS-EXT-SRV-ATTR:hostname'] = hostname(instance)
    shown_fault = fault(context, instance)
    if shown_fault is not None:
        view['fault'] = shown_fault
    return view


def compute_services_by_host(context, instance=None) -> dict:
    """{host: its nova-compute service}: of every host, or only of
    ``instance``'s (one server's view needs no other)."""
    if instance is None:
        services = objects.Service.get_all(context, binary=binaries.COMPUTE)
        return {service.host: service for service in services}
    if not instance.host:
        return {}
    try:
        return {instance.host: objects.Service.get_by_host_and_binary(
            context, instance.host, binaries.COMPUTE)}
    except exception.ServiceNotFound:
        return {}
