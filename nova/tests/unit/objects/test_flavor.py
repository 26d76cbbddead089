"""Flavors in the database."""

from nova import context
from nova import exception
from nova import objects
from nova.objects import flavor_catalog
from nova.tests import base


class FlavorTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def test_create_and_get(self):
        created = flavor_catalog.create(self.ctx, 1, 'm1.tiny', 64, 1, 1,
                                        ephemeral_gb=2, swap=16)
        self.assertEqual('1', created.flavorid)
        self.assertEqual(created,
                         flavor_catalog.get_by_flavor_id(self.ctx, '1'))

    def test_get_all_smallest_first(self):
        flavor_catalog.create(self.ctx, 'b', 'big', 2048, 2, 10)
        flavor_catalog.create(self.ctx, 's', 'small', 64, 1, 1)
        self.assertEqual(['small', 'big'],
                         [f.name for f in flavor_catalog.get_all(self.ctx)])

    def test_duplicates_and_missing(self):
        flavor_catalog.create(self.ctx, '1', 'm1', 64, 1, 1)
        self.assertRaises(exception.FlavorExists, flavor_catalog.create,
                          self.ctx, '1', 'other', 64, 1, 1)
        self.assertRaises(exception.FlavorExists, flavor_catalog.create,
                          self.ctx, '2', 'm1', 64, 1, 1)
        self.assertRaises(exception.FlavorNotFound,
                          flavor_catalog.get_by_flavor_id, self.ctx, '3')

    def test_dict_round_trip_ignores_unknown_keys(self):
        flavor = objects.Flavor('1', 'm1', 64, 1, 1)
        values = dict(flavor.to_dict(), extra_specs={})
        self.assertEqual(flavor, objects.Flavor.from_dict(values))
