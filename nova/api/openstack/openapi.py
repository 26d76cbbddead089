"""The OpenAPI 3.1 document of the API this service implements.

Made from the router itself: every route that serves the microversion
asked for, its path parameters, and the JSON schema its handler validates
the request body with (``Route.body``), so the document cannot say
anything the code does not enforce. Served, without authentication, at::

    GET /v2.1/openapi.json        # at the newest microversion
    GET /v2.1/openapi.json  with  OpenStack-API-Version: compute 2.14

Each operation declares the ``OpenStack-API-Version`` header with the
document's microversion, so a client built from the document (a fuzzer:
``nova/tests/functional/api/test_openapi_fuzz.py``) asks for what the
document describes. Responses are Compute API bodies or faults
(``{"badRequest": {"code": 400, "message": ...}}``); only their status
codes are described.

Example::

    document = openapi.document(router, api_version.MAX_VERSION)
"""

from nova.api.openstack import api_version

OPENAPI = '3.1.0'
TITLE = 'OpenStack Compute API (this service\'s subset)'

_FAULT = {
    'type': 'object',
    'minProperties': 1, 'maxProperties': 1,
    'additionalProperties': {
        'type': 'object',
        'properties': {'code': {'type': 'integer'},
                       'message': {'type': 'string'}},
        'required': ['code', 'message'],
    },
}


def _parameters(route, version):
    params = [{
        'name': segment[1:-1], 'in': 'path', 'required': True,
        'schema': {'type': 'string', 'minLength': 1},
    } for segment in route.segments
        if segment.startswith('{') and segment.endswith('}')]
    params.append({
        'name': api_version.HEADER, 'in': 'header', 'required': True,
        'schema': {'type': 'string',
                   'enum': ['compute %s' % version]},
    })
    return params


def _operation(route, version):
    operation = {
        'operationId': '%s %s' % (route.method, route.template),
        'parameters': _parameters(route, version),
        'responses': {
            '2XX': {'description': 'Done (or accepted: 202).'},
            '4XX': {'description': 'The request was refused; nothing '
                                   'changed.',
                    'content': {'application/json': {'schema': _FAULT}}},
        },
    }
    schema = route.body_schema(version)
    if schema is not None:
        operation['requestBody'] = {
            'required': True,
            'content': {'application/json': {'schema': schema}},
        }
    return operation


def document(router, version: api_version.APIVersion) -> dict:
    """The OpenAPI document of ``router``'s routes at ``version``."""
    paths = {}
    for route in router.routes:
        if not route.serves(version):
            continue
        paths.setdefault(route.template, {})[route.method.lower()] = (
            _operation(route, version))
    return {
        'openapi': OPENAPI,
        'info': {'title': TITLE, 'version': str(version)},
        'servers': [{'url': '/v2.1'}],
        'paths': dict(sorted(paths.items())),
    }
