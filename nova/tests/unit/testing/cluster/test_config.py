"""nova.testing.cluster.config: specs, layout and the nova.conf files.

The rendered files are read back by nova's own option definitions
(``HostSettings.from_conf``), so a renamed or mistyped option fails here.
"""

import dataclasses
import json
import os
import re

from oslo_config import cfg
from oslo_log import log as oslo_log

from nova import conf as nova_conf
from nova.conf import host_settings
from nova.testing.cluster import config as cluster_config
from nova.tests import base

PORTS = cluster_config.Ports(postgres=5001, rabbitmq=5002, rabbitmq_epmd=5003,
                             rabbitmq_dist=5004, api=5005)
URI = 'qemu+unix:///system?socket=/c/hosts/compute2/run/libvirt/libvirt-sock'


def _read(text, tmp):
    """The options nova's services would read from ``text``."""
    path = os.path.join(tmp, 'nova.conf')
    with open(path, 'w') as f:
        f.write(text)
    conf = cfg.ConfigOpts()
    oslo_log.register_options(conf)
    for module in nova_conf._MODULES:
        module.register_opts(conf)
    # The controller runs nova-api, which registers [keystone_authtoken].
    nova_conf.register_api_opts(conf)
    # keystoneauth's options, registered by what reads them in the
    # services ([glance], [network], [masakari]).
    nova_conf.register_keystoneauth_opts(conf)
    conf(['--config-file', path], project='nova', default_config_files=[])
    return conf


class TestClusterSpec(base.TestCase):

    def test_hosts_and_storage_groups(self):
        spec = cluster_config.ClusterSpec(
            base_dir='/c', hosts=4, shared_groups=(('compute2', 'compute3'),))
        self.assertEqual(['compute1', 'compute2', 'compute3', 'compute4'],
                         spec.host_names())
        self.assertEqual('compute1', spec.storage_group('compute1'))
        self.assertEqual('shared1', spec.storage_group('compute2'))
        self.assertEqual('shared1', spec.storage_group('compute3'))
        self.assertEqual('compute4', spec.storage_group('compute4'))

    def test_bad_specs_are_refused_with_the_reason(self):
        cases = [
            (dict(hosts=0), 'at least one'),
            (dict(base_dir='relative'), 'absolute'),
            (dict(hosts=2, shared_groups=(('compute2', 'compute3'),)),
             'compute3, which is not one of'),
            (dict(hosts=3, shared_groups=(('compute1', 'compute2'),
                                          ('compute2', 'compute3'))),
             'compute2 is in two'),
            (dict(hosts=2, hosts_without_leases=('compute3',)),
             'hosts_without_leases names compute3'),
            (dict(masakari=True), 'Masakari needs the cluster\'s Keystone'),
        ]
        for overrides, message in cases:
            values = dict(base_dir='/c', hosts=2)
            values.update(overrides)
            with self.assertRaises(cluster_config.SpecError) as caught:
                cluster_config.ClusterSpec(**values)
            self.assertIn(message, str(caught.exception))

    def test_every_host_takes_disk_leases_unless_told(self):
        spec = cluster_config.ClusterSpec(
            base_dir='/c', hosts=2, hosts_without_leases=('compute2',))
        self.assertEqual('lockd', spec.lock_manager('compute1'))
        self.assertIsNone(spec.lock_manager('compute2'))

    def test_parse_group(self):
        self.assertEqual(('compute1', 'compute2'),
                         cluster_config.parse_group(' compute1,compute2, '))
        self.assertRaises(cluster_config.SpecError,
                          cluster_config.parse_group, ',')

    def test_storage_groups_by_name_or_by_host(self):
        spec = cluster_config.ClusterSpec(
            base_dir='/c', hosts=3, shared_groups=(('compute2', 'compute3'),))
        self.assertEqual(['compute1', 'shared1'], spec.storage_groups())
        self.assertEqual('shared1', spec.resolve_storage_group('shared1'))
        self.assertEqual('shared1', spec.resolve_storage_group('compute3'))
        self.assertEqual('compute1', spec.resolve_storage_group('compute1'))
        with self.assertRaises(cluster_config.SpecError) as caught:
            spec.resolve_storage_group('shared2')
        self.assertIn('compute1, shared1', str(caught.exception))

    def test_namespace_names_differ_between_clusters(self):
        one = cluster_config.ClusterSpec(base_dir='/a')
        two = cluster_config.ClusterSpec(base_dir='/b')
        self.assertNotEqual(one.netns('compute1'), two.netns('compute1'))
        self.assertTrue(one.netns('compute1').endswith('-compute1'))


