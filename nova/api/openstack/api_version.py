"""Compute API microversions: parsing, comparing and negotiating them.

A client asks for a microversion with ``OpenStack-API-Version: compute
2.29`` (or the older ``X-OpenStack-Nova-API-Version: 2.29``); no header
means the minimum, 2.1, and ``latest`` means the maximum. A version outside
``[MIN, MAX]`` is refused with 406, a malformed one with 400.

Example::

    version = negotiate(request.headers)      # APIVersion(2, 29)
    if version >= APIVersion(2, 14): ...

History of what this API implements (the reference's numbering; versions
not listed change nothing this API serves):

* 2.1   the base API
* 2.2   os-keypairs: ``type`` (ssh, x509); create answers 201, delete
        204
* 2.3   more ``OS-EXT-SRV-ATTR`` attributes in server details (admin)
* 2.5   servers list: the ``ip6`` filter for non-admins too
* 2.9   ``locked`` in server details
* 2.10  os-keypairs: ``user_id`` (administrators)
* 2.11  ``PUT /os-services/force-down``; ``forced_down`` in services
* 2.13  os-server-groups: ``project_id``, ``user_id``
* 2.14  evacuate: no ``onSharedStorage`` (decided by the hosts), no
        ``adminPass`` in the response
* 2.15  os-server-groups: ``soft-affinity``, ``soft-anti-affinity``
* 2.16  ``host_status`` in server details
* 2.19  ``description`` in server details
* 2.21  instance actions of deleted servers
* 2.23  ``migration_type`` and ``links`` in os-migrations
* 2.26  ``tags`` in server details (always empty here)
* 2.29  evacuate: ``force`` (skip the target host's checks)
* 2.35  os-keypairs list: ``limit``, ``marker``
* 2.36  image proxy API (``/images``) removed: 404
* 2.37  server create: ``networks`` required, ``auto`` / ``none``
* 2.38  servers list: an unknown ``status`` filter is a 400
* 2.47  the flavor embedded in server details
* 2.51  instance action events shown to their owner too
* 2.53  services by UUID, ``PUT /os-services/{service_id}``; the older
        ``PUT /os-services/<action>`` forms end
* 2.55  ``description`` in flavors, ``PUT /flavors/{flavor_id}``
* 2.58  instance actions: ``updated_at``; ``limit``, ``marker``,
        ``changes-since``
* 2.59  os-migrations: ``uuid``; ``limit``, ``marker``, ``changes-since``
* 2.61  ``extra_specs`` in flavor details
* 2.62  action events: ``hostId``, and ``host`` (admin)
* 2.63  ``trusted_image_certificates`` in server details (always null)
* 2.64  os-server-groups: ``policy`` and ``rules``
        (``max_server_per_host``) instead of ``policies`` and
        ``metadata``
* 2.66  ``changes-before`` for servers, instance actions, os-migrations
* 2.68  evacuate: ``force`` refused again
* 2.71  ``server_groups`` in server show
* 2.73  ``locked_reason`` in server details, the ``locked`` filter
* 2.74  server create: ``host``, ``hypervisor_hostname`` (admin)
* 2.75  servers, os-keypairs and os-server-groups lists: an unknown
        query parameter is a 400; flavors: ``swap`` 0, not ""
* 2.80  os-migrations: ``user_id``, ``project_id`` and their filters
* 2.83  servers list: ``user_id``, ``vm_state``, ``task_state``,
        ``power_state`` filters for non-admins too
* 2.84  action events: ``details``
* 2.86  flavor extra specs of known namespaces are checked
* 2.90  ``OS-EXT-SRV-ATTR:hostname`` shown to non-admins; server create:
        ``hostname`` (one DNS label)
* 2.92  os-keypairs: no generation (``public_key`` required); ``@``
        and ``.`` in names
* 2.94  server create: ``hostname`` may be a fully qualified domain name
* 2.95  evacuate: the server ends STOPPED on its new host
* No-ops (about what this API does not have: cold and live
  migration, personality files, volumes, cells, ports
  with resource requests, shelve, NUMA topology, image cache, rescue,
  hypervisors, rebuild, server update): 2.54, 2.56, 2.57, 2.60,
  2.65, 2.67, 2.69, 2.70, 2.72, 2.77-2.79, 2.81, 2.85-2.89, 2.91, 2.93
* Not taken here (a request using them is a 400, as below them): 2.76
  ``power-update`` and 2.82 ``accelerator-request-bound`` external
  events (bare metal, accelerators); 2.90 / 2.94 ``hostname`` in server
  update and rebuild (neither exists here). The create's ``hostname`` is
  stored and shown, but no metadata service or config drive takes it to
  the guest.
"""

import dataclasses
import functools
import re

from nova import exception

SERVICE_TYPE = 'compute'
HEADER = 'OpenStack-API-Version'
LEGACY_HEADER = 'X-OpenStack-Nova-API-Version'
VARY = '%s, %s' % (HEADER, LEGACY_HEADER)

_VERSION_RE = re.compile(r'^([1-9]\d*)\.([1-9]\d*|0)$')


@functools.total_ordering
@dataclasses.dataclass(frozen=True)
class APIVersion:
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> 'APIVersion':
        match = _VERSION_RE.match(text.strip())
        if not match:
            raise exception.InvalidAPIVersionString(version=text)
        return cls(int(match.group(1)), int(match.group(2)))

    def __lt__(self, other):
        if not isinstance(other, APIVersion):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    def __str__(self):
        return '%d.%d' % (self.major, self.minor)

    def matches(self, min_version=None, max_version=None) -> bool:
        """Whether this version lies in [min_version, max_version]."""
        if min_version is not None and self < min_version:
            return False
        if max_version is not None and self > max_version:
            return False
        return True


MIN_VERSION = APIVersion(2, 1)
MAX_VERSION = APIVersion(2, 95)


def v(text: str) -> APIVersion:
    """Shorthand for a literal version in the code: ``v('2.14')``."""
    return APIVersion.parse(text)


def _from_new_header(value: str) -> str | None:
    """The compute entry of ``OpenStack-API-Version``, or None.

    The header may carry several services (``compute 2.1, identity 3.0``);
    only ours counts.
    """
    for item in value.split(','):
        parts = item.strip().split()
        if len(parts) == 2 and parts[0].lower() == SERVICE_TYPE:
            return parts[1]
        if len(parts) not in (0, 2):
            raise exception.InvalidAPIVersionString(version=item.strip())
    return None


def requested_text(headers) -> str | None:
    """What the client asked for, as text, or None for "no header"."""
    value = headers.get(HEADER)
    if value is not None:
        found = _from_new_header(value)
        if found is not None:
            return found
    return headers.get(LEGACY_HEADER)


def negotiate(headers) -> APIVersion:
    """The version to serve a request with; raises on a bad request.

    ``InvalidAPIVersionString`` (400) for malformed text,
    ``InvalidGlobalAPIVersion`` (406) for a version out of range.
    """
    text = requested_text(headers)
    if text is None:
        return MIN_VERSION
    if text.strip().lower() == 'latest':
        return MAX_VERSION
    version = APIVersion.parse(text)
    if not version.matches(MIN_VERSION, MAX_VERSION):
        raise exception.InvalidGlobalAPIVersion(
            req_ver=str(version), min_ver=str(MIN_VERSION),
            max_ver=str(MAX_VERSION))
    return version


def response_headers(version: APIVersion) -> dict[str, str]:
    """Headers every versioned response carries."""
    return {HEADER: '%s %s' % (SERVICE_TYPE, version),
            LEGACY_HEADER: str(version),
            'Vary': VARY}
