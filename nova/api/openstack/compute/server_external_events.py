"""``POST /os-server-external-events``: events from the network backend.

Admin only (the network service calls it, as Neutron calls Nova's). Each
event is answered on its own: ``code`` 200 when it was sent to the host
of its server, 404 when the server does not exist, 422 when it is on no
host. The response is 200 when every event was sent, 207 when some were
not, and 404 when none of the servers exist.
"""

from nova.api.openstack.compute.schemas import server_external_events as \
    schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova.model import external_event

RULE = 'os_compute_api:os-server-external-events:create'


class ServerExternalEventsController:
    def __init__(self, compute_api):
        self.compute_api = compute_api

    def routes(self) -> list[Route]:
        return [Route('POST', '/os-server-external-events', self.create,
                      body=schemas.create_for)]

    def create(self, req):
        context = req.context
        policy.authorize(context, RULE)
        body = req.validated_body()
        events = [external_event.InstanceExternalEvent(
                      instance_uuid=item['server_uuid'], name=item['name'],
                      tag=item.get('tag'),
                      status=item.get('status',
                                      external_event.STATUS_COMPLETED))
                  for item in body['events']]
        results = self.compute_api.external_instance_event(context, events)
        shown = []
        for item, result in zip(body['events'], results):
            view = {'server_uuid': result.instance_uuid,
                    'name': result.name, 'status': result.status,
                    'code': result.code}
            if 'tag' in item:
                view['tag'] = result.tag
            shown.append(view)
        codes = {view['code'] for view in shown}
        if codes == {404}:
            raise wsgi.HTTPError(404, 'No instances found for any event')
        status = 200 if codes == {200} else 207
        return wsgi.Result({'events': shown}, status=status)
