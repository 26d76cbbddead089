"""``/extensions``: the legacy v2 extension table (deprecated in Nova,
answered for old clients).

Nova answers a fixed table whatever it serves; this project answers the
entries of the resources it serves, plus two Nova still lists although
it removed their APIs (``os-hosts``, ``os-consoles``), which clients
look for (doc/source/api.rst). Any other alias is a 404.
"""

from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import exception

RULE = 'os_compute_api:extensions'
# Nova's values for every entry (the table is static metadata).
_NAMESPACE = 'http://docs.openstack.org/compute/ext/fake_xml'
_UPDATED = '2014-12-03T00:00:00Z'

# (alias, name, description), sorted by alias.
_TABLE = (
    ('OS-EXT-SRV-ATTR', 'ExtendedServerAttributes',
     'Extended Server Attributes support.'),
    ('OS-EXT-STS', 'ExtendedStatus', 'Extended Status support.'),
    ('flavors', 'Flavors', 'Flavors Extension.'),
    ('images', 'Images', 'Proxying API for Images.'),
    ('os-admin-actions', 'AdminActions',
     'Enable admin-only server actions.'),
    ('os-consoles', 'Consoles', 'Interactive Console support.'),
    ('os-evacuate', 'Evacuate', 'Enables server evacuation.'),
    ('os-hosts', 'Hosts', 'Admin-only host administration.'),
    ('os-hypervisors', 'Hypervisors', 'Admin-only hypervisor administration.'),
    ('os-instance-actions', 'InstanceActions', 'View a log of actions and '
     'events taken on an instance.'),
    ('os-instance_usage_audit_log', 'OSInstanceUsageAuditLog',
     'Admin-only Task Log Monitoring.'),
    ('os-keypairs', 'Keypairs', 'Keypair Support.'),
    ('os-migrations', 'Migrations', 'Provide data on migrations.'),
    ('os-networks', 'Networks', 'Admin-only Network Management Extension.'),
    ('os-pause-server', 'PauseServer',
     'Enable pause/unpause server actions.'),
    ('os-server-diagnostics', 'ServerDiagnostics',
     'Allow Admins to view server diagnostics through server id.'),
    ('os-server-external-events', 'ServerExternalEvents',
     'Server External Event Triggers.'),
    ('os-server-start-stop', 'ServerStartStop', 'Start/Stop instance '
     'compute API support.'),
    ('os-services', 'Services', 'Services support.'),
    ('os-simple-tenant-usage', 'SimpleTenantUsage',
     'Simple tenant usage extension.'),
    ('os-suspend-server', 'SuspendServer',
     'Enable suspend/resume server actions.'),
    ('servers', 'Servers', 'Servers.'),
)


def _view(alias: str, name: str, description: str) -> dict:
    return {'alias': alias, 'name': name, 'description': description,
            'namespace': _NAMESPACE, 'updated': _UPDATED, 'links': []}


class ExtensionsController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', '/extensions', self.index),
            Route('GET', '/extensions/{alias}', self.show),
        ]

    def index(self, req):
        policy.authorize(req.context, RULE)
        return {'extensions': [_view(*entry) for entry in _TABLE]}

    def show(self, req, alias):
        policy.authorize(req.context, RULE)
        for entry in _TABLE:
            if entry[0] == alias:
                return {'extension': _view(*entry)}
        raise exception.NotFound()
