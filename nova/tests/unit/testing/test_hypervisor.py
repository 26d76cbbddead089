"""nova.testing.hypervisor values that need no daemon.

Starting real hosts is proved in nova/tests/integration/libvirt/
test_harness.py (it needs root and libvirtd).
"""

import os
import subprocess
import sys

from nova.testing import hypervisor
from nova.testing import nsholder
from nova.tests import base


class TestLibvirtHostPaths(base.TestCase):

    def test_private_instances_path_is_in_the_tree(self):
        host = hypervisor.LibvirtHost('c1', self.tmp)
        self.assertEqual(os.path.join(self.tmp, 'c1', 'instances'),
                         host.instances_path)
        self.assertEqual('qemu+unix:///system?socket=%s/c1/run/libvirt/'
                         'libvirt-sock' % self.tmp, host.uri)
        self.assertEqual({}, host.pids)
        self.assertEqual([], host.qemu_pids())

    def test_shared_instances_path(self):
        shared = os.path.join(self.tmp, 'shared')
        a = hypervisor.LibvirtHost('a', self.tmp, instances_path=shared)
        b = hypervisor.LibvirtHost('b', self.tmp, instances_path=shared)
        self.assertEqual(a.instances_path, b.instances_path)
        self.assertNotEqual(a.uri, b.uri)

    def test_stop_of_a_host_never_started(self):
        host = hypervisor.LibvirtHost('c1', self.tmp)
        host.stop()
        self.assertEqual({}, host.pids)


class TestNamespaceHolder(base.TestCase):

    def test_refuses_to_run_outside_a_private_namespace(self):
        # Its end-of-input cleanup stops every process of its namespace:
        # run in the machine's own namespace it must do nothing at all.
        child = subprocess.run(
            [sys.executable, nsholder.__file__,
             os.path.join(self.tmp, 'log')],
            input=b'', capture_output=True, timeout=30)
        self.assertEqual(2, child.returncode)
        self.assertIn(b'refusing', child.stdout)
