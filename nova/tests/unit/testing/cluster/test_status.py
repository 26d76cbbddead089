"""nova.testing.cluster.status on a cluster whose pieces are all gone."""

import os
import subprocess

from nova.testing.cluster import record as cluster_record
from nova.testing.cluster import services as cluster_services
from nova.testing.cluster import status as cluster_status
from nova.testing import procs
from nova.tests import base


class TestStatus(base.TestCase):

    def test_no_cluster(self):
        self.assertRaises(cluster_services.ClusterError,
                          cluster_status.gather, self.tmp)

    def test_dead_pieces_show_as_not_running(self):
        # Recorded while it surely runs, then ended: a record of a process
        # that is gone (recording 'true' raced with its exit).
        child = subprocess.Popen(['sleep', '60'])
        gone = procs.ProcessRecord.of(child.pid)
        child.kill()
        child.wait()
        host = cluster_record.HostEntry(
            name='compute1', libvirt_uri='qemu+unix:///system?socket='
            + os.path.join(self.tmp, 'none'), instances_path='/x',
            storage_dir='/x', storage_group='compute1',
            netns='nvc-test-does-not-exist', config_file='', log_file='',
            tree=os.path.join(self.tmp, 'tree'), processes={'holder': gone},
            compute_overrides={'fault_injection':
                               {'crash_point': 'spawn.after_mkdir'}},
            last_exit={'pid': 12, 'start_time': 1, 'returncode': -9,
                       'signal': 'SIGKILL', 'cause': 'crash point',
                       'crash_point': 'spawn.after_mkdir'})
        record = cluster_record.ClusterRecord(
            base_dir=self.tmp, owner=gone, state='up',
            api_url='http://127.0.0.1:1/v2.1', api_token='a:a',
            ports={'postgres': 1, 'rabbitmq': 1, 'rabbitmq_epmd': 1,
                   'rabbitmq_dist': 1, 'api': 1},
            processes={'nova-api': gone}, bridge='br-nova', hosts=[host])
        record.save(os.path.join(self.tmp, 'cluster.json'))
        lines = {line.piece: line for line in cluster_status.gather(self.tmp)}
        self.assertFalse(lines['owner'].running)
        self.assertFalse(lines['nova-api'].running)
        self.assertFalse(lines['nova-api'].answers)
        self.assertFalse(lines['compute1/holder'].running)
        self.assertIn('not recorded', lines['compute1/libvirtd'].detail)
        self.assertFalse(lines['compute1/nova-compute'].running)
        self.assertIn('crash point spawn.after_mkdir; last exit: pid 12 '
                      'SIGKILL (crash point spawn.after_mkdir)',
                      lines['compute1/nova-compute'].detail)
        self.assertFalse(lines['compute1/netns'].running)
        table = cluster_status.format_table(list(lines.values()))
        self.assertIn('compute1/holder', table)
        self.assertIn('NO', table)
