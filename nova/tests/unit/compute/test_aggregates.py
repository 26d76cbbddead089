"""The aggregate workflow keeps every compute host in one zone."""

from nova.compute import aggregates
from nova.compute import availability_zones
from nova import exception
from nova.objects import aggregate as aggregate_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf


class AggregatesTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        dbf.make_service(self.ctx, 'h1')
        dbf.make_service(self.ctx, 'h2')
        self.az1 = aggregates.create(self.ctx, 'rack1', zone='az1')
        self.az2 = aggregates.create(self.ctx, 'rack2', zone='az2')
        self.plain = aggregates.create(self.ctx, 'gpu')
        aggregates.add_host(self.ctx, self.az1.id, 'h1')

    def zone_of(self, host):
        return availability_zones.ZoneMap.read(self.ctx).of_host(host)

    def test_an_aggregates_zone_is_its_hosts_zone(self):
        self.assertEqual(('az1', 'nova'),
                         (self.zone_of('h1'), self.zone_of('h2')))
        aggregates.add_host(self.ctx, self.plain.id, 'h2')
        self.assertEqual('nova', self.zone_of('h2'))

    def test_a_host_never_joins_a_second_zone(self):
        with self.assertRaises(exception.AggregateHostZoneConflict) as e:
            aggregates.add_host(self.ctx, self.az2.id, 'h1')
        self.assertEqual(409, e.exception.code)
        self.assertEqual([], aggregates.get(self.ctx, self.az2.id).hosts)
        self.assertEqual('az1', self.zone_of('h1'))
        # An aggregate without a zone, or of the same zone, is fine.
        aggregates.add_host(self.ctx, self.plain.id, 'h1')
        same = aggregates.create(self.ctx, 'rack1b', zone='az1')
        aggregates.add_host(self.ctx, same.id, 'h1')

    def test_an_aggregate_never_takes_a_zone_its_hosts_contradict(self):
        aggregates.add_host(self.ctx, self.plain.id, 'h1')
        for change in (
                lambda: aggregates.set_metadata(
                    self.ctx, self.plain.id, {'availability_zone': 'az2'}),
                lambda: aggregates.update(self.ctx, self.plain.id,
                                          zone='az2')):
            with self.assertRaises(exception.InvalidAggregateAction) as e:
                change()
            self.assertEqual(400, e.exception.code)
        self.assertEqual({}, aggregates.get(self.ctx, self.plain.id).metadata)
        self.assertEqual('az1', self.zone_of('h1'))

    def test_the_internal_zone_is_refused(self):
        with self.assertRaises(exception.InvalidAggregateAction):
            aggregates.create(self.ctx, 'x', zone='internal')
        with self.assertRaises(exception.InvalidAggregateAction):
            aggregates.update(self.ctx, self.az2.id, zone='internal')
        self.assertEqual('az2', aggregates.get(
            self.ctx, self.az2.id).availability_zone)
        self.assertEqual(['rack1', 'rack2', 'gpu'], [
            a.name for a in aggregates.get_all(self.ctx)])

    def test_taking_the_zone_away_returns_hosts_to_the_default(self):
        updated = aggregates.update(self.ctx, self.az1.id, name='renamed',
                                    zone=None)
        self.assertEqual(('renamed', None),
                         (updated.name, updated.availability_zone))
        self.assertEqual('nova', self.zone_of('h1'))

    def test_an_unknown_host_is_not_added(self):
        with self.assertRaises(exception.ComputeHostNotFound):
            aggregates.add_host(self.ctx, self.az2.id, 'nowhere')
        self.assertEqual([], aggregate_obj.Aggregate.get_by_host(self.ctx,
                                                                 'nowhere'))
