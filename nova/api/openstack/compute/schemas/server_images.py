"""Request bodies of the ``createImage`` and ``createBackup`` actions
(the reference's: a name, the image's metadata as the server's is
bounded, and for a backup its type and how many of that type to keep)."""

from nova.api.openstack.compute.schemas import servers
from nova.api.openstack import validation

create_image = {
    'type': 'object',
    'properties': {
        'name': validation.name,
        'metadata': servers.metadata,
    },
    'required': ['name'],
    'additionalProperties': False,
}

# The reference's non-negative integer: a number, or a string of digits.
_non_negative_integer = {
    'type': ['integer', 'string'],
    'pattern': '^[0-9]*$', 'minimum': 0, 'minLength': 1,
}

create_backup = {
    'type': 'object',
    'properties': {
        'name': validation.name,
        'backup_type': {'type': 'string'},
        'rotation': _non_negative_integer,
        'metadata': servers.metadata,
    },
    'required': ['name', 'backup_type', 'rotation'],
    'additionalProperties': False,
}
