"""make_app and serve: the app over a real socket."""

import json
import urllib.request

from nova.api import wsgi as api_wsgi
from nova.tests import base


class MakeAppTest(base.TestCase):

    def test_serve_version_document_with_options(self):
        self.flags(compute_link_prefix='https://cloud.example:8774/',
                   group='api')
        # The version document needs no compute API.
        app = api_wsgi.make_app(compute_api=None, image_store=object())
        api = api_wsgi.serve(app, '127.0.0.1', 0)
        self.addCleanup(api.stop)
        with urllib.request.urlopen(api.url + '/v2.1', timeout=5) as resp:
            self.assertEqual(200, resp.status)
            doc = json.loads(resp.read())
        self.assertEqual('https://cloud.example:8774/v2.1/',
                         doc['version']['links'][0]['href'])

    def test_serve_defaults_to_the_api_options(self):
        self.flags(listen='127.0.0.1', listen_port=0, group='api')
        api = api_wsgi.serve(api_wsgi.make_app(None, image_store=object()))
        self.addCleanup(api.stop)
        self.assertEqual('127.0.0.1', api.host)
        self.assertNotEqual(0, api.port)
