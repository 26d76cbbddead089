"""Request bodies of ``POST /flavors`` and ``PUT /flavors/{id}``.

Create takes ``name``, ``ram``, ``vcpus``, ``disk`` and optionally ``id``
(null or absent: a UUID is generated), ``OS-FLV-EXT-DATA:ephemeral``,
``swap``, ``rxtx_factor`` and ``os-flavor-access:is_public``; from 2.55
also ``description``, which is all ``PUT`` (2.55) changes. Sizes may be
sent as digit strings (``"ram": "1024"``), as the reference allows; the
controller turns them into integers and checks their range.
"""

import copy

from nova.api.openstack import api_version
from nova.api.openstack import validation

V255 = api_version.v('2.55')
# The largest value of the integer columns.
MAX_INT = 2 ** 31 - 1


def _size(minimum: int) -> dict:
    return {'type': ['integer', 'string'], 'pattern': r'^[0-9]+$',
            'minimum': minimum, 'maximum': MAX_INT}


positive = _size(1)
non_negative = _size(0)

# No blanks, and never dots alone: the id is a path segment of every
# flavor URL (``/flavors/..`` could not name it).
flavor_id = {'type': ['string', 'number', 'null'], 'minLength': 1,
             'maxLength': 255, 'pattern': r'^(?!\.+$)[a-zA-Z0-9_.-]+$'}

description = {'type': ['string', 'null'], 'maxLength': 65535,
               'format': 'printable-or-empty'}

_flavor = {
    'type': 'object',
    'properties': {
        'name': validation.name,
        'id': flavor_id,
        'ram': positive,
        'vcpus': positive,
        'disk': non_negative,
        'OS-FLV-EXT-DATA:ephemeral': non_negative,
        'swap': non_negative,
        'rxtx_factor': {'type': ['number', 'string'],
                        'pattern': r'^[0-9]+(\.[0-9]+)?$',
                        'exclusiveMinimum': 0, 'maximum': 3.40282e+38},
        'os-flavor-access:is_public': validation.boolean,
    },
    'required': ['name', 'ram', 'vcpus', 'disk'],
    'additionalProperties': False,
}


def _wrapped(flavor: dict) -> dict:
    return {'type': 'object', 'properties': {'flavor': flavor},
            'required': ['flavor'], 'additionalProperties': False}


create = _wrapped(_flavor)

_flavor_v255 = copy.deepcopy(_flavor)
_flavor_v255['properties']['description'] = description
create_v255 = _wrapped(_flavor_v255)

update = _wrapped({
    'type': 'object',
    'properties': {'description': description},
    'required': ['description'],
    'additionalProperties': False,
})


def create_for(version) -> dict:
    """The ``POST /flavors`` body at ``version``."""
    return create_v255 if version.matches(V255) else create
