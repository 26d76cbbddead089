"""Every golden domain XML is valid against libvirt's domain schema.

The driver defines domains without ``VIR_DOMAIN_DEFINE_VALIDATE`` (it costs
30-40 ms per define; see ``Host.define_guest``): what the config objects
write is validated here instead, by libvirt's own schema check on its
test driver.
"""

import glob
import os

from oslo_utils import uuidutils

from nova.tests import base
from nova.tests.unit.virt.libvirt import golden
from nova.virt.libvirt import binding


def _golden_files():
    return sorted(glob.glob(os.path.join(golden.GOLDEN_DIR, '*.xml')))


class TestGoldenSchema(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conn = binding.libvirt.open('test:///default')
        self.addCleanup(self.conn.close)

    def _define_validated(self, xml):
        """libvirt's schema error for ``xml``, or None once defined."""
        try:
            domain = self.conn.defineXMLFlags(xml, binding.DEFINE_VALIDATE)
        except binding.Error as e:
            return e
        domain.undefine()
        return None

    @staticmethod
    def _filled(path):
        # The placeholders the golden files hold for per-test values.
        with open(path) as f:
            return (f.read().replace('@UUID@', uuidutils.generate_uuid())
                    .replace('@TMP@', '/var/lib/nova'))

    def test_every_golden_file_is_valid(self):
        files = _golden_files()
        self.assertGreaterEqual(len(files), 4)
        for path in files:
            with self.subTest(golden=os.path.basename(path)):
                error = self._define_validated(self._filled(path))
                self.assertIsNone(error, '%s: %s' % (path, error))

    def test_the_check_refuses_what_the_schema_does_not_know(self):
        # The check above can fail: an element the schema does not have.
        xml = self._filled(_golden_files()[0]).replace(
            '<devices>', '<devices><no-such-device/>', 1)
        error = self._define_validated(xml)
        self.assertIsNotNone(error)
        self.assertEqual(binding.ERR_XML_INVALID_SCHEMA,
                         binding.error_code(error))
