"""Request body of ``POST /os-keypairs``, by microversion.

2.1: ``name`` and an optional ``public_key`` (none: generate a pair);
2.2: ``type`` (``ssh`` or ``x509``); 2.10: ``user_id`` (whose pair it is;
administrators); 2.92: ``public_key`` required (no generation), and
names may also hold ``@`` and ``.``.
"""

import copy

from nova.api.openstack import api_version

V22 = api_version.v('2.2')
V210 = api_version.v('2.10')
V292 = api_version.v('2.92')

# Letters, digits, space, '_' and '-' (the reference's rule); from 2.92
# also '@' and '.', though never dots alone: such a name could not be
# named in a path (``/os-keypairs/..``).
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': r'^[a-zA-Z0-9 _-]+$'}
_NAME_V292 = {'type': 'string', 'minLength': 1, 'maxLength': 255,
              'pattern': r'^(?!\.+$)[a-zA-Z0-9 _.@-]+$'}

_keypair = {
    'type': 'object',
    'properties': {
        'name': _NAME,
        'public_key': {'type': 'string', 'minLength': 1,
                       'maxLength': 65535},
    },
    'required': ['name'],
    'additionalProperties': False,
}


def _create(keypair: dict) -> dict:
    return {
        'type': 'object',
        'properties': {'keypair': keypair},
        'required': ['keypair'],
        'additionalProperties': False,
    }


create = _create(_keypair)

_keypair_v22 = copy.deepcopy(_keypair)
_keypair_v22['properties']['type'] = {'type': 'string',
                                      'enum': ['ssh', 'x509']}
create_v22 = _create(_keypair_v22)

_keypair_v210 = copy.deepcopy(_keypair_v22)
_keypair_v210['properties']['user_id'] = {'type': 'string', 'minLength': 1,
                                          'maxLength': 255}
create_v210 = _create(_keypair_v210)

_keypair_v292 = copy.deepcopy(_keypair_v210)
_keypair_v292['properties']['name'] = _NAME_V292
_keypair_v292['required'] = ['name', 'public_key']
create_v292 = _create(_keypair_v292)


def create_for(version) -> dict:
    """The ``POST /os-keypairs`` body at ``version``."""
    if version.matches(V292):
        return create_v292
    if version.matches(V210):
        return create_v210
    if version.matches(V22):
        return create_v22
    return create
