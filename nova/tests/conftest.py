"""pytest hooks of the whole suite.

``tools/run-tests`` runs the suite on two workers (pytest-xdist,
``--dist loadgroup``). The integration tests start real daemons
(libvirtd per simulated host, PostgreSQL, RabbitMQ, Keystone) and load
the machine with QEMU guests: they all run in one worker, one after the
other, while the other worker takes the unit and functional tests.

The schemathesis run's counts (``functional/api/test_openapi_fuzz.py``)
are printed at the end of the output, whichever process ran it: a
worker's reach the controller in its ``workeroutput``.
"""

import os
import sys

import pytest

_INTEGRATION = os.sep + os.path.join('tests', 'integration') + os.sep
FUZZ_MODULE = 'nova.tests.functional.api.test_openapi_fuzz'
_FUZZ_KEY = 'nova_fuzz_counts'
# The counts workers reported, for the controller's summary.
_FROM_WORKERS = []


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _INTEGRATION in str(item.path):
            item.add_marker(pytest.mark.xdist_group('integration'))


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


def pytest_terminal_summary(terminalreporter):
    for counts in [c for c in [_fuzz_counts()] if c] + _FROM_WORKERS:
        terminalreporter.write_line(
            'schemathesis: %(requests)d requests, %(2xx)d 2xx, %(4xx)d 4xx, '
            '%(5xx)d 5xx' % counts)
