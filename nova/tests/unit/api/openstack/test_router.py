"""Routing: templates, literal precedence, microversion ranges, 404/405."""

from nova.api.openstack import api_version as av
from nova.api.openstack import router
from nova.api.openstack import wsgi
from nova.tests import base


def handler(name):
    def _handler(req, **params):
        return name, params
    _handler.__name__ = name
    return _handler


SHOW = handler('show')
DETAIL = handler('detail')
DELETE = handler('delete')
FORCE = handler('force_down')
UPDATE = handler('update')


class RouterTest(base.TestCase):

    def setUp(self):
        super().setUp()
        # Placeholders first on purpose: order must not matter.
        self.router = router.Router([
            router.Route('GET', '/servers/{server_id}', SHOW),
            router.Route('DELETE', '/servers/{server_id}', DELETE),
            router.Route('GET', '/servers/detail', DETAIL),
            router.Route('PUT', '/os-services/{service_id}', UPDATE,
                         min_version='2.53'),
            router.Route('PUT', '/os-services/force-down', FORCE,
                         min_version='2.11', max_version='2.52'),
        ])

    def match(self, method, path, version='2.1'):
        return self.router.match(method, path, av.v(version))

    def test_placeholder_binds_one_segment(self):
        route, params = self.match('GET', '/servers/abc')
        self.assertIs(SHOW, route.handler)
        self.assertEqual({'server_id': 'abc'}, params)

    def test_literal_wins_over_placeholder(self):
        route, params = self.match('GET', '/servers/detail')
        self.assertIs(DETAIL, route.handler)
        self.assertEqual({}, params)

    def test_trailing_slash_is_the_same_path(self):
        route, _params = self.match('GET', '/servers/detail/')
        self.assertIs(DETAIL, route.handler)

    def test_method_not_allowed_lists_allowed_methods(self):
        with self.assertRaises(wsgi.HTTPError) as caught:
            self.match('POST', '/servers/abc')
        self.assertEqual(405, caught.exception.status)
        self.assertEqual('DELETE, GET', caught.exception.headers['Allow'])

    def test_unknown_path_is_404(self):
        for path in ('/nothing', '/servers/a/b/c', '/servers//x', '/'):
            with self.subTest(path=path):
                with self.assertRaises(wsgi.HTTPError) as caught:
                    self.match('GET', path)
                self.assertEqual(404, caught.exception.status)

    def test_microversion_selects_the_route(self):
        route, _params = self.match('PUT', '/os-services/force-down', '2.11')
        self.assertIs(FORCE, route.handler)
        # From 2.53 "force-down" is a service id like any other.
        route, params = self.match('PUT', '/os-services/force-down', '2.53')
        self.assertIs(UPDATE, route.handler)
        self.assertEqual({'service_id': 'force-down'}, params)

    def test_route_outside_its_versions_is_404(self):
        with self.assertRaises(wsgi.HTTPError) as caught:
            self.match('PUT', '/os-services/force-down', '2.10')
        self.assertEqual(404, caught.exception.status)

    def test_dot_segments_are_refused(self):
        for path in ('/servers/..', '/servers/./detail', '/../servers',
                     '/servers/abc/../detail'):
            with self.subTest(path=path):
                with self.assertRaises(wsgi.HTTPError) as caught:
                    self.match('GET', path)
                self.assertEqual(400, caught.exception.status)

    def test_control_characters_are_refused(self):
        with self.assertRaises(wsgi.HTTPError) as caught:
            self.match('GET', '/servers/a\nb')
        self.assertEqual(400, caught.exception.status)

    def test_encoded_dots_are_plain_text_to_the_router(self):
        # The server decodes %2e once; what is left is not a dot segment
        # and reaches the handler as text, which then checks it.
        _route, params = self.match('GET', '/servers/%2e%2e')
        self.assertEqual({'server_id': '%2e%2e'}, params)
