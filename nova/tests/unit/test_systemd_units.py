"""The systemd units under etc/systemd/ start what setup.cfg installs, in
the order that keeps a compute host off a bare mount point."""

import configparser
import os
import shutil
import subprocess

from nova.conf import base as base_conf
from nova.conf import compute as compute_conf
from nova.tests import base

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
UNITS = os.path.join(TOP, 'etc', 'systemd')


def unit(name):
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.optionxform = str
    parser.read(os.path.join(UNITS, name))
    return parser


def console_scripts():
    setup = configparser.ConfigParser(interpolation=None)
    setup.read(os.path.join(TOP, 'setup.cfg'))
    return {line.split('=')[0].strip() for line in
            setup['options.entry_points']['console_scripts'].splitlines()
            if line.strip()}


class TestUnits(base.TestCase):

    def test_each_unit_runs_an_installed_console_script(self):
        scripts = console_scripts()
        for name in ('nova-compute', 'nova-conductor', 'nova-api',
                     'nova-hamonitor'):
            service = unit(name + '.service')['Service']
            binary = os.path.basename(service['ExecStart'].split()[0])
            self.assertEqual(name, binary)
            self.assertIn(binary, scripts)
            self.assertIn('--config-file /etc/nova/nova.conf',
                          service['ExecStart'])

    def test_compute_waits_for_the_network_and_its_instances_mount(self):
        compute = unit('nova-compute.service')['Unit']
        after = compute['After'].split()
        for target in ('network-online.target', 'remote-fs.target',
                       'libvirtd.service', 'virtlogd.service'):
            self.assertIn(target, after)
        self.assertEqual(os.path.join('/var/lib/nova', 'instances'),
                         compute['RequiresMountsFor'])
        # The path it names is instances_path's default.
        [opt] = [o for o in compute_conf.compute_opts
                 if o.name == 'instances_path']
        [state] = [o for o in base_conf.base_opts if o.name == 'state_path']
        self.assertEqual(compute['RequiresMountsFor'], opt.default.replace(
            '$state_path', state.default))

    def test_stopping_compute_never_kills_the_guests(self):
        service = unit('nova-compute.service')['Service']
        self.assertEqual('process', service['KillMode'])

    def test_systemd_accepts_them(self):
        analyze = shutil.which('systemd-analyze')
        if analyze is None:
            self.skipTest('systemd-analyze is not installed')
        for name in ('nova-compute', 'nova-conductor', 'nova-api',
                     'nova-hamonitor'):
            result = subprocess.run(
                [analyze, 'verify', os.path.join(UNITS, name + '.service')],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            # The binaries are installed by the package, not here.
            complaints = [line for line in result.stdout.splitlines()
                          if name in line and 'not executable' not in line]
            self.assertEqual([], complaints, result.stdout)
