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


class _Upper(fields.String):
    # A field that checks more than the type of its value.
    def _coerce(self, name, value):
        value = super()._coerce(name, value)
        if value != value.upper():
            raise ValueError('field %s wants upper case' % name)
        return value


class _Doubled(fields.Integer):
    # A field whose column holds another form of its value.
    def from_db(self, value):
        return value * 2


class KeptFromDbTestCase(base.TestCase):
    """``kept_from_db``: which column values a read may take as they are,
    skipping ``from_db`` and ``coerce``."""

    def test_plain_scalars_keep_their_own_type_only(self):
        self.assertEqual((str,), fields.kept_from_db(fields.String()))
        # Not bool, a subclass of int: Integer refuses it.
        self.assertEqual((int,), fields.kept_from_db(fields.Integer()))
        self.assertEqual((bool,), fields.kept_from_db(fields.Boolean()))

    def test_fields_that_convert_keep_nothing(self):
        for field in (fields.DateTime(), fields.Dict(), fields.List(),
                      fields.NetworkInfo(), fields.Field()):
            self.assertEqual((), fields.kept_from_db(field), field)

    def test_a_subclass_that_checks_or_converts_more_keeps_nothing(self):
        self.assertEqual((), fields.kept_from_db(_Upper()))
        self.assertEqual((), fields.kept_from_db(_Doubled()))

    def test_what_is_kept_is_what_the_field_returns_unchanged(self):
        for field, value in ((fields.String(), 'a'), (fields.Integer(), 7),
                             (fields.Boolean(), False)):
            self.assertIn(type(value), fields.kept_from_db(field))
            self.assertIs(value, field.coerce('f', field.from_db(value)))
