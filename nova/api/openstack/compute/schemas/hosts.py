"""Request body of ``PUT /os-hosts/{host_name}`` (up to 2.42): ``status``
and/or ``maintenance_mode``, each ``enable`` or ``disable`` (any of the
reference's three spellings)."""

_switch = {'type': 'string',
           'enum': ['enable', 'disable', 'Enable', 'Disable', 'ENABLE',
                    'DISABLE']}

update = {
    'type': 'object',
    'properties': {'status': _switch, 'maintenance_mode': _switch},
    'anyOf': [{'required': ['status']}, {'required': ['maintenance_mode']}],
    'additionalProperties': False,
}
