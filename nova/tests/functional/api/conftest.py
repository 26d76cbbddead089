"""pytest hooks of the API functional tests: the schemathesis run's counts
(``test_openapi_fuzz.py``) at the end of the output."""


def pytest_terminal_summary(terminalreporter):
    from nova.tests.functional.api import test_openapi_fuzz
    counts = test_openapi_fuzz.COUNTS
    if counts['requests']:
        terminalreporter.write_line(
            'schemathesis: %(requests)d requests, %(2xx)d 2xx, %(4xx)d 4xx, '
            '%(5xx)d 5xx' % counts)
