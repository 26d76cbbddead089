"""``/os-quota-sets``: a project's (or one of its users') quota limits:
show, ``/defaults``, ``/detail`` (limit, in_use, reserved), update,
delete (back to the defaults).

Administrators update and delete; members of a project read its quotas;
anyone reads the defaults. ``?user_id=`` names one user of the project
(show, detail, update, delete). An update below what is used is a 400
unless ``force``. By microversion: no nova-network resource from 2.36, no
injected file from 2.57 (``views/quota_sets.py``); from 2.75 an unknown
query parameter is a 400.
"""

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import quota_sets as schemas
from nova.api.openstack.compute.views import quota_sets as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import validation
from nova.api.openstack import wsgi
from nova.compute import quotas

RULE = 'os_compute_api:os-quota-sets:%s'


def _user_id(req, rule: str, tenant_id: str) -> str | None:
    common.refuse_unknown_query(req, ('user_id',))
    policy.authorize(req.context, RULE % rule, target_project_id=tenant_id)
    return common.query_value(req, 'user_id') or None


class QuotaSetsController:

    def routes(self) -> list[Route]:
        path = '/os-quota-sets/{tenant_id}'
        return [
            Route('GET', path, self.show),
            Route('GET', path + '/defaults', self.defaults),
            Route('GET', path + '/detail', self.detail),
            Route('PUT', path, self.update, body=schemas.update_for),
            Route('DELETE', path, self.delete),
        ]

    def show(self, req, tenant_id):
        user_id = _user_id(req, 'show', tenant_id)
        return views.quota_set(req, quotas.limits_of(tenant_id, user_id),
                               id_=tenant_id)

    def defaults(self, req, tenant_id):
        policy.authorize(req.context, RULE % 'defaults',
                         target_project_id=tenant_id)
        return views.quota_set(req, quotas.default_limits(), id_=tenant_id)

    def detail(self, req, tenant_id):
        user_id = _user_id(req, 'detail', tenant_id)
        return views.quota_set_detail(
            req, quotas.limits_of(tenant_id, user_id),
            quotas.usage_of(tenant_id, user_id), id_=tenant_id)

    def update(self, req, tenant_id):
        body = dict(req.validated_body()['quota_set'])
        user_id = _user_id(req, 'update', tenant_id)
        force = validation.to_bool(body.pop('force', False))
        quotas.set_limits(tenant_id, user_id, quotas.parse_limits(body),
                          force=force)
        return views.quota_set(req, quotas.limits_of(tenant_id, user_id))

    def delete(self, req, tenant_id):
        user_id = _user_id(req, 'delete', tenant_id)
        quotas.delete_limits(tenant_id, user_id)
        return wsgi.Result(None, status=202)
