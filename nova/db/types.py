"""Column types that keep Python values faithful across database backends.

SQLite has no timezone-aware timestamp and no JSON column. These types
store UTC timestamps and JSON text the same way on every backend, so an
object reads back exactly what it wrote.
"""

import datetime
import json

import sqlalchemy as sa
from sqlalchemy import types


class UTCDateTime(types.TypeDecorator):
    """A timestamp that is always a timezone-aware UTC ``datetime``.

    A naive value given by a caller is taken to be UTC already.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        value = value.astimezone(datetime.timezone.utc)
        if dialect.name == 'sqlite':
            # NOTE: SQLite stores the text form; a fixed naive UTC form
            # keeps ORDER BY and comparisons correct.
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=datetime.timezone.utc)
        return value.astimezone(datetime.timezone.utc)


class JSONText(types.TypeDecorator):
    """A JSON document stored as text (lists and dicts)."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        return json.dumps(value, sort_keys=True)

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return json.loads(value)
