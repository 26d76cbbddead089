"""Field conversions."""

import datetime

from nova.model import network as network_model
from nova.objects import fields
from nova.tests import base

UTC = datetime.timezone.utc


class DateTimeTestCase(base.TestCase):

    def test_naive_is_utc_and_offsets_are_converted(self):
        field = fields.DateTime()
        self.assertEqual(datetime.datetime(2024, 1, 1, 12, tzinfo=UTC),
                         field.coerce('t', datetime.datetime(2024, 1, 1,
                                                             12)))
        plus_one = datetime.timezone(datetime.timedelta(hours=1))
        value = field.coerce('t', datetime.datetime(2024, 1, 1, 13,
                                                    tzinfo=plus_one))
        self.assertEqual((UTC, 12), (value.tzinfo, value.hour))

    def test_primitive_round_trip(self):
        field = fields.DateTime()
        value = datetime.datetime(2024, 1, 1, 12, 0, 0, 7, tzinfo=UTC)
        primitive = field.to_primitive(value)
        self.assertIsInstance(primitive, str)
        self.assertEqual(value, field.from_primitive(primitive))

    def test_refuses_other_types(self):
        self.assertRaises(ValueError, fields.DateTime().coerce, 't', 5)

    def test_utcnow_is_aware_utc(self):
        self.assertEqual(UTC, fields.utcnow().tzinfo)


class NetworkInfoTestCase(base.TestCase):

    def test_accepts_vifs_and_their_dicts(self):
        net = network_model.Network(id='n', label='l', bridge='br0')
        vif = network_model.VIF(id='p', address='fa:16:3e:00:00:01',
                                network=net)
        field = fields.NetworkInfo()
        expected = network_model.NetworkInfo([vif])
        self.assertEqual(expected, field.coerce('n', [vif]))
        self.assertEqual(expected, field.coerce('n', [vif.to_dict()]))
        self.assertEqual(expected,
                         field.from_db(field.to_db(expected)))
        self.assertRaises(ValueError, field.coerce, 'n', 'eth0')


class ScalarFieldsTestCase(base.TestCase):

    def test_integer_refuses_bool(self):
        self.assertRaises(ValueError, fields.Integer().coerce, 'i', True)
        self.assertEqual(3, fields.Integer().coerce('i', '3'))

    def test_not_nullable(self):
        self.assertRaises(ValueError,
                          fields.Boolean(nullable=False).coerce, 'b', None)
        self.assertIsNone(fields.String().coerce('s', None))
