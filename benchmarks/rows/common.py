"""What every row of ``benchmarks/run`` shares: its result lines, the
statistics it prints, and waiting.

A row's function returns a list of ``Line``: one line of the table, with
the project's figure, the baseline's, their ratio, the target and whether
it is met. ``not_measured(row, reason)`` is the line of a row that could
not run. Nothing here times anything itself.
"""

import dataclasses
import functools
import os
import statistics
import sys
import threading
import time
import traceback
import uuid as uuid_mod
import xml.etree.ElementTree as ET

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(BENCHMARKS)
for _path in (TOP, BENCHMARKS):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import evacuate  # noqa: E402  (benchmarks/evacuate.py)

from nova.cli import client as client_mod  # noqa: E402
from nova.testing.cluster import services as cluster_services  # noqa: E402
from nova.testing import procs  # noqa: E402
from nova.testing import rabbitmq  # noqa: E402

percentile = evacuate.percentile
# wait_until(predicate, timeout, what, interval=0.2): ClusterError after
# timeout.
wait_until = cluster_services.wait_until
free_port = rabbitmq.free_port
MET, NOT_MET, NO_TARGET = 'yes', 'NO', '-'


@dataclasses.dataclass
class Line:
    """One line of the table (strings, as printed)."""
    row: str
    project: str
    baseline: str = '-'
    ratio: str = '-'
    target: str = '-'
    met: str = NO_TARGET
    # Where the project's time went (``phase_table``), or None.
    phases: list | None = None


def phase_table(traces):
    """``Line.phases`` from the traces (lists of ``nova.phases.Phase``)
    of the measured operations: per phase, its count, median and p95."""
    from nova import phases as phases_mod
    return [{'phase': s.name, 'n': s.count, 'median': seconds(s.median),
             'p95': seconds(s.p95), 'median_s': s.median}
            for s in phases_mod.summarize(traces)]


def traces_of(first_mark):
    """The phase traces of this process's operations whose marks include
    ``first_mark`` (``nova.phases.recent``)."""
    from nova import phases as phases_mod
    return [phases_mod.phases_of(marks) for marks in
            phases_mod.by_request(phases_mod.recent()).values()
            if first_mark in {m.name for m in marks}]


def traces_in_logs(logs_dir, since, first_mark):
    """The phase traces of the operations whose marks include
    ``first_mark``, from the marks the services logged
    (``nova.phases.parse_log_line``) in the ``*.log`` files of
    ``logs_dir`` at or after ``since`` (``time.time()``)."""
    from nova import phases as phases_mod
    marks = []
    for name in os.listdir(logs_dir):
        if not name.endswith('.log'):
            continue
        with open(os.path.join(logs_dir, name), errors='replace') as f:
            for line in f:
                if 'phase mark' not in line:
                    continue
                found = phases_mod.parse_log_line(line)
                if found is not None and found.at >= since:
                    marks.append(found)
    return [phases_mod.phases_of(request_marks) for request_marks in
            phases_mod.by_request(marks).values()
            if first_mark in {m.name for m in request_marks}]


def not_measured(row, reason, target='-'):
    return Line(row, 'not measured: %s' % reason, target=target)


def line_or_why_not(row, measure, target='-'):
    """``measure()`` (a ``Line``); when it raises, a ``not_measured``
    line for ``row`` that says why, so that a row made of several runs
    keeps what its other runs measured (a QEMU guest that hangs in one
    run must not cost the table the others)."""
    try:
        return measure()
    except Exception as e:
        traceback.print_exc()
        return not_measured(row, ('%s: %s' % (type(e).__name__, e))[:160],
                            target=target)


def verdict(ok):
    return MET if ok else NOT_MET


def seconds(value):
    """A duration as printed: ms below one second, else seconds."""
    if value < 1.0:
        return '%.1f ms' % (value * 1000)
    return '%.2f s' % value


def spread(values):
    """'median X, p95 Y (n N)' of durations in seconds."""
    return 'median %s, p95 %s (n %d)' % (
        seconds(statistics.median(values)), seconds(percentile(values, 95)),
        len(values))


def ratio(project, baseline):
    return project / baseline if baseline > 0 else float('inf')


def ratio_line(row, project_values, baseline_values, limit):
    """A line comparing two samples by their medians; met when the ratio
    of the medians is at most ``limit``."""
    value = ratio(statistics.median(project_values),
                  statistics.median(baseline_values))
    return Line(row, spread(project_values), spread(baseline_values),
                '%.2fx' % value, 'ratio <= %g' % limit,
                verdict(value <= limit))


