"""The arguments of ``POST /flavors/{id}/action``: ``addTenantAccess``
and ``removeTenantAccess``, each ``{"tenant": "<project id>"}``."""

_tenant = {
    'type': 'object',
    'properties': {'tenant': {'type': 'string', 'minLength': 1,
                              'maxLength': 255,
                              'pattern': r'^[a-zA-Z0-9_.-]+$'}},
    'required': ['tenant'],
    'additionalProperties': False,
}

action = {
    'type': 'object', 'minProperties': 1, 'maxProperties': 1,
    'properties': {'addTenantAccess': _tenant,
                   'removeTenantAccess': _tenant},
    'additionalProperties': False,
}
