"""``GET /os-disk-leases``: this project's own resource, the disk leases
of every compute host.

Admin only (``os_compute_api:os-disk-leases:list``), at every
microversion. It answers what the Compute API's ``/os-services`` has no
field for, so that resource can keep exactly the reference's fields: per
compute service, the leases its host's libvirt takes (``lockd``,
``sanlock``, ``none``; null when unknown or not reported), why configured
leases count as none or are unknown, the storage identity it records, the
hosts sharing that storage where one side takes no lease, whether the host
must therefore be fenced before it is evacuated, and all of it in one
sentence (``nova/compute/disk_leases.py``; doc/source/api.rst).

Query: ``host`` (a host name) keeps that host's entry only.

Example::

    GET /v2.1/os-disk-leases?host=compute2
    {"disk_leases": [{"host": "compute2", "service_uuid": "...",
                      "disk_leases": "none", "reason": null,
                      "storage_identity": "...",
                      "unprotected_sharing": ["compute1"],
                      "fence_before_evacuating": true,
                      "summary": "none: shares storage with compute1 ..."}]}
"""

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.compute import disk_leases
from nova import objects

RULE = 'os_compute_api:os-disk-leases:list'


def _view(status: disk_leases.LeaseStatus) -> dict:
    return {
        'host': status.host,
        'service_uuid': status.service_uuid,
        'disk_leases': status.disk_leases,
        'reason': status.reason,
        'storage_identity': status.storage_identity,
        'unprotected_sharing': list(status.unprotected_sharing),
        'fence_before_evacuating': status.fence_before_evacuating,
        'summary': status.summary,
    }


class DiskLeasesController:
    def routes(self) -> list[Route]:
        return [Route('GET', '/os-disk-leases', self.index)]

    def index(self, req):
        policy.authorize(req.context, RULE)
        host = common.query_value(req, 'host')
        computes = objects.Service.get_all(
            req.context, binary=disk_leases.COMPUTE_BINARY)
        shown = [s for s in computes if host is None or s.host == host]
        return {'disk_leases': [
            _view(disk_leases.status_of(s, computes)) for s in shown]}
