"""nova.phases: the marks an operation leaves, and its phases."""

import threading

from nova import crashpoint
from nova import phases
from nova.tests import base


def _unique(name):
    return 'req-%s-%s' % (name, threading.get_ident())


class TestMarks(base.TestCase):

    def test_a_bound_thread_marks_every_crash_point_it_reaches(self):
        request = _unique('bound')
        with phases.bound(request):
            phases.mark('compute.build_received')
            crashpoint.reached('spawn.after_mkdir')
            crashpoint.reached('start.after_define')
        crashpoint.reached('start.after_resume')
        self.assertEqual(
            ['compute.build_received', 'spawn.after_mkdir',
             'start.after_define'],
            [m.name for m in phases.recent(request)])

    def test_an_unbound_thread_marks_nothing_without_a_request(self):
        before = len(phases.recent())
        phases.mark('compute.build_received')
        crashpoint.reached('spawn.after_mkdir')
        self.assertEqual(before, len(phases.recent()))

    def test_binding_is_per_thread_and_restored(self):
        outer, inner = _unique('outer'), _unique('inner')
        seen = []

        def other_thread():
            crashpoint.reached('spawn.after_mkdir')
            seen.append(phases.recent(outer))

        with phases.bound(outer):
            with phases.bound(inner):
                phases.mark('a')
            phases.mark('b')
            worker = threading.Thread(target=other_thread)
            worker.start()
            worker.join()
        self.assertEqual(['a'], [m.name for m in phases.recent(inner)])
        self.assertEqual(['b'], [m.name for m in phases.recent(outer)])
        self.assertEqual([['b']], [[m.name for m in s] for s in seen])

    def test_the_log_line_gives_the_mark_back(self):
        mark = phases.Mark('req-1', 'api.build_cast', 1733380000.123456)
        line = ('2026-12-05 06:00:00.000 1 DEBUG nova.phases [-] '
                + phases._LOG_FORMAT % (mark.request_id, mark.name,
                                        mark.at))
        self.assertEqual(mark, phases.parse_log_line(line))
        self.assertIsNone(phases.parse_log_line('phase of the moon'))


class TestPhases(base.TestCase):

    def test_phases_are_the_gaps_between_marks_in_time_order(self):
        marks = [phases.Mark('r', 'c', 13.5), phases.Mark('r', 'a', 10.0),
                 phases.Mark('r', 'b', 11.0)]
        self.assertEqual([phases.Phase('b', 1.0), phases.Phase('c', 2.5)],
                         phases.phases_of(marks))
        self.assertEqual([], phases.phases_of(marks[:1]))

    def test_summary_has_median_and_p95_per_phase_in_order(self):
        traces = [[phases.Phase('x', float(i)), phases.Phase('y', 1.0)]
                  for i in range(1, 21)]
        x, y = phases.summarize(traces)
        self.assertEqual(('x', 20, 10.5, 19.0), (x.name, x.count, x.median,
                                                 x.p95))
        self.assertEqual(('y', 20, 1.0, 1.0), (y.name, y.count, y.median,
                                               y.p95))

    def test_by_request_groups_marks(self):
        marks = [phases.Mark('r1', 'a', 1.0), phases.Mark('r2', 'a', 2.0),
                 phases.Mark('r1', 'b', 3.0)]
        self.assertEqual({'r1': [marks[0], marks[2]], 'r2': [marks[1]]},
                         phases.by_request(marks))
