"""``/os-networks``: the networks servers can be attached to, read-only.

The reference deprecated this proxy at 2.36 (404 from then on), as it did
``/images``; clients still use it at 2.1 to look a network up by name or
id when the catalog has no Network service (``openstack server create
--nic net-id=NETWORK``). Networks are this project's own
(``objects.Network``): ``id`` is the network's UUID, ``label`` its name;
administrators also see its ``bridge``.
"""

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import exception
from nova import objects

RULE = 'os_compute_api:os-networks:view'
MAX_VERSION = '2.35'


def _view(req, network) -> dict:
    view = {'id': network.uuid, 'label': network.name,
            'cidr': network.cidr}
    if req.context.is_admin:
        view['bridge'] = network.bridge
    return view


class NetworksController:

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-networks', self.index,
                  max_version=MAX_VERSION),
            Route('GET', '/os-networks/{network_id}', self.show,
                  max_version=MAX_VERSION),
        ]

    def index(self, req):
        policy.authorize(req.context, RULE)
        return {'networks': [_view(req, n) for n in objects.Network.get_all(
            req.context)]}

    def show(self, req, network_id):
        policy.authorize(req.context, RULE)
        common.require_uuid(network_id,
                            exception.NetworkNotFound(network_id=network_id))
        return {'network': _view(req, objects.Network.get_by_uuid(
            req.context, network_id))}
