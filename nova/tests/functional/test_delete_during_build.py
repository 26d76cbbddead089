"""A DELETE at every step of a build: 204, and the server goes away.

``nova-all``'s embedded default in this process (``test_services``:
two compute hosts on libvirt's test driver, their network agents,
``inproc://`` RPC, SQLite) behind the REST API, served over HTTP. Each
test holds the build still at one crash point (``crashpoint.observe``:
the build's thread waits there until the test lets it go, no sleep),
sends ``DELETE /servers/{id}``, lets the build go on, waits for the
build and the delete to end, and reads back what is left: libvirt's
domains and VIFs, the files under instances_path, the journals, the
ports, the host's usage counters and the rows (instance, attempt,
actions, faults).
"""

import http.client
import json
import os
import threading

from nova.api import wsgi as api_wsgi
from nova.compute import build
from nova.compute import delete
from nova import crashpoint
from nova.image import store as image_store
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import attempt as attempt_obj
from nova.objects import host_usage
from nova.tests import base
from nova.tests.functional import evacuate_harness
from nova.tests.functional import test_services
from nova.virt import instancedir

ADMIN = 'admin:admin'

# The build's task state at each point where a test holds it.
SPAWNING_POINTS = (
    'spawn.after_mkdir', 'spawn.writing_root_disk', 'spawn.after_disk_info',
    'start.after_plug_vifs', 'start.after_define',
    'start.waiting_for_vif_events', 'start.after_resume',
    'build.before_active',
)


def _test_per_point(points):
    """One test method per crash point: ``test_<point with _>``."""
    def decorate(cls):
        for point in points:
            def test(self, point=point):
                self.check_delete_held_at(point)
            test.__name__ = 'test_%s' % point.replace('.', '_')
            setattr(cls, test.__name__, test)
        return cls
    return decorate


class DeleteDuringBuildTestCase(test_services.AllInOneTestCase):

    def setUp(self):
        super().setUp()
        images = image_store.ImageStore(self.settings[0].image_store_path)
        self.server = api_wsgi.serve(
            api_wsgi.make_app(self.deployment.compute_api,
                              image_store=images), '127.0.0.1', 0)
        self.addCleanup(self.server.stop)

    def http(self, method, path, body=None):
        conn = http.client.HTTPConnection('127.0.0.1', self.server.port,
                                          timeout=30)
        conn.request(method, '/v2.1' + path,
                     body=None if body is None else json.dumps(body),
                     headers={'X-Auth-Token': ADMIN,
                              'Content-Type': 'application/json'})
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        return response.status, json.loads(raw) if raw else None

    def stall_at(self, point):
        stall = evacuate_harness.Stall(point)
        self.addCleanup(crashpoint.observe(stall))
        self.addCleanup(stall.release)
        return stall

    def create_server(self):
        status, body = self.http('POST', '/servers', {'server': {
            'name': 'vm', 'imageRef': self.image.id, 'flavorRef': '1'}})
        self.assertEqual(202, status, body)
        return body['server']['id']

    def wait_for(self, predicate, what):
        if not base.wait_until(predicate, timeout=60):
            self.fail('gave up waiting for %s' % what)

    def row(self, uuid):
        return objects.Instance.get_by_uuid(self.ctxt, uuid,
                                            read_deleted='yes')

    def event_of(self, uuid, action, event):
        """The newest ``event`` of the instance's ``action``, or None."""
        for found in objects.InstanceAction.get_by_instance_uuid(
                self.ctxt, uuid):
            if found.action == action:
                events = [e for e in found.events if e.event == event]
                return events[-1] if events else None
        return None

    def ended(self, uuid, action, operation):
        event = self.event_of(uuid, action, operation.event)
        return event is not None and event.finish_time is not None

    def delete_and_check(self, uuid, stall):
        """DELETE while the build is held at ``stall``; then let it go on
        and check that the server and everything of it went away."""
        host = self.row(uuid).host
        status, body = self.http('DELETE', '/servers/%s' % uuid)
        self.assertEqual(204, status, body)
        stall.release()
        self.wait_for(lambda: self.ended(uuid, 'delete', delete.DELETE),
                      'the delete to end')
        self.wait_for(lambda: self.ended(uuid, 'create', build.BUILD),
                      'the build to end')
        self.assertServerGone(uuid, host)

    # -- assertions --------------------------------------------------------

    def assertServerGone(self, uuid, host):
        row = self.row(uuid)
        self.assertEqual((True, vm_states.DELETED, None),
                         (row.deleted, row.vm_state, row.task_state))
        self.assertIsNone(row.attempt_id)
        self.assertEqual([], objects.InstanceFault.get_by_instance_uuid(
            self.ctxt, uuid))
        terminated = self.event_of(uuid, 'delete', delete.DELETE.event)
        self.assertIsNotNone(terminated, 'no delete event')
        self.assertEqual('Success', terminated.result)
        # The build's attempt ended (undone once, or landed before the
        # delete), never left claimed.
        for attempt in objects.InstanceAttempt.get_by_instance(self.ctxt,
                                                               uuid):
            self.assertNotEqual(attempt_obj.CLAIMED, attempt.status)
        self.assertEqual([], objects.Port.get_by_instance_uuid(self.ctxt,
                                                               uuid))
        self.assertEqual((0, 0, 0), host_usage.totals(host))
        for name, compute in self.deployment.computes.items():
            driver = compute.manager.driver
            self.assertNotIn(uuid, driver.list_instance_uuids(), name)
            self.assertEqual(set(), driver.plugged_vif_ids(uuid), name)
        instances_path = dict(
            (s.host, s.instances_path) for s in self.settings)[host]
        self.assertFalse(os.path.lexists(
            os.path.join(instances_path, uuid)))
        for layout in (instancedir.JOURNAL_DIR, '_quarantine'):
            path = os.path.join(instances_path, layout)
            left = os.listdir(path) if os.path.isdir(path) else []
            self.assertEqual([], [n for n in left if n.startswith(uuid)],
                             layout)


