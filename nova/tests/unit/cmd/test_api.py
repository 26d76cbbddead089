from unittest import mock

from nova.cmd import api as api_cmd
from nova.tests import base


class Stop(Exception):
    """Ends main() once the configuration would be parsed."""


class TestMain(base.TestCase):

    def test_api_options_registered_before_the_files_are_parsed(self):
        # [keystone_authtoken] is registered by the API's processes alone
        # (nova/tests/unit/conf/test_keystone.py), so nova-api must do it.
        calls = mock.Mock()
        calls.prepare_service.side_effect = Stop
        with mock.patch.object(api_cmd.nova_conf, 'register_api_opts',
                               calls.register_api_opts), \
                mock.patch.object(api_cmd.service, 'prepare_service',
                                  calls.prepare_service):
            self.assertRaises(Stop, api_cmd.main, ['--config-file', 'x'])
        self.assertEqual(
            [mock.call.register_api_opts(),
             mock.call.prepare_service(api_cmd.BINARY,
                                       ['--config-file', 'x'])],
            calls.mock_calls)
