"""Request body of ``POST /os-server-groups``, by microversion.

2.1: ``name`` and ``policies``, a list of exactly one of ``affinity`` and
``anti-affinity``; 2.15: also ``soft-affinity`` and
``soft-anti-affinity``; 2.64: ``policy`` (one string) instead of
``policies``, and ``rules`` with ``max_server_per_host`` (a positive
integer; anti-affinity only, which the API checks).
"""

import copy

from nova.api.openstack import api_version
from nova.api.openstack import validation

V215 = api_version.v('2.15')
V264 = api_version.v('2.64')

_HARD = ['anti-affinity', 'affinity']
_ALL = _HARD + ['soft-anti-affinity', 'soft-affinity']


def _policies(names: list) -> dict:
    return {'type': 'array', 'items': {'type': 'string', 'enum': names},
            'minItems': 1, 'maxItems': 1, 'uniqueItems': True}


def _create(server_group: dict) -> dict:
    return {
        'type': 'object',
        'properties': {'server_group': server_group},
        'required': ['server_group'],
        'additionalProperties': False,
    }


_server_group = {
    'type': 'object',
    'properties': {
        'name': validation.name,
        'policies': _policies(_HARD),
    },
    'required': ['name', 'policies'],
    'additionalProperties': False,
}
create = _create(_server_group)

_server_group_v215 = copy.deepcopy(_server_group)
_server_group_v215['properties']['policies'] = _policies(_ALL)
create_v215 = _create(_server_group_v215)

# A positive integer, also written as a string of digits (the
# reference's positive_integer).
_positive_integer = {'type': ['integer', 'string'], 'pattern': '^[0-9]*$',
                     'minimum': 1, 'minLength': 1}

create_v264 = _create({
    'type': 'object',
    'properties': {
        'name': validation.name,
        'policy': {'type': 'string', 'enum': _ALL},
        'rules': {
            'type': 'object',
            'properties': {'max_server_per_host': _positive_integer},
            'additionalProperties': False,
        },
    },
    'required': ['name', 'policy'],
    'additionalProperties': False,
})


def create_for(version) -> dict:
    """The ``POST /os-server-groups`` body at ``version``."""
    if version.matches(V264):
        return create_v264
    if version.matches(V215):
        return create_v215
    return create
