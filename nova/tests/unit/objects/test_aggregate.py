"""Aggregates in the database: names, hosts and metadata."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova import objects
from nova.objects import aggregate as aggregate_obj
from nova.tests import base
from nova.tests.fixtures import database as dbf


def _rows(model, *columns):
    with db_api.session(read_only=True) as session:
        return sorted(tuple(getattr(r, c) for c in columns)
                      for r in session.scalars(sa.select(model)))


class AggregateTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = dbf.admin_context()
        self.agg = objects.Aggregate.create(
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
            objects.Aggregate.create(self.ctx, 'rack1', {'k': 'v'})
        self.assertEqual([('rack1',)], _rows(models.Aggregate, 'name'))
        self.assertEqual([('availability_zone',)],
                         _rows(models.AggregateMetadata, 'key'))

    def test_hosts_are_added_once_and_removed(self):
        objects.Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        with self.assertRaises(exception.AggregateHostExists):
            objects.Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        self.assertEqual(['h1'], objects.Aggregate.get_by_id(
            self.ctx, self.agg.id).hosts)
        objects.Aggregate.remove_host(self.ctx, self.agg.id, 'h1')
        with self.assertRaises(exception.AggregateHostNotFound):
            objects.Aggregate.remove_host(self.ctx, self.agg.id, 'h1')
        self.assertEqual([], _rows(models.AggregateHost, 'host'))

    def test_metadata_is_set_replaced_and_deleted(self):
        objects.Aggregate.update_metadata(
            self.ctx, self.agg.id, {'ssd': 'true', 'availability_zone': None})
        objects.Aggregate.update_metadata(self.ctx, self.agg.id,
                                          {'ssd': 'false'})
        shown = objects.Aggregate.get_by_id(self.ctx, self.agg.id)
        self.assertEqual({'ssd': 'false'}, shown.metadata)
        self.assertIsNone(shown.availability_zone)
        self.assertIsNotNone(shown.updated_at)

    def test_an_aggregate_with_hosts_is_kept(self):
        objects.Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        with self.assertRaises(exception.InvalidAggregateAction):
            objects.Aggregate.destroy(self.ctx, self.agg.id)
        self.assertEqual([('rack1',)], _rows(models.Aggregate, 'name'))
        objects.Aggregate.remove_host(self.ctx, self.agg.id, 'h1')
        objects.Aggregate.destroy(self.ctx, self.agg.id)
        self.assertEqual([], _rows(models.Aggregate, 'name'))
        self.assertEqual([], _rows(models.AggregateMetadata, 'key'))
        # The name is free again at once.
        objects.Aggregate.create(self.ctx, 'rack1')

    def test_an_unknown_aggregate_is_not_found_and_nothing_is_written(self):
        for call in (lambda: objects.Aggregate.get_by_id(self.ctx, 99),
                     lambda: objects.Aggregate.add_host(self.ctx, 99, 'h'),
                     lambda: objects.Aggregate.update_metadata(
                         self.ctx, 99, {'k': 'v'}),
                     lambda: objects.Aggregate.rename(self.ctx, 99, 'x'),
                     lambda: objects.Aggregate.destroy(self.ctx, 99)):
            self.assertRaises(exception.AggregateNotFound, call)
        self.assertEqual([], _rows(models.AggregateHost, 'host'))
        self.assertEqual([('availability_zone',)],
                         _rows(models.AggregateMetadata, 'key'))

    def test_host_zones_and_aggregates_by_host(self):
        other = objects.Aggregate.create(self.ctx, 'gpu')
        objects.Aggregate.add_host(self.ctx, self.agg.id, 'h1')
        objects.Aggregate.add_host(self.ctx, other.id, 'h1')
        objects.Aggregate.add_host(self.ctx, other.id, 'h2')
        self.assertEqual({'h1': ['az1']},
                         aggregate_obj.host_zones(self.ctx))
        self.assertEqual(['rack1', 'gpu'], [
            a.name for a in objects.Aggregate.get_by_host(self.ctx, 'h1')])
