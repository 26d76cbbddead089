"""Server status mapping, time formats, UUID checks, pagination."""

import datetime

from nova.api.openstack import common
from nova import exception
from nova.model import task_states as ts
from nova.model import vm_states as vs
from nova.tests import base


class StatusTest(base.TestCase):

    def test_status_from_state(self):
        cases = [
            (vs.ACTIVE, None, 'ACTIVE'),
            (vs.BUILDING, ts.SPAWNING, 'BUILD'),
            (vs.STOPPED, None, 'SHUTOFF'),
            (vs.STOPPED, ts.POWERING_ON, 'SHUTOFF'),
            (vs.SUSPENDED, None, 'SUSPENDED'),
            (vs.ERROR, None, 'ERROR'),
            (vs.ACTIVE, ts.REBOOTING, 'REBOOT'),
            (vs.ACTIVE, ts.REBOOT_STARTED, 'REBOOT'),
            (vs.ACTIVE, ts.REBOOTING_HARD, 'HARD_REBOOT'),
            (vs.STOPPED, ts.REBOOTING_HARD, 'HARD_REBOOT'),
            (vs.ACTIVE, ts.REBUILDING, 'REBUILD'),
            (vs.STOPPED, ts.REBUILDING, 'REBUILD'),
            (vs.ERROR, ts.REBUILDING, 'REBUILD'),
            (vs.ERROR, ts.REBUILD_SPAWNING, 'REBUILD'),
            (vs.ACTIVE, ts.POWERING_OFF, 'ACTIVE'),
            (vs.ACTIVE, ts.DELETING, 'ACTIVE'),
            (vs.DELETED, None, 'DELETED'),
            (vs.PAUSED, None, 'PAUSED'),
            (vs.SOFT_DELETED, None, 'SOFT_DELETED'),
            (vs.SHELVED_OFFLOADED, None, 'SHELVED_OFFLOADED'),
            ('nonsense', None, 'UNKNOWN'),
        ]
        for vm_state, task_state, expected in cases:
            with self.subTest(vm_state=vm_state, task_state=task_state):
                self.assertEqual(expected, common.status_from_state(
                    vm_state, task_state))

    def test_vm_states_for_status(self):
        self.assertEqual([vs.STOPPED], common.vm_states_for_status('shutoff'))
        self.assertIn(vs.ACTIVE, common.vm_states_for_status('HARD_REBOOT'))
        self.assertIsNone(common.vm_states_for_status('BOGUS'))


class FormatTest(base.TestCase):

    def test_times(self):
        value = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456,
                                  tzinfo=datetime.timezone.utc)
        self.assertEqual('2024-05-06T07:08:09Z', common.isotime(value))
        self.assertEqual('2024-05-06T07:08:09.123456', common.dbtime(value))
        self.assertIsNone(common.isotime(None))
        self.assertIsNone(common.dbtime(None))

    def test_times_of_other_zones_are_shown_in_utc(self):
        zone = datetime.timezone(datetime.timedelta(hours=2))
        value = datetime.datetime(2024, 5, 6, 9, 0, 0, tzinfo=zone)
        self.assertEqual('2024-05-06T07:00:00Z', common.isotime(value))


class UUIDTest(base.TestCase):

    def test_uuid_like_is_strict(self):
        good = '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'
        self.assertTrue(common.uuid_like(good))
        for bad in (good.replace('-', ''), '{%s}' % good, good + '/..',
                    '..', '', None, 5):
            with self.subTest(bad=bad):
                self.assertFalse(common.uuid_like(bad))

    def test_require_uuid_raises_the_given_not_found(self):
        not_found = exception.InstanceNotFound(instance_id='x')
        self.assertRaises(exception.InstanceNotFound, common.require_uuid,
                          '../x', not_found)


class PaginateTest(base.TestCase):

    def test_limit_and_marker(self):
        items = ['a', 'b', 'c', 'd']
        self.assertEqual(['a', 'b'], common.paginate(items, 2, None, str))
        self.assertEqual(['c', 'd'], common.paginate(items, 5, 'b', str))
        self.assertRaises(exception.ValidationError, common.paginate,
                          items, 1, 'zz', str)
