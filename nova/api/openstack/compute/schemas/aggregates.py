"""Request bodies of ``/os-aggregates``: create, update and the actions
(``add_host``, ``remove_host``, ``set_metadata``), the same at every
microversion."""

from nova.api.openstack import validation

# An aggregate's name and zone: 1 to 255 characters, no leading or
# trailing white space (the reference's rule for names).
_name = validation.name
_zone = {'oneOf': [validation.name, {'type': 'null'}]}

create = {
    'type': 'object',
    'properties': {
        'aggregate': {
            'type': 'object',
            'properties': {'name': _name, 'availability_zone': _zone},
            'required': ['name'],
            'additionalProperties': False,
        },
    },
    'required': ['aggregate'],
    'additionalProperties': False,
}

update = {
    'type': 'object',
    'properties': {
        'aggregate': {
            'type': 'object',
            'properties': {'name': _name, 'availability_zone': _zone},
            'anyOf': [{'required': ['name']},
                      {'required': ['availability_zone']}],
            'additionalProperties': False,
        },
    },
    'required': ['aggregate'],
    'additionalProperties': False,
}

_host = {
    'type': 'object',
    'properties': {'host': validation.hostname},
    'required': ['host'],
    'additionalProperties': False,
}

# A null value deletes its key.
_metadata = {
    'type': 'object',
    'patternProperties': {
        r'^[a-zA-Z0-9-_:. ]{1,255}$': {
            'type': ['string', 'null'], 'maxLength': 255},
    },
    'additionalProperties': False,
}

_set_metadata = {
    'type': 'object',
    'properties': {'metadata': _metadata},
    'required': ['metadata'],
    'additionalProperties': False,
}

# Exactly one action a request.
action = {
    'type': 'object',
    'properties': {
        'add_host': _host,
        'remove_host': _host,
        'set_metadata': _set_metadata,
    },
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
}
