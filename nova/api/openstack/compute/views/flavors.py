"""How a flavor looks in the API, by microversion.

The list shows id, name and links; the details (show, create, update,
the detailed list) add the sizes and the extension attributes. From 2.55
both show ``description``; from 2.61 the details show ``extra_specs``
(to callers the ``os-flavor-extra-specs:index`` policy lets read them);
no swap is ``""`` before 2.75 and ``0`` from 2.75.
"""

from nova.api.openstack import common
from nova.api.openstack import policy

EXTRA_SPECS_RULE = 'os_compute_api:os-flavor-extra-specs:index'


def basic(req, flavor) -> dict:
    view = {'id': flavor.flavorid, 'name': flavor.name,
            'links': common.links(req, 'flavors', flavor.flavorid)}
    if req.is_version('2.55'):
        view['description'] = flavor.description
    return view


def detail(req, flavor) -> dict:
    view = basic(req, flavor)
    view.update({
        'ram': flavor.memory_mb,
        'vcpus': flavor.vcpus,
        'disk': flavor.root_gb,
        'OS-FLV-EXT-DATA:ephemeral': flavor.ephemeral_gb,
        'swap': flavor.swap or (0 if req.is_version('2.75') else ''),
        'rxtx_factor': flavor.rxtx_factor,
        'os-flavor-access:is_public': flavor.is_public,
        # Flavors are never disabled here: a flavor is deleted instead.
        'OS-FLV-DISABLED:disabled': False,
    })
    if req.is_version('2.61') and policy.check(req.context,
                                               EXTRA_SPECS_RULE):
        view['extra_specs'] = dict(flavor.extra_specs)
    return view


def shown(req, flavor) -> dict:
    return {'flavor': detail(req, flavor)}
