"""Version discovery: ``GET /`` and ``GET /v2.1``.

Both answer without authentication, as the reference says, so a client
can find the microversion range before it has a token.
"""

from nova.api.openstack import api_version
from nova.api.openstack import common

# The date the reference gives for the v2.1 API.
V21_UPDATED = '2013-07-23T11:33:21Z'
MEDIA_TYPE = 'application/vnd.openstack.compute+json;version=2.1'


def _v21(req, with_details: bool) -> dict:
    prefix = common.link_prefix(req)
    links = [{'rel': 'self', 'href': '%s/v2.1/' % prefix}]
    doc = {
        'id': 'v2.1',
        'status': 'CURRENT',
        'version': str(api_version.MAX_VERSION),
        'min_version': str(api_version.MIN_VERSION),
        'updated': V21_UPDATED,
        'links': links,
    }
    if with_details:
        links.append({'rel': 'describedby', 'type': 'text/html',
                      'href': 'https://docs.openstack.org/'})
        doc['media-types'] = [{'base': 'application/json',
                               'type': MEDIA_TYPE}]
    return doc


def index(req) -> dict:
    """GET /: every major version (only v2.1 here)."""
    return {'versions': [_v21(req, with_details=False)]}


def show(req) -> dict:
    """GET /v2.1: the v2.1 API and its microversion range."""
    return {'version': _v21(req, with_details=True)}
