"""JSON schema validation and its messages."""

from nova.api.openstack import validation
from nova import exception
from nova.tests import base

SCHEMA = {
    'type': 'object',
    'properties': {
        'thing': {
            'type': 'object',
            'properties': {
                'name': validation.name,
                'flag': validation.boolean,
                'id': validation.uuid,
                'host': validation.hostname,
            },
            'required': ['name'],
            'additionalProperties': False,
        },
    },
    'required': ['thing'],
    'additionalProperties': False,
}
UUID = '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'


class ValidateTest(base.TestCase):

    def invalid(self, body):
        with self.assertRaises(exception.ValidationError) as caught:
            validation.validate(SCHEMA, body)
        self.assertEqual(400, caught.exception.code)
        return caught.exception.format_message()

    def test_valid_body(self):
        validation.validate(SCHEMA, {'thing': {
            'name': 'vm-1 (test)', 'flag': 'True', 'id': UUID,
            'host': 'compute-1.example'}})

    def test_required(self):
        self.assertEqual("'thing' is a required property", self.invalid({}))
        self.assertIn("'name' is a required property",
                      self.invalid({'thing': {}}))

    def test_additional_properties(self):
        message = self.invalid({'thing': {'name': 'a', 'extra': 1}})
        self.assertIn('Invalid input for field/attribute thing.', message)
        self.assertIn("('extra' was unexpected)", message)

    def test_wrong_type_names_field_and_value(self):
        message = self.invalid({'thing': {'name': 5}})
        self.assertEqual("Invalid input for field/attribute thing/name. "
                         "Value: 5. 5 is not of type 'string'", message)

    def test_not_an_object(self):
        self.assertIn('is not of type', self.invalid(['thing']))

    def test_boolean_strings(self):
        for value in (True, False, 'true', 'False', '1', 'off', 'YES'):
            validation.validate(SCHEMA, {'thing': {'name': 'a',
                                                   'flag': value}})
        self.assertIn("'maybe' is not a boolean",
                      self.invalid({'thing': {'name': 'a',
                                              'flag': 'maybe'}}))
        self.assertIn("is not of type 'boolean'",
                      self.invalid({'thing': {'name': 'a', 'flag': 2}}))

    def test_to_bool(self):
        self.assertTrue(validation.to_bool('True'))
        self.assertTrue(validation.to_bool(True))
        self.assertFalse(validation.to_bool('off'))
        self.assertFalse(validation.to_bool(False))

    def test_uuid_must_be_canonical(self):
        for value in ('not-a-uuid', UUID.replace('-', ''),
                      '{%s}' % UUID, 'urn:uuid:' + UUID, '../' + UUID):
            with self.subTest(value=value):
                self.assertIn('is not a valid uuid', self.invalid(
                    {'thing': {'name': 'a', 'id': value}}))

    def test_names_that_look_like_paths_or_break_lines(self):
        for value in ('../etc', 'a/b', 'a\\b', ' lead', 'trail ', 'a\nb',
                      'nul\x00', '', '.', '..', '%2e%2e', 'x%2Fy', 'a%5c'):
            with self.subTest(value=value):
                self.invalid({'thing': {'name': value}})

    def test_names_may_contain_dots_and_unicode(self):
        for value in ('web.1', 'café', '.hidden', '100%', 'v..2'):
            validation.validate(SCHEMA, {'thing': {'name': value}})

    def test_hostname(self):
        for value in ('../host', 'a b', '-x', 'h/1', ''):
            with self.subTest(value=value):
                self.invalid({'thing': {'name': 'a', 'host': value}})

    def test_long_values_are_shortened_in_messages(self):
        message = self.invalid({'thing': {'name': 'x' * 300}})
        self.assertLess(len(message), 400)
