"""Version discovery: ``GET /``, ``GET /v2`` and ``GET /v2.1``.

They answer without authentication, as the reference says, so a client
can find the microversion range before it has a token. ``GET /`` lists
v2.0 then v2.1, as the reference does, with the same fields; v2.0 (no
microversions: ``version`` and ``min_version`` empty) is only described
here: its resources are not served, a client uses ``/v2.1`` (at 2.1 it
answers what v2.0 did).
"""

import dataclasses

from nova.api.openstack import api_version
from nova.api.openstack import common


@dataclasses.dataclass(frozen=True)
class MajorVersion:
    id: str
    path: str           # under the endpoint's root, e.g. v2.1
    status: str         # CURRENT, SUPPORTED
    min_version: str    # '' when the version has no microversions
    max_version: str
    updated: str        # the date the reference gives it
    media_type: str


V20 = MajorVersion('v2.0', 'v2', 'SUPPORTED', '', '', '2011-01-21T11:33:21Z',
                   'application/vnd.openstack.compute+json;version=2')
V21 = MajorVersion('v2.1', 'v2.1', 'CURRENT', str(api_version.MIN_VERSION),
                   str(api_version.MAX_VERSION), '2013-07-23T11:33:21Z',
                   'application/vnd.openstack.compute+json;version=2.1')


def _document(req, major: MajorVersion, with_details: bool) -> dict:
    links = [{'rel': 'self',
              'href': '%s/%s/' % (common.link_prefix(req), major.path)}]
    doc = {
        'id': major.id,
        'status': major.status,
        'version': major.max_version,
        'min_version': major.min_version,
        'updated': major.updated,
        'links': links,
    }
    if with_details:
        links.append({'rel': 'describedby', 'type': 'text/html',
                      'href': 'https://docs.openstack.org/'})
        doc['media-types'] = [{'base': 'application/json',
                               'type': major.media_type}]
    return doc


def index(req) -> dict:
    """GET /: every major version, v2.0 then v2.1."""
    return {'versions': [_document(req, V20, with_details=False),
                         _document(req, V21, with_details=False)]}


def show(req) -> dict:
    """GET /v2.1: the v2.1 API and its microversion range."""
    return {'version': _document(req, V21, with_details=True)}


def show_v20(req) -> dict:
    """GET /v2: the v2.0 API (no microversions)."""
    return {'version': _document(req, V20, with_details=True)}
