"""Bodies of the os-services updates, by microversion."""

from nova.api.openstack import validation

# PUT /os-services/enable and /disable (2.1 - 2.52)
service_update = {
    'type': 'object',
    'properties': {
        'host': validation.hostname,
        'binary': validation.binary_name,
    },
    'required': ['host', 'binary'],
    'additionalProperties': False,
}

# PUT /os-services/disable-log-reason (2.1 - 2.52)
service_disable_log_reason = {
    'type': 'object',
    'properties': {
        'host': validation.hostname,
        'binary': validation.binary_name,
        'disabled_reason': {'type': 'string', 'minLength': 1,
                            'maxLength': 255,
                            'format': 'printable-or-empty'},
    },
    'required': ['host', 'binary', 'disabled_reason'],
    'additionalProperties': False,
}

# PUT /os-services/force-down (2.11 - 2.52)
service_force_down = {
    'type': 'object',
    'properties': {
        'host': validation.hostname,
        'binary': validation.binary_name,
        'forced_down': validation.boolean,
    },
    'required': ['host', 'binary', 'forced_down'],
    'additionalProperties': False,
}

# PUT /os-services/{service_id} (2.53)
service_update_v253 = {
    'type': 'object',
    'properties': {
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'disabled_reason': {'type': 'string', 'minLength': 1,
                            'maxLength': 255,
                            'format': 'printable-or-empty'},
        'forced_down': validation.boolean,
    },
    'minProperties': 1,
    'additionalProperties': False,
}
