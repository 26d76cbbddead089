from nova import exception
from nova.tests import base
from nova.virt import driver


class TestLoadComputeDriver(base.TestCase):

    def test_malformed_name(self):
        self.assertRaises(exception.InvalidConfiguration,
                          driver.load_compute_driver, None, None, 'nodots')

    def test_missing_module(self):
        self.assertRaises(exception.InvalidConfiguration,
                          driver.load_compute_driver, None, None,
                          'nosuch.Driver')

    def test_not_a_driver(self):
        self.assertRaises(exception.InvalidConfiguration,
                          driver.load_compute_driver, None, None,
                          'driver.load_compute_driver')
