"""The ``evacuate`` action body, by microversion (the reference's).

* 2.1: ``onSharedStorage`` required, ``host`` and ``adminPass`` optional.
* 2.14: no ``onSharedStorage`` (the hosts find out themselves).
* 2.29: ``force`` (skip the checks of the named target host).
* 2.68: ``force`` is gone again (a 400).
* 2.95: the same body as 2.68 (what changes is the vm_state the
  evacuation ends in, not what it takes).
"""

import copy

from nova.api.openstack import api_version
from nova.api.openstack import validation

evacuate = {
    'type': 'object',
    'properties': {
        'host': validation.hostname,
        'onSharedStorage': validation.boolean,
        'adminPass': validation.admin_password,
    },
    'required': ['onSharedStorage'],
    'additionalProperties': False,
}

evacuate_v214 = copy.deepcopy(evacuate)
del evacuate_v214['properties']['onSharedStorage']
del evacuate_v214['required']

evacuate_v229 = copy.deepcopy(evacuate_v214)
evacuate_v229['properties']['force'] = validation.boolean

evacuate_v268 = copy.deepcopy(evacuate_v229)
del evacuate_v268['properties']['force']


def evacuate_for(version) -> dict:
    """The ``evacuate`` action's argument at ``version``."""
    if version.matches(api_version.v('2.68')):
        return evacuate_v268
    if version.matches(api_version.v('2.29')):
        return evacuate_v229
    if version.matches(api_version.v('2.14')):
        return evacuate_v214
    return evacuate
