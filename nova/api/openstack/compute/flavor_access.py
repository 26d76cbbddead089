"""``os-flavor-access``: which projects may use a private flavor.

``GET /flavors/{flavor_id}/os-flavor-access`` lists them (a public
flavor has no list: 404); ``POST /flavors/{flavor_id}/action`` with
``addTenantAccess`` or ``removeTenantAccess`` (``{"tenant": "<project
id>"}``) grants or revokes one and answers the list. Granting twice is a
409, as is granting a public flavor; revoking what was never granted is
a 404. Administrators only.
"""

from nova.api.openstack.compute import flavors
from nova.api.openstack.compute.schemas import flavor_access as schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import validation
from nova import exception
from nova.objects import flavor_access

RULE = 'os_compute_api:os-flavor-access'
_ACTIONS = {'addTenantAccess': (RULE + ':add_tenant_access',
                                flavor_access.add),
            'removeTenantAccess': (RULE + ':remove_tenant_access',
                                   flavor_access.remove)}


def _listed(req, flavor_id: str) -> dict:
    return {'flavor_access': [
        {'flavor_id': flavor_id, 'tenant_id': project_id}
        for project_id in flavor_access.get_projects(req.context,
                                                     flavor_id)]}


class FlavorAccessController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', '/flavors/{flavor_id}/os-flavor-access',
                  self.index),
            Route('POST', '/flavors/{flavor_id}/action', self.action,
                  body=schemas.action),
        ]

    def index(self, req, flavor_id):
        policy.authorize(req.context, RULE)
        flavors.lookup(req, flavor_id)
        try:
            return _listed(req, flavor_id)
        except exception.FlavorIsPublic:
            raise exception.FlavorAccessNotFound(
                message='Access list not available for public flavors.')

    def action(self, req, flavor_id):
        body = req.json_body()
        name = next(iter(body), None) if isinstance(body, dict) else None
        if name in _ACTIONS:
            # The policy before the body's shape, as for server actions.
            policy.authorize(req.context, _ACTIONS[name][0])
        validation.validate(schemas.action, body)
        (name, argument), = body.items()
        rule, change = _ACTIONS[name]
        flavors.lookup(req, flavor_id)
        change(req.context, flavor_id, argument['tenant'])
        return _listed(req, flavor_id)
