"""host-evacuate of a failed host carrying ten instances to two targets.

Ten guests run on compute1; compute1 dies; ``nova host-evacuate compute1``
lets the conductor choose a target for each: every instance ends ACTIVE
on compute2 or compute3 (both used), its guest running there with its tap
in that host's bridge. When compute1 comes back, its ``init_host``
removes its ten copies (storage is not shared) and completes the ten
migrations.
"""

from nova.tests.integration.e2e import base

SOURCE = 'compute1'
TARGETS = ('compute2', 'compute3')
COUNT = 10


class TestHostEvacuate(base.ClusterTestCase):

    cluster_hosts = 3

    def _observe_all(self, label, uuids):
        hosts = (SOURCE,) + TARGETS
        views = {}
        for uuid in uuids:
            views[uuid] = {h: self.view(h, uuid) for h in hosts}
        print('--- %s ---' % label)
        for host in hosts:
            sample = views[uuids[0]][host]
            dirs = sum(1 for u in uuids
                       if views[u][host].instance_files is not None)
            if sample.domains is None:
                domains = '? (libvirtd down)'
            else:
                states = [sample.domains.get('instance-' + u)
                          for u in uuids]
                domains = {state: states.count(state)
                           for state in set(states) if state}
            print('  %s: domains of these servers %s; taps %s; their '
                  'instance dirs: %d' % (host, domains, sample.taps, dirs))
        return views

    def test_host_evacuate_ten_instances_to_two_targets(self):
        names = ['evac%02d' % i for i in range(COUNT)]
        uuids = self.boot_on(SOURCE, names)
        self._observe_all('booted on %s' % SOURCE, uuids)
        for uuid in uuids:
            self.assert_running_on(SOURCE, uuid)

        self.fail_host(SOURCE)
        self.nova('host-evacuate', SOURCE)
        placed = {}
        for uuid in uuids:
            server = self.wait_for_server(uuid, status='ACTIVE', timeout=180)
            placed[uuid] = server['OS-EXT-SRV-ATTR:host']
        print('placement: %s' % placed)
        self.assertLessEqual(set(placed.values()), set(TARGETS))
        self.assertEqual(set(TARGETS), set(placed.values()),
                         'both targets should be used')
        for uuid in uuids:
            self.wait_for_migration(uuid, 'done')
            self.assert_running_on(placed[uuid], uuid)
        self._observe_all('after host-evacuate', uuids)

        self.cluster.revive(SOURCE)
        for uuid in uuids:
            self.wait_for_migration(uuid, 'completed')
        self._observe_all('after %s came back' % SOURCE, uuids)
        for uuid in uuids:
            self.assert_nothing_of(SOURCE, uuid)
            self.assert_running_on(placed[uuid], uuid)
        self.nova('delete', *uuids)
