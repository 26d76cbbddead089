"""The libvirtd probe against real libvirt (``binding.active_domain_count``,
as nova-hamonitor hands it in): its test driver, one
configuration file per host (``test:///DIR/<host>.xml``), and a Unix
socket that takes connections but never answers (a stalled libvirtd)."""

import os
import socket
import threading

from nova.conf import CONF
from nova import exception
from nova.ha import probe as probe_mod
from nova.tests import base
from nova.virt.libvirt import binding

RUNNING = """<node>
  <domain type='test'>
    <name>guest1</name><memory>65536</memory><os><type>hvm</type></os>
  </domain>
</node>
"""
# One guest defined, shut off (test driver run state 5).
SHUT_OFF = """<node>
  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>
    <name>guest1</name><memory>65536</memory><os><type>hvm</type></os>
    <test:runstate>5</test:runstate>
  </domain>
</node>
"""


def hosts_probe(tmp, timeout=5):
    for host, node in (('busy', RUNNING), ('idle', SHUT_OFF)):
        with open(os.path.join(tmp, host + '.xml'), 'w') as f:
            f.write(node)
    return probe_mod.LibvirtProbe('test://%s/%%s.xml' % tmp, timeout,
                                  binding.active_domain_count)


def probe_threads(host):
    return [t for t in threading.enumerate()
            if t.name == 'ha-probe-%s' % host]


class LibvirtProbeTestCase(base.TestCase):

    def test_answers_what_libvirtd_reports(self):
        probe = hosts_probe(self.tmp)
        self.assertEqual('test://%s/busy.xml' % self.tmp, probe.uri('busy'))
        self.assertIs(True, probe('busy'))
        # Defined but shut off: nothing runs.
        self.assertIs(False, probe('idle'))
        # No libvirtd there (the test driver finds no file).
        self.assertIsNone(probe('gone'))

    def test_a_libvirtd_that_never_answers_is_not_reached(self):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(os.path.join(self.tmp, 'stalled.sock'))
        # Connections are queued by the kernel and never accepted: the
        # client's first call waits for an answer that never comes.
        listener.listen(8)
        probe = probe_mod.LibvirtProbe(
            'qemu+unix:///system?socket=%s/%%s.sock' % self.tmp, timeout=1,
            count_running=binding.active_domain_count)
        self.assertIsNone(probe('stalled'))
        (waiting,) = probe_threads('stalled')
        # Asked again while the first call still waits: no second thread.
        self.assertIsNone(probe('stalled'))
        self.assertEqual([waiting], probe_threads('stalled'))
        # The libvirtd goes away: the waiting call ends.
        listener.close()
        waiting.join(30)
        self.assertFalse(waiting.is_alive())
        self.assertIsNone(probe('stalled'))

    def test_a_host_name_that_is_no_host_name_is_not_asked(self):
        probe = hosts_probe(self.tmp)
        for name in ('../busy', 'busy?x=1', '', '-busy'):
            self.assertIsNone(probe(name))
        self.assertEqual([], probe_threads('../busy'))

    def test_a_template_must_name_the_host_once(self):
        for template in ('qemu:///system', 'qemu+tcp://%s/%s', '%d',
                         'qemu+tcp://%(host)s/system'):
            self.assertRaises(exception.InvalidConfiguration,
                              probe_mod.LibvirtProbe, template, 5,
                              binding.active_domain_count)

    def test_from_conf(self):
        count = binding.active_domain_count
        self.assertIsNone(probe_mod.from_conf(CONF, count))
        self.flags(libvirt_uri='qemu+tcp://%s/system', probe_timeout=3,
                   group='ha')
        probe = probe_mod.from_conf(CONF, count)
        self.assertEqual('qemu+tcp://c1/system', probe.uri('c1'))
        self.assertEqual(3, probe.timeout)
