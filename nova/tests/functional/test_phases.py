"""The phases of a boot on the embedded default, as nova.phases records
them: each boundary once, in the order the boot crosses them, from the
API's request to the compute host's return."""

import dataclasses

from nova import context as nova_context
from nova import phases
from nova.tests import base
from nova.tests.functional import test_services

BOOT_MARKS = [
    'api.create_received', 'api.ports_allocated', 'api.host_chosen',
    'api.build_cast', 'compute.build_received', 'compute.build_turn',
    'build.before_claim', 'spawn.after_mkdir', 'spawn.writing_root_disk',
    'spawn.after_disk_info', 'start.after_plug_vifs', 'start.after_define',
    'start.waiting_for_vif_events', 'start.after_resume',
    'build.before_active', 'build.after_active', 'compute.build_returned',
]


class TestBootPhases(test_services.AllInOneTestCase):

    def test_a_boot_marks_each_boundary_once_in_order(self):
        self.ctxt = dataclasses.replace(
            self.ctxt, request_id=nova_context.generate_request_id())
        instance = self._boot('traced')
        self.assertEqual('active', instance.vm_state)
        self.assertTrue(base.wait_until(lambda: 'compute.build_returned' in [
            m.name for m in phases.recent(self.ctxt.request_id)]))
        marks = sorted(phases.recent(self.ctxt.request_id),
                       key=lambda m: m.at)
        self.assertEqual(BOOT_MARKS, [m.name for m in marks])
        trace = phases.phases_of(marks)
        self.assertEqual(BOOT_MARKS[1:], [p.name for p in trace])
        self.assertTrue(all(p.seconds >= 0 for p in trace))
