"""The body of ``POST /os-host-evacuations`` (this project's resource).

* below 2.14: ``on_shared_storage`` may state that the instances' files
  are on shared storage (the target hosts still check it against
  evidence), as the evacuate action's ``onSharedStorage`` does there;
* from 2.14 it is refused (400): the hosts find out themselves.
"""

import copy

from nova.api.openstack import api_version
from nova.api.openstack import validation

host_evacuation = {
    'type': 'object',
    'properties': {
        'host_evacuation': {
            'type': 'object',
            'properties': {
                'host': validation.hostname,
                'target_host': validation.hostname,
                'on_shared_storage': validation.strict_boolean,
            },
            'required': ['host'],
            'additionalProperties': False,
        },
    },
    'required': ['host_evacuation'],
    'additionalProperties': False,
}

host_evacuation_v214 = copy.deepcopy(host_evacuation)
del host_evacuation_v214['properties']['host_evacuation']['properties'][
    'on_shared_storage']


def host_evacuation_for(version) -> dict:
    if version.matches(api_version.v('2.14')):
        return host_evacuation_v214
    return host_evacuation
