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
V254 = api_version.v('2.54')
V257 = api_version.v('2.57')
V263 = api_version.v('2.63')
V273 = api_version.v('2.73')
V274 = api_version.v('2.74')
V290 = api_version.v('2.90')
V294 = api_version.v('2.94')

# ``OS-DCF:diskConfig`` (create, rebuild, update): recorded and shown as
# given. The root disk is made the flavor's size either way, and nothing
# here grows the guest's partitions and file systems (there is no guest
# agent), so AUTO behaves as MANUAL (doc/source/api.rst).
disk_config = {'type': 'string', 'enum': ['AUTO', 'MANUAL']}

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
        # A zone, or zone:host[:node] (administrators).
        'availability_zone': {'type': 'string', 'minLength': 1,
                              'maxLength': 255},
        'OS-DCF:diskConfig': disk_config,
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


def newest_at(version, changes, oldest: dict) -> dict:
    """The schema of the newest of ``changes`` (``(minimum version,
    schema)`` pairs, newest first) that ``version`` reaches, else
    ``oldest``."""
    for minimum, schema in changes:
        if version.matches(minimum):
            return schema
    return oldest


def create_for(version) -> dict:
    """The ``POST /servers`` body at ``version``."""
    return newest_at(version, ((V294, create_v294), (V290, create_v290),
                               (V274, create_v274), (V237, create_v237),
                               (V219, create_v219)), create)


# The body of actions that take no argument: {"os-start": null}.
no_argument = {'type': ['null', 'object'], 'maxProperties': 0}

# migrate: null, or the 2.56 target host (never used: not supported).
migrate = {'type': ['null', 'object'],
           'properties': {'host': {'type': ['string', 'null']}},
           'additionalProperties': False}

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


# -- metadata, update, lock and rebuild ---------------------------------------

# A server's metadata: keys 1-255 characters, values up to 255, all
# strings (the reference's limits; a longer key or value is a 400).
metadata = {
    'type': 'object',
    'patternProperties': {
        '^[a-zA-Z0-9-_:. ]{1,255}$': {'type': 'string', 'maxLength': 255},
    },
    'additionalProperties': False,
}

for _server_schema in (_server, _server_v219, _server_v237, _server_v274,
                       _server_v290, _server_v294):
    _server_schema['properties']['metadata'] = metadata

# ``PUT /servers/{id}``: name, access addresses; description from 2.19;
# hostname from 2.90 (2.94: a fully qualified domain name).
_update_server = {
    'type': 'object',
    'properties': {
        'name': validation.name,
        'accessIPv4': {'type': 'string', 'format': 'ipv4'},
        'accessIPv6': {'type': 'string', 'format': 'ipv6'},
        'OS-DCF:diskConfig': disk_config,
    },
    'additionalProperties': False,
}


def _wrapped(key: str, inner: dict) -> dict:
    return {'type': 'object', 'properties': {key: inner},
            'required': [key], 'additionalProperties': False}


def _plus(base: dict, **properties) -> dict:
    extended = copy.deepcopy(base)
    extended['properties'].update(properties)
    return extended


update = _wrapped('server', _update_server)
update_v219 = _wrapped('server', _plus(
    _update_server, description=validation.description))
update_v290 = _wrapped('server', _plus(
    update_v219['properties']['server'],
    hostname=_server_v290['properties']['hostname']))
update_v294 = _wrapped('server', _plus(
    update_v219['properties']['server'],
    hostname=_server_v294['properties']['hostname']))


def update_for(version) -> dict:
    """The ``PUT /servers/{id}`` body at ``version``."""
    return newest_at(version, ((V294, update_v294), (V290, update_v290),
                               (V219, update_v219)), update)


# The lock action: no argument, or from 2.73 an optional reason.
lock_v273 = {
    'type': ['null', 'object'],
    'properties': {
        'locked_reason': {'type': 'string', 'minLength': 1,
                          'maxLength': 255},
    },
    'additionalProperties': False,
}


def lock_for(version) -> dict:
    return lock_v273 if version.matches(V273) else no_argument


# The rebuild action's argument: the image, and what the rebuilt server
# is given; key_name 2.54, user_data 2.57 (when personality files go),
# trusted_image_certificates 2.63 (only null: nothing here checks image
# signatures), hostname 2.90.
_rebuild = {
    'type': 'object',
    'properties': {
        'imageRef': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'name': validation.name,
        'metadata': metadata,
        'adminPass': validation.admin_password,
        'accessIPv4': {'type': 'string', 'format': 'ipv4'},
        'accessIPv6': {'type': 'string', 'format': 'ipv6'},
        'OS-DCF:diskConfig': disk_config,
        'preserve_ephemeral': {'type': 'boolean'},
    },
    'required': ['imageRef'],
    'additionalProperties': False,
}
rebuild_v219 = _plus(_rebuild, description=validation.description)
rebuild_v254 = _plus(rebuild_v219, key_name={
    'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255})
rebuild_v257 = _plus(rebuild_v254, user_data={
    'type': ['string', 'null'], 'format': 'base64',
    'maxLength': 65535})
rebuild_v263 = _plus(rebuild_v257, trusted_image_certificates={
    'type': 'null'})
rebuild_v290 = _plus(rebuild_v263,
                     hostname=_server_v290['properties']['hostname'])
rebuild_v294 = _plus(rebuild_v263,
                     hostname=_server_v294['properties']['hostname'])


def rebuild_for(version) -> dict:
    """The rebuild action's argument at ``version``."""
    return newest_at(version, ((V294, rebuild_v294), (V290, rebuild_v290),
                               (V263, rebuild_v263), (V257, rebuild_v257),
                               (V254, rebuild_v254), (V219, rebuild_v219)),
                     _rebuild)


# ``PUT``/``POST /servers/{id}/metadata`` and ``PUT .../metadata/{key}``.
metadata_body = _wrapped('metadata', metadata)
metadata_item = _wrapped('meta', dict(metadata, minProperties=1,
                                      maxProperties=1))