def without_line(names, project_values, baseline_values):
    """A line of what a row measures with the guarantees ``names``
    switched off (benchmark only, ``rows/guarantees.py``): the project's
    figure without them against the same run's baseline. No target: it
    says what the guarantees cost, and is never the row's result."""
    from rows import guarantees
    value = ratio(statistics.median(project_values),
                  statistics.median(baseline_values))
    return Line(guarantees.without_label(names),
                spread(project_values), spread(baseline_values),
                '%.2fx' % value)


def rss_mb(pid):
    """Resident set size of process ``pid`` in MiB (``VmRSS``)."""
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError('no VmRSS for process %d' % pid)


CLK_TCK = os.sysconf('SC_CLK_TCK')


def cpu_seconds(pid, children=False):
    """CPU seconds of process ``pid``; ``children``: with those of its
    children it waited for (``qemu-img``)."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    # utime and stime: fields 14 and 15 of stat(5), 12 and 13 here;
    # cutime and cstime follow.
    return sum(int(v) for v in fields[11:15 if children else 13]) / CLK_TCK


def machine_cpu_seconds():
    """CPU seconds the whole machine spent since boot, in every process
    and the kernel: user, nice, system, irq and softirq of ``/proc/stat``
    (not idle, iowait, or what the hypervisor stole)."""
    with open('/proc/stat') as f:
        user, nice, system, _idle, _iowait, irq, softirq = (
            int(v) for v in f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / CLK_TCK


def tree_rss_mb(pid):
    """``rss_mb`` of ``pid`` plus its children's (``nova-all``'s API
    workers): pages they share are counted in each, so this is an upper
    bound."""
    total = rss_mb(pid)
    for child in procs.children(pid):
        try:
            total += rss_mb(child)
        except (OSError, RuntimeError):
            pass        # exited meanwhile
    return total


def run_threads(functions):
    """Call each function in a thread of its own, all at once; the wall
    seconds until the last one returned. The first exception raised in
    a thread is raised here, once all have ended."""
    errors = []

    def guarded(function):
        try:
            function()
        except Exception as e:      # raised below
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(function,))
               for function in functions]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return elapsed


def delete_servers(client, uuids, timeout, interval=0.05):
    """``DELETE /servers/<id>`` of each, then until each answers 404."""
    for uuid in uuids:
        client.delete('/servers/%s' % uuid)
    remaining = set(uuids)

    def gone():
        for uuid in list(remaining):
            try:
                client.get('/servers/%s' % uuid)
            except client_mod.NotFound:
                remaining.discard(uuid)
        return not remaining
    wait_until(gone, timeout, 'deletion of %d servers' % len(uuids),
               interval=interval)


def copied_xml(text, name, directory, copy_directory, bridge):
    """The domain XML ``text`` as a copy called ``name``: a new UUID;
    every path under ``directory`` moved under ``copy_directory``; each
    interface a ``type='bridge'`` one on ``bridge`` with no tap name nor
    MAC (libvirt makes both). Returns (XML, [the disk files to copy,
    relative to the directory])."""
    xml = ET.fromstring(text)
    xml.find('name').text = name
    xml.find('uuid').text = str(uuid_mod.uuid4())
    files = []
    for element in xml.iter():
        for attribute in ('file', 'path'):
            value = element.get(attribute)
            if not value or not value.startswith(directory + '/'):
                continue
            element.set(attribute, os.path.join(
                copy_directory, value[len(directory) + 1:]))
    for source in xml.findall('./devices/disk/source'):
        value = source.get('file', '')
        if value.startswith(copy_directory + '/'):
            files.append(value[len(copy_directory) + 1:])
    for interface in xml.iter('interface'):
        for child in list(interface):
            if child.tag in ('target', 'mac', 'source', 'script'):
                interface.remove(child)
        interface.set('type', 'bridge')
        ET.SubElement(interface, 'source', bridge=bridge)
    return ET.tostring(xml, encoding='unicode'), files


class MethodTimer:
    """Times every call of the methods ``names`` of class ``cls`` while
    installed (``durations``: {name: [seconds]}); nothing else changes."""

    def __init__(self, cls, names):
        self.cls = cls
        self.durations = {name: [] for name in names}
        self._real = {}

    @property
    def seconds(self):
        return sum(sum(values) for values in self.durations.values())

    def _timed(self, name, real):
        @functools.wraps(real)
        def call(*args, **kwargs):
            started = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                self.durations[name].append(time.perf_counter() - started)
        return call

    def __enter__(self):
        for name in self.durations:
            real = self.cls.__dict__[name]
            self._real[name] = real
            setattr(self.cls, name, self._timed(name, real))
        return self

    def __exit__(self, *exc):
        for name, real in self._real.items():
            setattr(self.cls, name, real)
