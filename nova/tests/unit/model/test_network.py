from nova.model import network as model
from nova.tests import base

PORT = '4b1c3f2e-7a6d-4e5f-9a8b-0c1d2e3f4a5b'


class TestVIF(base.TestCase):

    def _vif(self, **kw):
        net = model.Network(id='n1', label='public', bridge='br-public')
        return model.VIF(id=PORT, address='fa:16:3e:00:00:01', network=net,
                         **kw)

    def test_devname_is_tap_plus_port_prefix_within_linux_limit(self):
        vif = self._vif()
        self.assertEqual('tap4b1c3f2e-7a', vif.devname)
        self.assertLessEqual(len(vif.devname), 15)

    def test_round_trip(self):
        info = model.NetworkInfo([self._vif(ips=('10.0.0.5',))])
        again = model.NetworkInfo.from_list(info.to_list())
        self.assertEqual(info, again)
        self.assertIsInstance(again[0].network, model.Network)

    def test_inactive_and_as_active(self):
        info = model.NetworkInfo([self._vif(), self._vif(active=True)])
        self.assertEqual(1, len(info.inactive()))
        self.assertEqual([], info.as_active().inactive())

    def test_from_none_is_empty(self):
        self.assertEqual((), model.NetworkInfo.from_list(None))
