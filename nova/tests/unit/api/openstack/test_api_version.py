"""Microversion parsing and negotiation."""

from nova.api.openstack import api_version as av
from nova import exception
from nova.tests import base


class APIVersionTest(base.TestCase):

    def test_parse_and_compare(self):
        self.assertEqual(av.APIVersion(2, 29), av.v('2.29'))
        self.assertLess(av.v('2.9'), av.v('2.14'))
        self.assertGreater(av.v('2.100'), av.v('2.53'))
        self.assertEqual('2.14', str(av.v('2.14')))

    def test_parse_refuses_malformed_versions(self):
        for text in ('2', '2.', '.1', '2.1.1', 'two.one', '02.1', '2.01',
                     '', ' ', '2.-1'):
            with self.subTest(text=text):
                self.assertRaises(exception.InvalidAPIVersionString,
                                  av.APIVersion.parse, text)

    def test_matches_range(self):
        self.assertTrue(av.v('2.14').matches(av.v('2.14'), av.v('2.29')))
        self.assertTrue(av.v('2.29').matches(av.v('2.14'), av.v('2.29')))
        self.assertFalse(av.v('2.13').matches(av.v('2.14')))
        self.assertFalse(av.v('2.30').matches(None, av.v('2.29')))


class NegotiateTest(base.TestCase):

    def test_no_header_is_the_minimum(self):
        self.assertEqual(av.MIN_VERSION, av.negotiate({}))

    def test_new_header(self):
        self.assertEqual(av.v('2.29'), av.negotiate(
            {av.HEADER: 'compute 2.29'}))

    def test_new_header_among_other_services(self):
        self.assertEqual(av.v('2.14'), av.negotiate(
            {av.HEADER: 'identity 3.0, compute 2.14'}))

    def test_new_header_for_another_service_only_falls_back(self):
        self.assertEqual(av.v('2.11'), av.negotiate(
            {av.HEADER: 'identity 3.0', av.LEGACY_HEADER: '2.11'}))
        self.assertEqual(av.MIN_VERSION, av.negotiate(
            {av.HEADER: 'identity 3.0'}))

    def test_new_header_wins_over_legacy(self):
        self.assertEqual(av.v('2.20'), av.negotiate(
            {av.HEADER: 'compute 2.20', av.LEGACY_HEADER: '2.11'}))

    def test_legacy_header(self):
        self.assertEqual(av.v('2.11'), av.negotiate(
            {av.LEGACY_HEADER: '2.11'}))

    def test_latest(self):
        self.assertEqual(av.MAX_VERSION, av.negotiate(
            {av.HEADER: 'compute latest'}))
        self.assertEqual(av.MAX_VERSION, av.negotiate(
            {av.LEGACY_HEADER: 'Latest'}))

    def test_out_of_range_is_406(self):
        for text in ('2.0', '1.1', '2.%d' % (av.MAX_VERSION.minor + 1),
                     '3.0'):
            with self.subTest(text=text):
                e = self.assertRaises(exception.InvalidGlobalAPIVersion,
                                      av.negotiate, {av.LEGACY_HEADER: text})
                self.assertEqual(406, e.code)
                self.assertIn('Minimum is 2.1 and maximum is %s'
                              % av.MAX_VERSION, e.format_message())

    def test_malformed_is_400(self):
        e = self.assertRaises(exception.InvalidAPIVersionString,
                              av.negotiate, {av.HEADER: 'compute 2.x'})
        self.assertEqual(400, e.code)
        self.assertRaises(exception.InvalidAPIVersionString, av.negotiate,
                          {av.HEADER: 'compute'})

    def test_response_headers(self):
        headers = av.response_headers(av.v('2.29'))
        self.assertEqual('compute 2.29', headers['OpenStack-API-Version'])
        self.assertEqual('2.29', headers['X-OpenStack-Nova-API-Version'])
        self.assertEqual(
            'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
            headers['Vary'])

    def assertRaises(self, exc, func, *args):
        with super().assertRaises(exc) as caught:
            func(*args)
        return caught.exception
