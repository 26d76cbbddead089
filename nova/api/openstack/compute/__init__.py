"""The Compute API v2.1 resources this service implements.

``build_router(compute_api, image_store, max_limit)`` gives the router of
every path under ``/v2.1``, with this project's own
``/os-host-evacuations`` (cast to the compute API's conductor).
"""

from nova.api.openstack.compute import aggregates
from nova.api.openstack.compute import availability_zone
from nova.api.openstack.compute import disk_leases
from nova.api.openstack.compute import extensions
from nova.api.openstack.compute import flavor_access
from nova.api.openstack.compute import flavor_extra_specs
from nova.api.openstack.compute import flavors
from nova.api.openstack.compute import host_evacuations
from nova.api.openstack.compute import hosts
from nova.api.openstack.compute import hypervisors
from nova.api.openstack.compute import images
from nova.api.openstack.compute import instance_actions
from nova.api.openstack.compute import instance_usage_audit_log
from nova.api.openstack.compute import keypairs
from nova.api.openstack.compute import limits
from nova.api.openstack.compute import migrations
from nova.api.openstack.compute import networks
from nova.api.openstack.compute import quota_classes
from nova.api.openstack.compute import quota_sets
from nova.api.openstack.compute import server_actions
from nova.api.openstack.compute import server_diagnostics
from nova.api.openstack.compute import server_external_events
from nova.api.openstack.compute import server_groups
from nova.api.openstack.compute import server_metadata
from nova.api.openstack.compute import servers
from nova.api.openstack.compute import services
from nova.api.openstack.compute import simple_tenant_usage
from nova.api.openstack import router


def build_router(compute_api, image_store, max_limit: int) -> router.Router:
    controllers = [
        servers.ServersController(compute_api, max_limit),
        server_actions.ServerActionsController(compute_api),
        server_metadata.ServerMetadataController(compute_api),
        instance_actions.InstanceActionsController(max_limit),
        services.ServicesController(),
        disk_leases.DiskLeasesController(),
        migrations.MigrationsController(max_limit),
        server_external_events.ServerExternalEventsController(compute_api),
        flavors.FlavorsController(max_limit),
        flavor_access.FlavorAccessController(),
        flavor_extra_specs.FlavorExtraSpecsController(),
        images.ImagesController(image_store),
        networks.NetworksController(),
        keypairs.KeypairsController(max_limit),
        server_groups.ServerGroupsController(max_limit),
        aggregates.AggregatesController(),
        availability_zone.AvailabilityZoneController(),
        hosts.HostsController(),
        quota_sets.QuotaSetsController(),
        quota_classes.QuotaClassesController(),
        limits.LimitsController(),
        hypervisors.HypervisorsController(compute_api, max_limit),
        server_diagnostics.ServerDiagnosticsController(compute_api),
        extensions.ExtensionsController(),
        instance_usage_audit_log.InstanceUsageAuditLogController(),
        simple_tenant_usage.SimpleTenantUsageController(max_limit),
        # This project's own resource (the Compute API has none).
        host_evacuations.HostEvacuationsController(compute_api),
    ]
    return router.Router([route for controller in controllers
                          for route in controller.routes()])
