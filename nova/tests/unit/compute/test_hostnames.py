"""The hostname derived from a server's display name."""

from nova.compute import hostnames
from nova.tests import base

UUID = '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'


class FromDisplayNameTest(base.TestCase):

    def test_derivations(self):
        for name, expected in (
                ('web-1', 'web-1'),
                ('Web Server_1', 'web-server-1'),
                ('db.example.org', 'db-example-org'),
                ('--edge--', 'edge'),
                ('a!b@c#d', 'abcd'),
                ('Café', 'café'),
                ('x' * 70, 'x' * 63),
                ('x' * 62 + ' y', 'x' * 62)):
            with self.subTest(name=name):
                self.assertEqual(expected,
                                 hostnames.from_display_name(name, UUID))

    def test_nothing_left_falls_back_to_the_uuid(self):
        for name in ('日本', '...', '', None):
            with self.subTest(name=name):
                self.assertEqual('Server-' + UUID,
                                 hostnames.from_display_name(name, UUID))
