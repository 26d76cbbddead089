"""Column types: UTC timestamps and JSON text survive a round trip."""

import datetime

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova.tests import base

UTC = datetime.timezone.utc


class TypesTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()

    def _store(self, **values):
        with db_api.session() as session:
            session.execute(sa.insert(models.Instance).values(
                uuid='00000000-0000-0000-0000-000000000001', **values))
        with db_api.session(read_only=True) as session:
            return session.scalars(sa.select(models.Instance)).one()

    def test_aware_timestamp_comes_back_in_utc(self):
        plus_two = datetime.timezone(datetime.timedelta(hours=2))
        written = datetime.datetime(2024, 5, 6, 14, 0, 0, 123456,
                                    tzinfo=plus_two)
        row = self._store(launched_at=written)
        self.assertEqual(written, row.launched_at)
        self.assertEqual(UTC, row.launched_at.tzinfo)
        self.assertEqual(12, row.launched_at.hour)

    def test_naive_timestamp_is_taken_as_utc(self):
        row = self._store(launched_at=datetime.datetime(2024, 5, 6, 12))
        self.assertEqual(datetime.datetime(2024, 5, 6, 12, tzinfo=UTC),
                         row.launched_at)

    def test_timestamps_compare_in_sql_across_offsets(self):
        # 11:00 UTC written as 13:00+02:00 must sort before 12:00 UTC.
        plus_two = datetime.timezone(datetime.timedelta(hours=2))
        self._store(launched_at=datetime.datetime(2024, 5, 6, 13,
                                                  tzinfo=plus_two))
        noon = datetime.datetime(2024, 5, 6, 12, tzinfo=UTC)
        with db_api.session(read_only=True) as session:
            earlier = session.scalars(sa.select(models.Instance.uuid).where(
                models.Instance.launched_at < noon)).all()
        self.assertEqual(1, len(earlier))

    def test_json_text_round_trip(self):
        row = self._store(system_metadata={'a': ['b', 1]},
                          network_info=[{'id': 'p'}])
        self.assertEqual({'a': ['b', 1]}, row.system_metadata)
        self.assertEqual([{'id': 'p'}], row.network_info)
        self.assertIsNone(row.flavor)
