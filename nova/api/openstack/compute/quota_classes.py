"""``/os-quota-class-sets``: the limits of a quota class; the
``default`` class's are every project's defaults.

Administrators only. By microversion: the server group resources from
2.50, when the nova-network ones go; no injected file from 2.57
(``views/quota_sets.py``).
"""

from nova.api.openstack.compute.schemas import quota_sets as schemas
from nova.api.openstack.compute.views import quota_sets as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.compute import quotas
from nova import exception

RULE = 'os_compute_api:os-quota-class-sets:%s'


def _check_name(name: str) -> None:
    if not 1 <= len(name) <= 255:
        raise exception.ValidationError(
            detail='quota_class_name has to be between 1 and 255 '
                   'characters long.')


class QuotaClassesController:

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-quota-class-sets/{id}', self.show),
            Route('PUT', '/os-quota-class-sets/{id}', self.update,
                  body=schemas.class_update_for),
        ]

    def show(self, req, id):
        policy.authorize(req.context, RULE % 'show')
        _check_name(id)
        return views.quota_class_set(req, quotas.class_limits(id), id_=id)

    def update(self, req, id):
        body = req.validated_body()['quota_class_set']
        policy.authorize(req.context, RULE % 'update')
        _check_name(id)
        quotas.set_class_limits(id, quotas.parse_limits(body))
        return views.quota_class_set(req, quotas.class_limits(id))
