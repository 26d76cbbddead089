"""Aggregates in the database: names, hosts and metadata."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import control_models
from nova import exception
from nova.objects import aggregate as aggregate_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf

Aggregate = aggregate_obj.Aggregate


def _rows(model, *columns):
    with db_api.session(read_only=True) as session:
        return sorted(tuple(getattr(r, c) for c in columns)
                      for r in session.scalars(sa.select(model)))


class AggregateTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.agg = Aggregate.create(
            self.ctx, 'rack1', {'availability_zone': 'az1'})

    def test_create_stores_the_name_and_metadata(self):
        self.assertEqual(('rack1', 'az1', [], {'availability_zone': 'az1'}),
                         (self.agg.name, self.agg.availability_zone,
                          self.agg.hosts, self.agg.metadata))
        self.assertIsNotNone(self.agg.created_at)
        self.assertIsNone(self.agg.updated_at)
        self.assertEqual(36, len(self.agg.uuid))

    def test_a_taken_name_is_refused_and_nothing_is_written(self):
        with self.assertRaises(exception.AggregateNameExists):
            Aggregate.create(self.ctx, 'rack1', {'k': 'v'})
        self.assertEqual([('rack1',)], _rows(control_models.Aggregate, 'name'))
        self.assertEqual([('availability_zone',)],
                         _rows(control_models.AggregateMetadata, 'key'))

    def test_hosts_are_added_once_and_removed(self):
        Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        with self.assertRaises(exception.AggregateHostExists):
            Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        self.assertEqual(['h1'], Aggregate.get_by_id(
            self.ctx, self.agg.id).hosts)
        Aggregate.remove_host(self.ctx, self.agg.id, 'h1')
        with self.assertRaises(exception.AggregateHostNotFound):
            Aggregate.remove_host(self.ctx, self.agg.id, 'h1')
        self.assertEqual([], _rows(control_models.AggregateHost, 'host'))

    def test_metadata_is_set_replaced_and_deleted(self):
        Aggregate.update_metadata(
            self.ctx, self.agg.id, {'ssd': 'true', 'availability_zone': None})
        Aggregate.update_metadata(self.ctx, self.agg.id,
                                  {'ssd': 'false'})
        shown = Aggregate.get_by_id(self.ctx, self.agg.id)
        self.assertEqual({'ssd': 'false'}, shown.metadata)
        self.assertIsNone(shown.availability_zone)
        self.assertIsNotNone(shown.updated_at)

    def test_an_aggregate_with_hosts_is_kept(self):
        Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        with self.assertRaises(exception.InvalidAggregateAction):
            Aggregate.destroy(self.ctx, self.agg.id)
        self.assertEqual([('rack1',)], _rows(control_models.Aggregate, 'name'))
        Aggregate.remove_host(self.ctx, self.agg.id, 'h1')
        Aggregate.destroy(self.ctx, self.agg.id)
        self.assertEqual([], _rows(control_models.Aggregate, 'name'))
        self.assertEqual([], _rows(control_models.AggregateMetadata, 'key'))
        # The name is free again at once.
        Aggregate.create(self.ctx, 'rack1')

    def test_an_unknown_aggregate_is_not_found_and_nothing_is_written(self):
        for call in (lambda: Aggregate.get_by_id(self.ctx, 99),
                     lambda: Aggregate.add_host(self.ctx, 99, 'h'),
                     lambda: Aggregate.update_metadata(
                         self.ctx, 99, {'k': 'v'}),
                     lambda: Aggregate.rename(self.ctx, 99, 'x'),
                     lambda: Aggregate.destroy(self.ctx, 99)):
            self.assertRaises(exception.AggregateNotFound, call)
        self.assertEqual([], _rows(control_models.AggregateHost, 'host'))
        self.assertEqual([('availability_zone',)],
                         _rows(control_models.AggregateMetadata, 'key'))

    def test_host_zones_and_aggregates_by_host(self):
        other = Aggregate.create(self.ctx, 'gpu')
        Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        Aggregate.add_host(self.ctx, other.id, 'h1')
        Aggregate.add_host(self.ctx, other.id, 'h2')
        self.assertEqual({'h1': ['az1']},
                         aggregate_obj.host_zones(self.ctx))
        self.assertEqual(['rack1', 'gpu'], [
            a.name for a in Aggregate.get_by_host(self.ctx, 'h1')])