class TestConfigFiles(base.TestCase):

    def setUp(self):
        super().setUp()
        self.spec = cluster_config.ClusterSpec(base_dir='/c', hosts=2,
                                               vif_plugging_timeout=7)
        self.layout = cluster_config.Layout('/c')

    def test_host_conf_gives_the_host_its_settings(self):
        text = cluster_config.host_conf(self.spec, self.layout, PORTS,
                                        'compute2', URI)
        conf = _read(text, self.tmp)
        settings = host_settings.HostSettings.from_conf(conf)
        self.assertEqual('compute2', settings.host)
        # Every host has the same instances_path (its storage is mounted
        # there inside its namespace), as in a real deployment.
        self.assertEqual('/c/instances', settings.instances_path)
        self.assertEqual(URI, settings.connection_uri)
        self.assertEqual('qemu', settings.virt_type)
        self.assertEqual('linuxbridge', settings.vif_driver)
        self.assertEqual(7, settings.vif_plugging_timeout)
        self.assertEqual('/c/images', settings.image_store_path)
        self.assertEqual(10, conf.service_down_time)
        self.assertEqual(2, conf.report_interval)
        self.assertEqual(600, conf.reap_orphans_interval)
        self.assertEqual(600, conf.sync_power_state_interval)
        self.assertEqual('http://127.0.0.1:5005/v2.1',
                         conf.network.events_api_url)
        self.assertIn('host=/c/postgres', conf.database.connection)
        self.assertIn('transport_url = rabbit://guest:guest@127.0.0.1:5002/',
                      text)

    def test_controller_conf(self):
        text = cluster_config.controller_conf(self.spec, self.layout, PORTS)
        conf = _read(text, self.tmp)
        self.assertEqual('controller', conf.host)
        self.assertEqual(5005, conf.api.listen_port)
        self.assertEqual('127.0.0.1', conf.api.listen)
        self.assertEqual(
            'postgresql+psycopg2://postgres@127.0.0.1:5001/nova',
            conf.database.connection)
        self.assertEqual(16.0, conf.conductor.cpu_allocation_ratio)
        # Dozens of test guests in one project: no instance quota.
        self.assertEqual((-1, -1, -1), (conf.quota.instances,
                                        conf.quota.cores, conf.quota.ram))

    def test_phase_marks_without_debug(self):
        spec = cluster_config.ClusterSpec(base_dir='/c', debug=False,
                                          phase_marks=True)
        for text in (cluster_config.controller_conf(spec, self.layout,
                                                    PORTS),
                     cluster_config.host_conf(spec, self.layout, PORTS,
                                              'compute1', URI)):
            conf = _read(text, self.tmp)
            self.assertFalse(conf.debug)
            self.assertIn('nova.phases=DEBUG', conf.default_log_levels)
            # oslo.log's own levels are kept (sqlalchemy stays quiet).
            self.assertLessEqual(set(oslo_log.get_default_log_levels()),
                                 set(conf.default_log_levels))
        # Off by default, and needless with debug on.
        for spec in (cluster_config.ClusterSpec(base_dir='/c', debug=False),
                     cluster_config.ClusterSpec(base_dir='/c',
                                                phase_marks=True)):
            conf = _read(cluster_config.controller_conf(
                spec, self.layout, PORTS), self.tmp)
            self.assertNotIn('nova.phases=DEBUG', conf.default_log_levels)

    def test_controller_conf_with_keystone(self):
        spec = cluster_config.ClusterSpec(base_dir='/c', keystone=True)
        ports = dataclasses.replace(PORTS, keystone=5006)
        text = cluster_config.controller_conf(spec, self.layout, ports)
        conf = _read(text, self.tmp)
        self.assertEqual('keystone', conf.api.auth_strategy)
        self.assertEqual(('http://127.0.0.1:5006/v3', 'password', 'nova'),
                         (conf.keystone_authtoken.www_authenticate_uri,
                          conf.keystone_authtoken.auth_type,
                          re.search(r'username = (\S+)', text).group(1)))
        # The hosts' agents get Keystone credentials, not a token.
        host = _read(cluster_config.host_conf(spec, self.layout, ports,
                                              'compute1', URI), self.tmp)
        self.assertEqual('password', host.network.auth_type)
        # Without: noauth2, no Keystone section.
        text = cluster_config.controller_conf(self.spec, self.layout, PORTS)
        self.assertNotIn('keystone_authtoken', text)
        self.assertEqual('noauth2', _read(text, self.tmp).api.auth_strategy)

    def test_controller_conf_with_hamonitor_fences_with_tools_cluster(self):
        spec = cluster_config.ClusterSpec(base_dir='/c', hamonitor=True)
        conf = _read(cluster_config.controller_conf(spec, self.layout,
                                                    PORTS), self.tmp)
        self.assertEqual(cluster_config.TOOLS_CLUSTER + ' --dir /c fence',
                         conf.ha.fence_command)
        self.assertTrue(os.access(cluster_config.TOOLS_CLUSTER, os.X_OK))
        self.assertEqual((2, 10, 5), (conf.ha.check_interval,
                                      conf.ha.lease_duration,
                                      conf.ha.lease_retry_interval))
        # Each host's libvirtd through its relay (cut by a partition).
        self.assertEqual('qemu+unix:///system?socket='
                         + self.layout.libvirt_relay('compute2'),
                         conf.ha.libvirt_uri % 'compute2')
        # Its hosts take back what a refused evacuation left in ERROR
        # within one service_down_time.
        host = _read(cluster_config.host_conf(spec, self.layout, PORTS,
                                              'compute1', URI), self.tmp)
        self.assertEqual(10, host.sync_power_state_interval)
        # Without: no fence agent, no [ha] section.
        text = cluster_config.controller_conf(self.spec, self.layout, PORTS)
        self.assertNotIn('[ha]', text)

    def test_controller_conf_with_hamonitor_without_a_fence_agent(self):
        spec = cluster_config.ClusterSpec(base_dir='/c', hamonitor=True,
                                          fence_agent=False)
        conf = _read(cluster_config.controller_conf(spec, self.layout,
                                                    PORTS), self.tmp)
        self.assertIsNone(conf.ha.fence_command)
        self.assertEqual(5, conf.ha.lease_retry_interval)

    def test_controller_conf_with_hamonitor_and_masakari_notifies_it(self):
        spec = cluster_config.ClusterSpec(base_dir='/c', hamonitor=True,
                                          keystone=True, masakari=True)
        ports = dataclasses.replace(PORTS, keystone=5006, masakari=5008)
        conf = _read(cluster_config.controller_conf(spec, self.layout,
                                                    ports), self.tmp)
        self.assertEqual(('masakari', 'password', 'instance-ha'), (
            conf.ha.recovery, conf.masakari.auth_type,
            conf.masakari.service_type))
        # Without Masakari the monitor evacuates itself.
        spec = cluster_config.ClusterSpec(base_dir='/c', hamonitor=True)
        conf = _read(cluster_config.controller_conf(spec, self.layout,
                                                    PORTS), self.tmp)
        self.assertEqual('builtin', conf.ha.recovery)

    def test_glance_is_where_the_controller_and_hosts_read_images(self):
        spec = cluster_config.ClusterSpec(base_dir='/c', keystone=True,
                                          glance=True)
        ports = dataclasses.replace(PORTS, keystone=5006, glance=5007)
        for text in (cluster_config.controller_conf(spec, self.layout,
                                                    ports),
                     cluster_config.host_conf(spec, self.layout, ports,
                                              'compute1', URI)):
            conf = _read(text, self.tmp)
            self.assertEqual('glance', conf.image.backend)
            self.assertEqual((['http://127.0.0.1:5007'], 'password'),
                             (conf.glance.api_servers,
                              conf.glance.auth_type))
        # Without: the local store, no [glance].
        text = cluster_config.host_conf(self.spec, self.layout, PORTS,
                                        'compute1', URI)
        self.assertNotIn('[glance]', text)
        self.assertEqual('store', _read(text, self.tmp).image.backend)

    def test_glance_needs_the_clusters_keystone(self):
        self.assertRaises(cluster_config.SpecError,
                          cluster_config.ClusterSpec, base_dir='/c',
                          glance=True)

    def test_clouds_yaml_names_both_users(self):
        ports = dataclasses.replace(PORTS, keystone=5006)
        clouds = json.loads(cluster_config.clouds_yaml(ports, 'pw'))[
            'clouds']
        self.assertEqual({'cluster-admin', 'cluster-demo'}, set(clouds))
        self.assertEqual(('admin', 'pw', 'admin',
                          'http://127.0.0.1:5006/v3'), tuple(
            clouds['cluster-admin']['auth'][k] for k in (
                'username', 'password', 'project_name', 'auth_url')))
        self.assertEqual('demo', clouds['cluster-demo']['auth'][
            'project_name'])

    def test_override_file_sets_the_crash_point_for_one_run(self):
        base_text = cluster_config.host_conf(self.spec, self.layout, PORTS,
                                             'compute2', URI)
        overrides = cluster_config.compute_overrides(
            'source.during_cleanup', {'DEFAULT': {'report_interval': 5}})
        self.assertEqual({'fault_injection':
                          {'crash_point': 'source.during_cleanup'},
                          'DEFAULT': {'report_interval': 5}}, overrides)
        paths = []
        for name, text in (('nova.conf', base_text), (
                'override.conf', cluster_config.override_conf(overrides))):
            paths.append(os.path.join(self.tmp, name))
            with open(paths[-1], 'w') as f:
                f.write(text)
        conf = cfg.ConfigOpts()
        for module in nova_conf._MODULES:
            module.register_opts(conf)
        # As nova-compute reads them: the override file last, so it wins.
        conf(['--config-file', paths[0], '--config-file', paths[1]],
             project='nova', default_config_files=[])
        self.assertEqual('source.during_cleanup',
                         conf.fault_injection.crash_point)
        self.assertEqual(5, conf.report_interval)
        self.assertEqual('compute2', conf.host)
        self.assertEqual('/c/etc/compute2.override.conf',
                         self.layout.override_conf('compute2'))

    def test_unknown_crash_point_is_refused(self):
        self.assertEqual({}, cluster_config.compute_overrides())
        with self.assertRaises(cluster_config.SpecError) as caught:
            cluster_config.compute_overrides('spawn.nowhere')
        self.assertIn('spawn.writing_root_disk', str(caught.exception))

    def test_stall_point_for_one_run(self):
        overrides = cluster_config.compute_overrides(
            options={'DEFAULT': {'debug': True}},
            stall_point='start.after_define')
        self.assertEqual({'fault_injection':
                          {'stall_point': 'start.after_define'},
                          'DEFAULT': {'debug': True}}, overrides)
        self.assertIn('[fault_injection]\nstall_point = start.after_define',
                      cluster_config.override_conf(overrides))
        with self.assertRaises(cluster_config.SpecError) as caught:
            cluster_config.compute_overrides(stall_point='spawn.nowhere')
        self.assertIn('unknown stall point', str(caught.exception))
