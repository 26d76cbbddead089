"""Fuzzing the REST API from its own OpenAPI document, with schemathesis.

The application runs in this process (no socket) over a real SQLite
database holding two compute hosts, a flavor, an image and a server; RPC
to the compute hosts and the conductor is recorded, not sent (the API's
side is what is tested). Schemathesis reads ``/v2.1/openapi.json`` (at the
newest microversion, and at 2.11 for the routes that end at 2.52) and
sends requests built from the same JSON schemas the handlers validate
with, valid and not, to every operation. For every request:

* no response is a server error (5xx);
* a refused request (4xx) changed nothing: every row of every table is as
  it was, and nothing was sent over RPC.

The counts (requests, 4xx, 5xx) are printed at the end of a pytest run
(``conftest.py``). The run is bounded: ``MAX_EXAMPLES`` per operation and
microversion, and hypothesis' own limits; about three minutes here.
"""

import hashlib
import json

from hypothesis import given
from hypothesis import HealthCheck
from hypothesis import settings
import schemathesis
import sqlalchemy as sa
from sqlalchemy import event

from nova.api.openstack import api_version
from nova.db import api as db_api
from nova.tests.unit.api.openstack import fakes

MAX_EXAMPLES = 100
# The newest, and 2.11: the first with every route that ends at 2.52.
VERSIONS = (str(api_version.MAX_VERSION), '2.11')
COUNTS = {'requests': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0}
HEADERS = {'X-Auth-Token': fakes.ADMIN_TOKEN}


def _digest(metadata) -> str:
    """Every row of every table of ``metadata``, hashed."""
    digest = hashlib.sha256()
    with db_api.get_engine().connect() as connection:
        for table in metadata.sorted_tables:
            rows = connection.execute(
                sa.select(table).order_by(*table.primary_key.columns))
            for row in rows:
                digest.update(json.dumps([table.name, *row], default=str,
                                         sort_keys=True).encode())
    return digest.hexdigest()


class TestOpenAPIFuzz(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.make_instance(name='fuzzed')
        self.tables = sa.MetaData()
        engine = db_api.get_engine()
        self.tables.reflect(engine)
        # The digest of every row is taken again only after a statement
        # that wrote a row: most requests write nothing, and hashing every
        # table twice for each was most of the run's time.
        self.writes = 0
        event.listen(engine, 'after_cursor_execute', self._count_writes)
        self.addCleanup(event.remove, engine, 'after_cursor_execute',
                        self._count_writes)
        self.digest = _digest(self.tables)

    def _count_writes(self, conn, cursor, statement, parameters, context,
                      executemany):
        if (statement.lstrip()[:6].upper() in ('INSERT', 'UPDATE', 'DELETE')
                and cursor.rowcount != 0):
            self.writes += 1

    def operations(self, version):
        schema = schemathesis.openapi.from_wsgi(
            '/v2.1/openapi.json', self.app,
            headers={'OpenStack-API-Version': 'compute %s' % version})
        for result in schema.get_all_operations():
            yield result.ok()

    def check(self, case):
        before = self.digest
        writes = self.writes
        casts = (len(self.compute_rpc.casts), len(self.conductor_rpc.casts))
        response = case.call(headers=HEADERS)
        if self.writes != writes:
            self.digest = _digest(self.tables)
        status = response.status_code
        COUNTS['requests'] += 1
        COUNTS['%dxx' % (status // 100)] += 1
        what = '%s %s -> %d' % (case.method, case.formatted_path, status)
        self.assertLess(status, 500, '%s: %s' % (what, response.text[:500]))
        if status >= 400:
            self.assertEqual(before, self.digest,
                             '%s: refused, but the database changed' % what)
            self.assertEqual(casts, (len(self.compute_rpc.casts),
                                     len(self.conductor_rpc.casts)),
                             '%s: refused, but RPC was sent' % what)

    def test_no_server_error_and_refusals_change_nothing(self):
        checked = []
        for version in VERSIONS:
            for operation in self.operations(version):
                checked.append('%s %s' % (operation.method, operation.path))

                @given(operation.as_strategy())
                @settings(max_examples=MAX_EXAMPLES, deadline=None,
                          database=None,
                          suppress_health_check=list(HealthCheck))
                def fuzz(case):
                    self.check(case)
                fuzz()
        # The write counter saw the writes of the requests that succeeded
        # (it is what decides when to hash the tables again).
        self.assertGreater(self.writes, 0)
        # Every route the router has was reached at one of the versions.
        self.assertEqual(
            {'%s %s' % (r.method.upper(), r.template)
             for r in self.app.router.routes},
            {c.upper().split(' ', 1)[0] + ' ' + c.split(' ', 1)[1]
             for c in checked})
