"""lock/unlock actions, what a lock refuses, and the locked filter."""

from nova.compute import instance_lock
from nova.model import task_states
from nova.tests.unit.api.openstack import fakes


class LockTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.instance = self.make_instance()

    def act(self, body, token=fakes.USER_TOKEN, version=None):
        return self.action(self.instance, body, token=token,
                           version=version)

    def test_owner_lock_refuses_owner_actions_until_unlocked(self):
        response = self.act({'lock': None})
        self.assertEqual(202, response.status_int, response.text)
        row = self.reload(self.instance)
        self.assertEqual((instance_lock.OWNER, None),
                         (row.locked_by, row.locked_reason))
        for body in ({'os-stop': None}, {'reboot': {'type': 'HARD'}},
                     {'rebuild': {'imageRef': fakes.IMAGE.id}}):
            with self.subTest(body=body):
                self.assertFault(self.act(body), 409, 'conflictingRequest',
                                 'locked')
        self.assertFault(self.request(
            'DELETE', '/v2.1/servers/%s' % self.instance.uuid,
            token=fakes.USER_TOKEN), 409, 'conflictingRequest')
        row = self.reload(self.instance)
        self.assertEqual((None, False), (row.task_state, row.deleted))
        self.assertEqual([], self.compute_rpc.casts)
        self.assertEqual(202, self.act({'unlock': None}).status_int)
        self.assertIsNone(self.reload(self.instance).locked_by)
        self.assertEqual(202, self.act({'os-stop': None}).status_int)
        self.assertEqual(task_states.POWERING_OFF,
                         self.reload(self.instance).task_state)

    def test_admin_acts_on_a_locked_server(self):
        self.act({'lock': None})
        response = self.act({'os-stop': None}, token=fakes.ADMIN_TOKEN)
        self.assertEqual(202, response.status_int, response.text)

    def test_admin_lock_needs_override_to_unlock(self):
        # The admin token's project is not the server's: an admin lock.
        self.act({'lock': {'locked_reason': 'maintenance'}},
                 token=fakes.ADMIN_TOKEN, version='2.73')
        row = self.reload(self.instance)
        self.assertEqual((instance_lock.ADMIN, 'maintenance'),
                         (row.locked_by, row.locked_reason))
        self.assertFault(self.act({'unlock': None}), 403, 'forbidden')
        self.assertEqual(instance_lock.ADMIN,
                         self.reload(self.instance).locked_by)
        self.assertEqual(202, self.act({'unlock': None},
                                       token=fakes.ADMIN_TOKEN).status_int)
        self.assertIsNone(self.reload(self.instance).locked_by)

    def test_reason_only_from_273(self):
        self.assertFault(self.act({'lock': {'locked_reason': 'r'}},
                                  version='2.72'), 400, 'badRequest')
        self.assertFault(self.act({'lock': {'locked_reason': ''}},
                                  version='2.73'), 400, 'badRequest')
        self.assertIsNone(self.reload(self.instance).locked_by)

    def test_locked_fields_and_filter(self):
        other = self.make_instance(name='free')
        self.act({'lock': {'locked_reason': 'why'}}, version='2.73')
        shown = self.request('GET', '/v2.1/servers/%s' % self.instance.uuid,
                             token=fakes.USER_TOKEN,
                             version='2.73').json['server']
        self.assertEqual((True, 'why'),
                         (shown['locked'], shown['locked_reason']))

        def ids(query):
            response = self.request('GET', '/v2.1/servers?' + query,
                                    token=fakes.USER_TOKEN, version='2.73')
            return {s['id'] for s in response.json['servers']}
        self.assertEqual({self.instance.uuid}, ids('locked=true'))
        self.assertEqual({other.uuid}, ids('locked=false'))
