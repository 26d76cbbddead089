"""pytest hooks of the API functional tests: the schemathesis run's counts
(``test_openapi_fuzz.py``) at the end of the output."""

import sys

FUZZ_MODULE = 'nova.tests.functional.api.test_openapi_fuzz'


def pytest_terminal_summary(terminalreporter):
    # Only when the fuzz test was collected (never imported from here).
    module = sys.modules.get(FUZZ_MODULE)
    counts = getattr(module, 'COUNTS', None)
    if counts and counts['requests']:
        terminalreporter.write_line(
            'schemathesis: %(requests)d requests, %(2xx)d 2xx, %(4xx)d 4xx, '
            '%(5xx)d 5xx' % counts)
