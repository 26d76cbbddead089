"""``GET /limits``: the project's absolute limits and what it uses.

``tenant_id`` (administrators) names another project. ``rate`` is always
empty: no rate limits exist (as in Nova). Which names ``absolute`` has
by microversion: ``views/quota_sets.py``.
"""

from nova.api.openstack import common
from nova.api.openstack.compute.views import quota_sets as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.compute import quotas

RULE = 'os_compute_api:limits'


class LimitsController:

    def routes(self) -> list[Route]:
        return [Route('GET', '/limits', self.index)]

    def index(self, req):
        common.refuse_unknown_query(req, ('tenant_id',))
        policy.authorize(req.context, RULE)
        project_id = req.context.project_id
        requested = common.query_value(req, 'tenant_id')
        if requested is not None:
            policy.authorize(req.context, RULE + ':other_project',
                             target_project_id=requested)
            project_id = requested
        return views.limits(req, quotas.project_limits(project_id),
                            quotas.usage_of(project_id, None))
