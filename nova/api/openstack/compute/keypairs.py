"""``/os-keypairs``: a user's key pairs: create or import, list, show,
delete.

By microversion: create answers 201 (200 below 2.2) and delete 204 (202
below 2.2); ``type`` (``ssh``/``x509``) from 2.2; from 2.10 an
administrator names another user's pairs with ``user_id`` (in the create
body, or the query of the others); the list pages with ``limit`` and
``marker`` (a pair's name) from 2.35, with ``keypairs_links`` when a page
is full; from 2.75 an unknown query parameter of the list is a 400; from
2.92 the API no longer generates pairs (``public_key`` is required).
"""

from nova.api.openstack import common
from nova.api.openstack.compute.schemas import keypairs as schemas
from nova.api.openstack.compute.views import keypairs as views
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova.api.openstack import wsgi
from nova.compute import keypairs as keypairs_api

RULE = 'os_compute_api:os-keypairs:%s'


def _user_id(req, rule: str, requested: str | None) -> str:
    """Whose pairs a request is about: the caller's, or ``requested``
    (2.10) if the policy lets the caller act for that user."""
    user_id = req.context.user_id
    if requested is not None and req.is_version('2.10'):
        user_id = requested
    policy.authorize(req.context, RULE % rule, target_user_id=user_id)
    return user_id


def _query_user_id(req, rule: str) -> str:
    return _user_id(req, rule, common.query_value(req, 'user_id'))


def _check_known_query(req) -> None:
    if not req.is_version('2.75'):
        return
    common.refuse_unknown_query(req, {'user_id', 'limit', 'marker'})


class KeypairsController:
    def __init__(self, max_limit: int):
        self.max_limit = max_limit

    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-keypairs', self.index),
            Route('POST', '/os-keypairs', self.create,
                  body=schemas.create_for),
            Route('GET', '/os-keypairs/{keypair_name}', self.show),
            Route('DELETE', '/os-keypairs/{keypair_name}', self.delete),
        ]

    def index(self, req):
        _check_known_query(req)
        user_id = _query_user_id(req, 'index')
        keypairs = keypairs_api.get_all(req.context, user_id)
        if not req.is_version('2.35'):
            return {'keypairs': [views.listed(req, k) for k in keypairs]}
        limit, marker = common.limit_and_marker(req, self.max_limit)
        page = common.paginate(keypairs, limit, marker,
                               key=lambda k: k.name)
        shown = {'keypairs': [views.listed(req, k) for k in page]}
        links = common.collection_links(req, 'os-keypairs', page, limit,
                                        key=lambda k: k.name)
        if links:
            shown['keypairs_links'] = links
        return shown

    def create(self, req):
        body = req.validated_body()['keypair']
        user_id = _user_id(req, 'create', body.get('user_id'))
        created = keypairs_api.create(
            req.context, user_id, body['name'],
            key_type=body.get('type', 'ssh'),
            public_key=body.get('public_key'))
        view = views.created(req, created.keypair, created.private_key)
        return wsgi.Result(view, status=201 if req.is_version('2.2')
                           else 200)

    def show(self, req, keypair_name):
        user_id = _query_user_id(req, 'show')
        return views.shown(req, keypairs_api.get(req.context, user_id,
                                                 keypair_name))

    def delete(self, req, keypair_name):
        user_id = _query_user_id(req, 'delete')
        keypairs_api.delete(req.context, user_id, keypair_name)
        return wsgi.Result(None, status=204 if req.is_version('2.2')
                           else 202)
