"""nova.testing.cluster.record: cluster.json round trips."""

import json
import os

from nova.testing.cluster import record as cluster_record
from nova.testing import procs
from nova.tests import base


def make_record(base_dir):
    me = procs.ProcessRecord.of(os.getpid())
    host = cluster_record.HostEntry(
        name='compute1', libvirt_uri='qemu+unix:///system?socket=/s',
        instances_path='/c/instances', storage_dir='/c/storage/compute1',
        storage_group='compute1', netns='nvcabc-compute1',
        config_file='/c/etc/compute1.conf', log_file='/c/logs/x.log',
        tree='/c/hosts/compute1', state='up',
        processes={'libvirtd': me},
        compute_overrides={'fault_injection': {'crash_point': 'x.y'}},
        override_file='/c/etc/compute1.override.conf',
        last_exit={'pid': 7, 'start_time': 8, 'returncode': -9,
                   'signal': 'SIGKILL', 'cause': 'crash point',
                   'crash_point': 'x.y'},
        mounts=[{'source': '/c/storage/compute2',
                 'target': '/c/instances', 'storage_group': 'compute2',
                 'mount_id': 99, 'covers': '/c/storage/compute1',
                 'covers_group': 'compute1'}])
    return cluster_record.ClusterRecord(
        base_dir=base_dir, owner=me, state='up', ports={'api': 1},
        processes={'nova-api': me}, hosts=[host])


class TestClusterRecord(base.TestCase):

    def test_save_and_load(self):
        record = make_record(self.tmp)
        path = os.path.join(self.tmp, 'cluster.json')
        record.save(path)
        loaded = cluster_record.ClusterRecord.load(path)
        self.assertEqual(record, loaded)
        self.assertIsInstance(loaded.owner, procs.ProcessRecord)
        host = loaded.host('compute1')
        self.assertEqual({'libvirtd': os.getpid()}, host.pids)
        self.assertTrue(host.processes['libvirtd'].alive())

    def test_a_record_written_before_the_crash_fields_still_loads(self):
        record = make_record(self.tmp)
        values = json.loads(record.to_json())
        for field in ('compute_overrides', 'override_file', 'last_exit',
                      'mounts'):
            del values['hosts'][0][field]
        loaded = cluster_record.ClusterRecord.from_json(json.dumps(values))
        host = loaded.host('compute1')
        self.assertEqual(({}, '', None, []), (
            host.compute_overrides, host.override_file, host.last_exit,
            host.mounts))

    def test_unknown_host_and_format(self):
        record = make_record(self.tmp)
        self.assertRaises(KeyError, record.host, 'compute9')
        text = record.to_json().replace('"format": 1', '"format": 99')
        self.assertRaises(ValueError,
                          cluster_record.ClusterRecord.from_json, text)
