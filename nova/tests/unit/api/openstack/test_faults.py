"""Exceptions to Compute API fault bodies."""

from nova.api.openstack import faults
from nova.api.openstack import wsgi
from nova import exception
from nova.tests import base


class FaultsTest(base.TestCase):

    def test_names_by_status(self):
        cases = [
            (exception.ValidationError(detail='bad'), 400, 'badRequest'),
            (exception.NotAuthenticated(reason='x'), 401, 'unauthorized'),
            (exception.PolicyNotAuthorized(action='a'), 403, 'forbidden'),
            (exception.InstanceNotFound(instance_id='i'), 404,
             'itemNotFound'),
            (exception.InstanceInvalidState(instance_uuid='i', attr='a',
                                            state='s', method='m'), 409,
             'conflictingRequest'),
            (exception.InvalidGlobalAPIVersion(req_ver='3.0', min_ver='2.1',
                                               max_ver='2.53'), 406,
             'computeFault'),
            # A named host that is down is the client's problem, as in
            # Nova (evacuate to HOST).
            (exception.ComputeServiceUnavailable(host='h'), 400,
             'badRequest'),
            (exception.HypervisorUnavailable(host='h'), 503,
             'serviceUnavailable'),
            (wsgi.HTTPError(405, 'no', {'Allow': 'GET'}), 405, 'badMethod'),
            (wsgi.HTTPError(413, 'big'), 413, 'overLimit'),
            (wsgi.HTTPError(415, 'type'), 415, 'badMediaType'),
        ]
        for exc, status, name in cases:
            with self.subTest(exc=exc):
                fault = faults.from_exception(exc, 'req-1')
                self.assertEqual(status, fault.status)
                self.assertEqual({name: {'code': status,
                                         'message': str(exc)}}, fault.body)

    def test_http_error_keeps_headers(self):
        fault = faults.from_exception(
            wsgi.HTTPError(405, 'no', {'Allow': 'GET'}))
        self.assertEqual({'Allow': 'GET'}, fault.headers)

    def test_unexpected_error_hides_details(self):
        fault = faults.from_exception(KeyError('secret detail'), 'req-42')
        self.assertEqual(500, fault.status)
        message = fault.body['computeFault']['message']
        self.assertIn('req-42', message)
        self.assertIn('KeyError', message)
        self.assertNotIn('secret detail', message)
