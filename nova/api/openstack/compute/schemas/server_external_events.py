"""The body of ``POST /os-server-external-events``."""

import copy

from nova.api.openstack import api_version
from nova.api.openstack import validation

# Event names the reference accepts at 2.1; ``volume-extended`` from 2.51.
EVENT_NAMES = ['network-changed', 'network-vif-plugged',
               'network-vif-unplugged', 'network-vif-deleted']
EVENT_NAMES_V251 = EVENT_NAMES + ['volume-extended']

create = {
    'type': 'object',
    'properties': {
        'events': {
            'type': 'array', 'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'server_uuid': validation.uuid,
                    'name': {'type': 'string', 'enum': EVENT_NAMES},
                    'status': {'type': 'string',
                               'enum': ['failed', 'completed',
                                        'in-progress']},
                    'tag': {'type': 'string', 'maxLength': 255},
                },
                'required': ['server_uuid', 'name'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['events'],
    'additionalProperties': False,
}

create_v251 = copy.deepcopy(create)
create_v251['properties']['events']['items']['properties']['name'][
    'enum'] = EVENT_NAMES_V251


def create_for(version) -> dict:
    """The ``POST /os-server-external-events`` body at ``version``."""
    return create_v251 if version.matches(api_version.v('2.51')) else create
