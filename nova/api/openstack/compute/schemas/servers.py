"""Request bodies of ``POST /servers`` and the simple server actions.

Only the attributes this API acts on are accepted; anything else is a 400
(``additionalProperties: false``, as in the reference), so a client never
believes an option took effect when it was ignored.
"""

import copy

from nova.api.openstack import api_version
from nova.api.openstack import validation

V219 = api_version.v('2.19')
V237 = api_version.v('2.37')
V274 = api_version.v('2.74')
V290 = api_version.v('2.90')
V294 = api_version.v('2.94')

_network = {
    'type': 'object',
    'properties': {
        'uuid': validation.uuid,
    },
    'required': ['uuid'],
    'additionalProperties': False,
}

# The one block device mapping this service has: the image as the local
# root disk, which python-openstackclient sends with every image boot
# (there are no volumes here).
_image_root_disk = {
    'type': 'object',
    'properties': {
        'uuid': validation.uuid,
        'boot_index': {'type': ['integer', 'string'], 'enum': [0, '0']},
        'source_type': {'type': 'string', 'enum': ['image']},
        'destination_type': {'type': 'string', 'enum': ['local']},
        'delete_on_termination': {'type': ['boolean', 'string']},
    },
    'required': ['uuid', 'source_type'],
    'additionalProperties': False,
}

_server = {
    'type': 'object',
    'properties': {
        'block_device_mapping_v2': {'type': 'array', 'maxItems': 1,
                                    'items': _image_root_disk},
        'name': validation.name,
        'imageRef': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'flavorRef': {'type': ['string', 'integer'], 'minLength': 1,
                      'maxLength': 255, 'minimum': 0},
        'networks': {'type': 'array', 'items': _network},
        # A key pair of the caller (os-keypairs).
        'key_name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        # novaclient always sends these; one server per request here.
        'min_count': {'type': ['integer', 'string'], 'enum': [1, '1']},
        'max_count': {'type': ['integer', 'string'], 'enum': [1, '1']},
        'metadata': {'type': 'object', 'maxProperties': 0},
        # A zone, or zone:host[:node] (administrators).
        'availability_zone': {'type': 'string', 'minLength': 1,
                              'maxLength': 255},
        'OS-DCF:diskConfig': {'type': 'string', 'enum': ['MANUAL']},
        # Returned in the response, never stored (admin_password.py).
        'adminPass': validation.admin_password,
        'accessIPv4': {'type': 'string', 'format': 'ipv4'},
        'accessIPv6': {'type': 'string', 'format': 'ipv6'},
    },
    'required': ['name', 'imageRef', 'flavorRef'],
    'additionalProperties': False,
}

# The one scheduler hint acted on: the server group to join (its policy
# decides the host). Any other hint would be ignored, so it is refused.
_scheduler_hints = {
    'type': 'object',
    'properties': {'group': validation.uuid},
    'additionalProperties': False,
}

create = {
    'type': 'object',
    'properties': {'server': _server,
                   'os:scheduler_hints': _scheduler_hints,
                   'OS-SCH-HNT:scheduler_hints': _scheduler_hints},
    'required': ['server'],
    'additionalProperties': False,
}

# 2.19: a description; 2.37: "networks" required, and may be "auto" or
# "none" instead of a list.
_server_v219 = copy.deepcopy(_server)
_server_v219['properties']['description'] = validation.description
create_v219 = copy.deepcopy(create)
create_v219['properties']['server'] = _server_v219

_server_v237 = copy.deepcopy(_server_v219)
_server_v237['properties']['networks'] = {
    'oneOf': [{'type': 'array', 'items': _network},
              {'type': 'string', 'enum': ['auto', 'none']}]}
_server_v237['required'].append('networks')
create_v237 = copy.deepcopy(create)
create_v237['properties']['server'] = _server_v237

# 2.74: a named host and/or hypervisor (administrators).
_server_v274 = copy.deepcopy(_server_v237)
_server_v274['properties']['host'] = validation.hostname
_server_v274['properties']['hypervisor_hostname'] = validation.hostname
create_v274 = copy.deepcopy(create)
create_v274['properties']['server'] = _server_v274


def _with_hostname(server: dict, hostname: dict) -> tuple[dict, dict]:
    """``server`` taking ``hostname``, and the create body around it."""
    server = copy.deepcopy(server)
    server['properties']['hostname'] = hostname
    body = copy.deepcopy(create)
    body['properties']['server'] = server
    return server, body


# 2.90: the guest's hostname, one DNS label: letters, digits and dashes,
# neither starting nor ending with a dash, 2 to 63 characters, as the
# reference validates it.
_server_v290, create_v290 = _with_hostname(_server_v274, {
    'type': 'string', 'minLength': 2, 'maxLength': 63,
    'pattern': r'^[a-zA-Z0-9]+[a-zA-Z0-9-]*[a-zA-Z0-9]+$'})

# 2.94: the hostname may be a fully qualified domain name: letters,
# digits, dashes, dots and underscores, up to 255 characters.
_server_v294, create_v294 = _with_hostname(_server_v290, {
    'type': 'string', 'minLength': 1, 'maxLength': 255,
    'pattern': r'^[a-zA-Z0-9-._]*$'})


def create_for(version) -> dict:
    """The ``POST /servers`` body at ``version``."""
    if version.matches(V294):
        return create_v294
    if version.matches(V290):
        return create_v290
    if version.matches(V274):
        return create_v274
    if version.matches(V237):
        return create_v237
    if version.matches(V219):
        return create_v219
    return create


# The body of actions that take no argument: {"os-start": null}.
no_argument = {'type': ['null', 'object'], 'maxProperties': 0}

reboot = {
    'type': 'object',
    'properties': {
        'type': {'type': 'string',
                 'enum': ['HARD', 'Hard', 'hard', 'SOFT', 'Soft', 'soft']},
    },
    'required': ['type'],
    'additionalProperties': False,
}

reset_state = {
    'type': 'object',
    'properties': {
        'state': {'type': 'string', 'enum': ['active', 'error']},
    },
    'required': ['state'],
    'additionalProperties': False,
}
