"""Shared pieces of the tests against real libvirtd + QEMU hosts.

``RealHostTestCase`` skips, with the reason, where no real host can run
(not root, libvirtd or QEMU not installed) and otherwise gives each test
class its ``LibvirtHost`` (``cls.host``), started once: a host starts in
about 0.1 s, and tests of a class share it, each removing its domains.

``observe`` prints what is on a host (domains, QEMU processes, taps,
files of a directory) so a failing test is diagnosable from its log.
"""

import os
import shutil
import tempfile
import unittest

from nova.virt.libvirt.binding import libvirt
from oslo_concurrency import processutils

from nova.testing import hypervisor
from nova.testing import netdev
from nova.tests import base

_REASON = None
_CHECKED = False


def skip_reason():
    global _REASON, _CHECKED
    if not _CHECKED:
        _REASON = hypervisor.unavailable_reason()
        _CHECKED = True
    return _REASON


# One minimal TCG domain for the tests and benchmarks of real hosts.
domain_xml = hypervisor.domain_xml


def create_blank_disk(path, size='64M'):
    processutils.execute('qemu-img', 'create', '-f', 'qcow2', path, size)


def file_listing(directory):
    """{relative path: size} of every file under directory."""
    listing = {}
    if not os.path.isdir(directory):
        return listing
    for root, _dirs, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            listing[os.path.relpath(path, directory)] = os.path.getsize(path)
    return listing


def observe(label, host, directory=None, tap_prefix='tap'):
    """Print a snapshot of a host; return it for assertions in tests."""
    text = ['--- %s ---' % label, host.describe(),
            'taps: %s' % netdev.tap_devices(tap_prefix)]
    if directory is not None:
        text.append('files in %s: %s' % (directory, file_listing(directory)))
    print('\n'.join(text))
    return '\n'.join(text)


def host_domains(host):
    """{domain UUID: (state, has managed save)} of every domain on host."""
    conn = libvirt.open(host.uri)
    try:
        return {d.UUIDString(): (d.state()[0], bool(d.hasManagedSaveImage()))
                for d in conn.listAllDomains()}
    finally:
        conn.close()


def wipe_domains(host):
    """Power off and undefine every domain of a host (test cleanup)."""
    conn = libvirt.open(host.uri)
    try:
        for dom in conn.listAllDomains():
            if dom.isActive():
                dom.destroy()
            dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE)
    finally:
        conn.close()


class RealHostTestCase(base.TestCase):
    """One real host per test class, or a skip saying why there is none."""

    host_names = ('compute1',)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        reason = skip_reason()
        if reason:
            raise unittest.SkipTest('no real libvirtd host here: ' + reason)
        cls.class_tmp = tempfile.mkdtemp(prefix='nova-int-')
        cls.addClassCleanup(shutil.rmtree, cls.class_tmp, True)
        cls.hosts = {}
        for name in cls.host_names:
            host = hypervisor.LibvirtHost(name, cls.class_tmp)
            cls.addClassCleanup(host.stop)
            cls.hosts[name] = host.start()
        cls.host = cls.hosts[cls.host_names[0]]
