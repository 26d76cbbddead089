"""Golden XML files: generated domain XML compared with files checked in.

``assert_golden(test, 'name', xml)`` compares ``xml`` with
``golden/name.xml``. Run with ``NOVA_REGENERATE_GOLDEN=1`` to rewrite the
files after an intended change; the reviewer then reads the XML diff.
"""

import os

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), 'golden')
REGENERATE_ENV = 'NOVA_REGENERATE_GOLDEN'


def assert_golden(test, name: str, xml: str) -> None:
    path = os.path.join(GOLDEN_DIR, name + '.xml')
    if os.environ.get(REGENERATE_ENV) == '1':
        with open(path, 'w') as f:
            f.write(xml)
        return
    if not os.path.exists(path):
        test.fail('no golden file %s; run with %s=1 to create it'
                  % (path, REGENERATE_ENV))
    with open(path) as f:
        expected = f.read()
    test.assertEqual(expected, xml,
                     'domain XML differs from %s (%s=1 regenerates it)'
                     % (path, REGENERATE_ENV))
