"""Request bodies of ``PUT /os-quota-sets/{tenant_id}`` and ``PUT
/os-quota-class-sets/{id}``, by microversion.

A limit is an integer, or a string of one (``"5120"``), from -1
(unlimited) to the largest database integer. Which resources a body may
name follows what the responses show: quota sets drop the nova-network
resources at 2.36 and the injected files at 2.57; quota classes drop the
nova-network resources at 2.50 and the injected files at 2.57. Quota
sets also take ``force`` (set a limit below what is used).
"""

from nova.api.openstack import api_version
from nova.api.openstack import validation
from nova.compute import quotas

V236 = api_version.v('2.36')
V250 = api_version.v('2.50')
V257 = api_version.v('2.57')

_limit = {
    'type': ['integer', 'string'],
    'pattern': '^-?[0-9]+$',
    'minimum': quotas.UNLIMITED,
    'maximum': quotas.MAX_LIMIT,
}


def _body(wrapper: str, resources, extra: dict | None = None) -> dict:
    properties = {name: _limit for name in resources}
    properties.update(extra or {})
    return {
        'type': 'object',
        'properties': {wrapper: {
            'type': 'object',
            'properties': properties,
            'additionalProperties': False,
        }},
        'required': [wrapper],
        'additionalProperties': False,
    }


def _without(*dropped) -> list[str]:
    gone = {name for group in dropped for name in group}
    return [name for name in quotas.RESOURCES if name not in gone]


_FORCE = {'force': validation.boolean}

update = _body('quota_set', quotas.RESOURCES, _FORCE)
update_v236 = _body('quota_set', _without(quotas.NETWORK), _FORCE)
update_v257 = _body('quota_set',
                    _without(quotas.NETWORK, quotas.INJECTED), _FORCE)

class_update = _body('quota_class_set', quotas.RESOURCES)
class_update_v250 = _body('quota_class_set', _without(quotas.NETWORK))
class_update_v257 = _body('quota_class_set',
                          _without(quotas.NETWORK, quotas.INJECTED))


def update_for(version) -> dict:
    """The ``PUT /os-quota-sets/{tenant_id}`` body at ``version``."""
    if version.matches(V257):
        return update_v257
    if version.matches(V236):
        return update_v236
    return update


def class_update_for(version) -> dict:
    """The ``PUT /os-quota-class-sets/{id}`` body at ``version``."""
    if version.matches(V257):
        return class_update_v257
    if version.matches(V250):
        return class_update_v250
    return class_update