@_test_per_point(SPAWNING_POINTS + ('build.after_active',))
class TestDeleteDuringBuild(DeleteDuringBuildTestCase):

    def check_delete_held_at(self, point):
        stall = self.stall_at(point)
        uuid = self.create_server()
        self.wait_for(stall.reached.is_set, 'the build at %s' % point)
        expected = (task_states.SPAWNING if point in SPAWNING_POINTS
                    else None)
        self.assertEqual(expected, self.row(uuid).task_state)
        self.delete_and_check(uuid, stall)

    def test_the_build_undoes_its_attempt_before_the_delete_runs(self):
        # The report's 500s: the spawn returned, the delete was accepted
        # (task deleting, token cleared), the build's ACTIVE save lost and
        # the build undid its attempt after it had let go of the
        # instance's lock, while the delete that waited for the lock
        # removed the same directory (ENOENT: the delete failed, the
        # server ERROR). The build must undo under the lock. Its undo
        # unplugs the VIFs first, which calls the driver's VIF listeners
        # in the build's thread: there the lock must not be free.
        stall = self.stall_at('build.before_active')
        uuid = self.create_server()
        self.wait_for(stall.reached.is_set, 'the build spawned')
        row = self.row(uuid)
        compute = self.deployment.computes[row.host].manager
        lock_free_during_undo = []
        undoing = threading.Event()

        def vifs_changed(instance_uuid):
            if undoing.is_set():
                with compute.instance_locks.lock_if_free(uuid) as free:
                    lock_free_during_undo.append(free)

        compute.driver.add_vif_listener(vifs_changed)
        # What the API's delete writes before it casts.
        row.task_state = task_states.DELETING
        row.attempt_id = None
        row.save()
        undoing.set()
        stall.release()
        self.wait_for(lambda: lock_free_during_undo,
                      'the build to undo its attempt')
        self.wait_for(lambda: self.ended(uuid, 'create', build.BUILD),
                      'the build to end')
        undoing.clear()
        self.assertNotIn(True, lock_free_during_undo)

        status, body = self.http('DELETE', '/servers/%s' % uuid)
        self.assertEqual(204, status, body)
        self.wait_for(lambda: self.ended(uuid, 'delete', delete.DELETE),
                      'the delete to end')
        self.assertServerGone(uuid, row.host)


class TestDeleteBeforeTheBuildClaims(DeleteDuringBuildTestCase):
    """The build has reached its host but not claimed the instance."""

    def held_before_claim(self):
        stall = self.stall_at('build.before_claim')
        uuid = self.create_server()
        self.wait_for(stall.reached.is_set, 'the build on its host')
        return uuid, stall

    def test_scheduling(self):
        uuid, stall = self.held_before_claim()
        self.assertEqual((vm_states.BUILDING, task_states.SCHEDULING),
                         (self.row(uuid).vm_state, self.row(uuid).task_state))
        self.delete_and_check(uuid, stall)

    def test_building_with_no_task(self):
        # The state table lets a build start from no task as well.
        uuid, stall = self.held_before_claim()
        row = self.row(uuid)
        row.task_state = None
        row.save(expected_task_state=[task_states.SCHEDULING])
        self.delete_and_check(uuid, stall)

    def test_read_while_scheduling_deleted_while_spawning(self):
        # What the report's 409s were: the API read the server while it
        # was scheduling, and the build claimed it (spawning) before the
        # delete's write. The delete takes it all the same.
        uuid, before_claim = self.held_before_claim()
        spawning = self.stall_at('spawn.after_mkdir')
        read = self.deployment.compute_api.get(self.ctxt, uuid)
        self.assertEqual(task_states.SCHEDULING, read.task_state)
        before_claim.release()
        self.wait_for(spawning.reached.is_set, 'the build spawning')
        host = read.host

        self.deployment.compute_api.delete(self.ctxt, read)

        self.assertEqual(task_states.DELETING, self.row(uuid).task_state)
        spawning.release()
        self.wait_for(lambda: self.ended(uuid, 'delete', delete.DELETE),
                      'the delete to end')
        self.wait_for(lambda: self.ended(uuid, 'create', build.BUILD),
                      'the build to end')
        self.assertServerGone(uuid, host)
