"""pytest hooks of the whole suite.

``tools/run-tests`` runs the suite on three workers (pytest-xdist,
``--dist loadgroup``; pytest 9 ignores the group xdist 3.8 writes into a
test's id, hence pytest < 9). The integration tests start real daemons
(libvirtd per simulated host, PostgreSQL, RabbitMQ, Keystone) and load
the machine with QEMU guests: they all run in one worker, one after the
other, while the other workers take the unit and functional tests. The
integration modules that run no libvirtd or QEMU (``_WITH_HOSTS``) form a
second group, ``daemons``, which runs beside them; a module may name a
group of its own (the Tempest subset does).

The schemathesis run's counts (``functional/api/test_openapi_fuzz.py``)
are printed at the end of the output, whichever process ran it: a
worker's reach the controller in its ``workeroutput``. So are the seconds
each group and each worker took: the busiest worker's share is the run's
length, and what to split or trim first.
"""

import os
import sys

import pytest

_INTEGRATION = os.sep + os.path.join('tests', 'integration') + os.sep
# The integration packages whose tests run libvirtd and QEMU hosts (a
# cluster, or one simulated host): one at a time. The other integration
# modules start only daemons of their own on free ports (PostgreSQL,
# RabbitMQ, Keystone, Masakari, nova-all on libvirt's test driver) and
# run as a second group beside them.
_WITH_HOSTS = ('e2e', 'libvirt')
FUZZ_MODULE = 'nova.tests.functional.api.test_openapi_fuzz'
_FUZZ_KEY = 'nova_fuzz_counts'
# The counts workers reported, for the controller's summary.
_FROM_WORKERS = []


# First: pytest-xdist's worker reads the group marks in its own hook of
# the same name, which would otherwise run before this one.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = str(item.path)
        if (_INTEGRATION not in path
                or item.get_closest_marker('xdist_group') is not None):
            continue
        if any(_INTEGRATION + sub + os.sep in path for sub in _WITH_HOSTS):
            item.add_marker(pytest.mark.xdist_group('integration'))
        else:
            item.add_marker(pytest.mark.xdist_group('daemons'))


def pytest_collection_finish(session):
    """In a pytest-xdist worker of ``--dist loadgroup``: refuse to run
    when the integration tests were not grouped after all (a pytest and
    pytest-xdist that disagree on where a test's id lives). Run on both
    workers at once, two clusters would fight over the machine."""
    if not getattr(session.config.option, 'loadgroup', False):
        return
    loose = [item.nodeid for item in session.items
             if _INTEGRATION in str(item.path)
             and '@' not in item.nodeid.rsplit('::', 1)[-1]]
    if loose:
        raise pytest.UsageError(
            'pytest-xdist did not group the integration tests (%s ...): '
            'use a pytest that keeps the group in the test id, or run '
            'with NOVA_TEST_WORKERS=0' % loose[0])


def _fuzz_counts():
    # Only when the fuzz test ran here (never imported from here).
    module = sys.modules.get(FUZZ_MODULE)
    counts = getattr(module, 'COUNTS', None)
    return dict(counts) if counts and counts['requests'] else None


def pytest_sessionfinish(session):
    output = getattr(session.config, 'workeroutput', None)
    counts = _fuzz_counts()
    if output is not None and counts:
        output[_FUZZ_KEY] = counts


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    counts = getattr(node, 'workeroutput', {}).get(_FUZZ_KEY)
    if counts:
        _FROM_WORKERS.append(counts)


def _seconds_by(reports):
    """Seconds spent (setup, call and teardown) by xdist group and by
    worker: which worker's share is the run's length, and which group
    makes it."""
    groups: dict[str, float] = {}
    workers: dict[str, float] = {}
    for report in reports:
        group = (report.nodeid.rsplit('@', 1)[1] if '@' in
                 report.nodeid.rsplit('::', 1)[-1] else 'ungrouped')
        groups[group] = groups.get(group, 0.0) + report.duration
        node = getattr(report, 'node', None)
        worker = getattr(getattr(node, 'gateway', None), 'id', 'main')
        workers[worker] = workers.get(worker, 0.0) + report.duration
    return groups, workers


def pytest_terminal_summary(terminalreporter):
    for counts in [c for c in [_fuzz_counts()] if c] + _FROM_WORKERS:
        terminalreporter.write_line(
            'schemathesis: %(requests)d requests, %(2xx)d 2xx, %(4xx)d 4xx, '
            '%(5xx)d 5xx' % counts)
    # Every phase's report, whatever its outcome ('' holds the setups
    # and teardowns that passed).
    reports = [r for found in terminalreporter.stats.values()
               for r in found
               if hasattr(r, 'duration') and hasattr(r, 'when')]
    if reports:
        groups, workers = _seconds_by(reports)
        terminalreporter.write_line('seconds by group: %s; by worker: %s' % (
            ', '.join('%s %.0f' % kv for kv in sorted(groups.items())),
            ', '.join('%s %.0f' % kv for kv in sorted(workers.items()))))
