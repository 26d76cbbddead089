"""Typed attributes of objects: how a value is checked, sent and stored.

Each field converts a value three ways: ``coerce`` when it is assigned,
``to_primitive``/``from_primitive`` for RPC (JSON-safe values), and
``to_db``/``from_db`` for the column it lives in.
"""

import datetime

from oslo_utils import timeutils

from nova.model import network as network_model


def utcnow() -> datetime.datetime:
    """Now, timezone-aware, in UTC: the only clock objects use."""
    return timeutils.utcnow(with_timezone=True)


class Field:
    """Any value; the base of the typed fields below."""

    # Values that can change in place, so change tracking compares them.
    mutable = False

    def __init__(self, default=None, nullable=True):
        self._default = default
        self.nullable = nullable

    def default(self):
        value = self._default
        return value() if callable(value) else value

    def coerce(self, name, value):
        if value is None:
            if not self.nullable:
                raise ValueError('field %s may not be None' % name)
            return None
        return self._coerce(name, value)

    def _coerce(self, name, value):
        return value

    def to_primitive(self, value):
        return value

    def from_primitive(self, value):
        return value

    def to_db(self, value):
        return value

    def from_db(self, value):
        return value


def kept_from_db(field: Field) -> tuple[type, ...]:
    """The types of column values that ``field`` keeps as they are:
    ``from_db`` and ``coerce`` return a value of exactly one of these
    types unchanged, so a read may skip both. () for a field that
    converts or checks more than the type (its class overrides a step).

    Reads of many rows convert thousands of values this way (a target
    choice reads every host of the region).
    """
    cls = type(field)
    if cls.from_db is not Field.from_db or cls.coerce is not Field.coerce:
        return ()
    return _KEPT.get(cls._coerce, ())


class String(Field):
    def _coerce(self, name, value):
        if not isinstance(value, str):
            raise ValueError('field %s wants a string, got %r'
                             % (name, value))
        return value


class Integer(Field):
    def _coerce(self, name, value):
        if isinstance(value, bool):
            raise ValueError('field %s wants an integer, got %r'
                             % (name, value))
        return int(value)


class Boolean(Field):
    def _coerce(self, name, value):
        return bool(value)


class DateTime(Field):
    """A timezone-aware UTC datetime; naive values are taken as UTC."""

    def _coerce(self, name, value):
        if isinstance(value, str):
            value = datetime.datetime.fromisoformat(value)
        if not isinstance(value, datetime.datetime):
            raise ValueError('field %s wants a datetime, got %r'
                             % (name, value))
        if value.tzinfo is None:
            return value.replace(tzinfo=datetime.timezone.utc)
        return value.astimezone(datetime.timezone.utc)

    def to_primitive(self, value):
        return None if value is None else value.isoformat()

    def from_primitive(self, value):
        return None if value is None else self._coerce('', value)


class Dict(Field):
    """A JSON-safe dict (keys are strings)."""

    mutable = True

    def __init__(self, nullable=False):
        super().__init__(default=dict, nullable=nullable)

    def _coerce(self, name, value):
        if not isinstance(value, dict):
            raise ValueError('field %s wants a dict, got %r' % (name, value))
        return dict(value)

    def from_db(self, value):
        return {} if value is None else value


class List(Field):
    """A JSON-safe list."""

    mutable = True

    def __init__(self, nullable=False):
        super().__init__(default=list, nullable=nullable)

    def _coerce(self, name, value):
        if not isinstance(value, (list, tuple)):
            raise ValueError('field %s wants a list, got %r' % (name, value))
        return list(value)

    def from_db(self, value):
        return [] if value is None else value


class NetworkInfo(Field):
    """``nova.model.network.NetworkInfo``, stored as a JSON list."""

    def __init__(self):
        super().__init__(default=network_model.NetworkInfo, nullable=False)

    def _coerce(self, name, value):
        if isinstance(value, (network_model.NetworkInfo, list, tuple)):
            return network_model.NetworkInfo.coerce(value)
        raise ValueError('field %s wants a NetworkInfo, got %r'
                         % (name, value))

    def to_primitive(self, value):
        return value.to_list()

    def from_primitive(self, value):
        return network_model.NetworkInfo.from_list(value)

    to_db = to_primitive
    from_db = from_primitive


class Object(Field):
    """Another object with ``to_dict``/``from_dict`` (a Flavor, say)."""

    mutable = True

    def __init__(self, cls, nullable=True):
        super().__init__(default=None, nullable=nullable)
        self.cls = cls

    def _coerce(self, name, value):
        if isinstance(value, dict):
            return self.cls.from_dict(value)
        if not isinstance(value, self.cls):
            raise ValueError('field %s wants a %s, got %r'
                             % (name, self.cls.__name__, value))
        return value

    def to_primitive(self, value):
        return None if value is None else value.to_dict()

    def from_primitive(self, value):
        return None if value is None else self.cls.from_dict(value)

    to_db = to_primitive
    from_db = from_primitive


# {a field class's _coerce: the types it returns unchanged}. Integer's
# int() keeps an int (not a bool: it refuses those); Boolean's bool()
# keeps a bool.
_KEPT = {String._coerce: (str,), Integer._coerce: (int,),
         Boolean._coerce: (bool,)}
