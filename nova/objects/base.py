"""What every object shares: typed fields, change tracking, RPC form.

An object class declares its fields::

    class Widget(base.NovaObject):
        model = models.Widget               # its table, if it has one
        fields = {'id': fields.Integer(), 'name': fields.String()}

    w = Widget(ctx, name='x')               # no database access
    w.name = 'y'; w.obj_what_changed()      # {'name'}

For RPC, any registered object (``NovaObject`` subclasses register
themselves; other classes with ``to_dict``/``from_dict`` use
``@register``) becomes a primitive and back::

    prim = base.obj_to_primitive(w)         # JSON-safe dict
    w2 = base.obj_from_primitive(ctx, prim)
"""

import copy
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from nova.db import api as db_api
from nova.objects import fields as obj_fields


class _Unset:
    def __repr__(self):
        return 'UNSET'

    def __bool__(self):
        return False


# An argument that was not given (None is a real value: "no task state").
UNSET = _Unset()

utcnow = obj_fields.utcnow

NAME_KEY = 'nova_object.name'
DATA_KEY = 'nova_object.data'
CHANGES_KEY = 'nova_object.changes'

_REGISTRY: dict[str, type] = {}


def register(cls):
    """Make ``cls`` known to ``obj_from_primitive`` by its class name."""
    _REGISTRY[cls.__name__] = cls
    return cls


def is_object(value) -> bool:
    return type(value).__name__ in _REGISTRY and isinstance(
        value, _REGISTRY[type(value).__name__])


def obj_to_primitive(obj) -> dict:
    if not is_object(obj):
        raise ValueError('%r is not a registered object' % (obj,))
    prim = {NAME_KEY: type(obj).__name__, DATA_KEY: obj.to_dict()}
    if isinstance(obj, NovaObject):
        prim[CHANGES_KEY] = sorted(obj.obj_what_changed())
    return prim


def is_primitive_object(value) -> bool:
    return isinstance(value, dict) and NAME_KEY in value


def obj_from_primitive(context, primitive: dict):
    name = primitive[NAME_KEY]
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise ValueError('unknown object type %r' % name)
    if issubclass(cls, NovaObject):
        obj = cls.from_dict(primitive[DATA_KEY], context=context)
        obj._changed.update(primitive.get(CHANGES_KEY, ()))
        return obj
    return cls.from_dict(primitive[DATA_KEY])


class NovaObject:
    """An object with declared, typed fields that knows what changed."""

    fields: ClassVar[dict[str, obj_fields.Field]] = {}
    model: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register(cls)

    def __init__(self, context=None, **values):
        self._start(context)
        for name, field in self.fields.items():
            object.__setattr__(self, name, field.default())
        self.obj_reset_changes()
        for name, value in values.items():
            setattr(self, name, value)

    def _start(self, context) -> None:
        object.__setattr__(self, '_context', context)
        object.__setattr__(self, '_changed', set())
        object.__setattr__(self, '_originals', {})

    def __setattr__(self, name, value):
        field = self.fields.get(name)
        if field is None:
            if not name.startswith('_'):
                raise AttributeError('%s has no field %s'
                                     % (type(self).__name__, name))
        else:
            value = field.coerce(name, value)
            self._changed.add(name)
        object.__setattr__(self, name, value)

    def __repr__(self):
        shown = ', '.join('%s=%r' % (n, getattr(self, n))
                          for n in ('id', 'uuid') if n in self.fields)
        return '%s(%s)' % (type(self).__name__, shown)

    def __getitem__(self, name):
        # NOTE: read-only mapping access to fields, because oslo.log formats
        # its ``instance=`` prefix with ``instance_format % instance``
        # ('[instance: %(uuid)s] '); without it every log line about an
        # instance would carry the object's repr instead.
        if name not in self.fields:
            raise KeyError(name)
        return getattr(self, name)

    @property
    def context(self):
        return self._context

    def obj_what_changed(self) -> set[str]:
        changed = set(self._changed)
        # A dict changed in place (instance.system_metadata['k'] = v) is
        # a change too.
        for name, original in self._originals.items():
            if getattr(self, name) != original:
                changed.add(name)
        return changed

    def obj_reset_changes(self, names=None) -> None:
        names = list(self.fields) if names is None else list(names)
        self._changed.difference_update(names)
        for name in names:
            if self.fields[name].mutable:
                self._originals[name] = copy.deepcopy(getattr(self, name))

    # RPC form -----------------------------------------------------------

    def to_dict(self) -> dict:
        return {name: field.to_primitive(getattr(self, name))
                if getattr(self, name) is not None else None
                for name, field in self.fields.items()}

    @classmethod
    def from_dict(cls, values: dict, context=None):
        obj = cls(context)
        for name, field in cls.fields.items():
            if name in values:
                value = values[name]
                if value is not None:
                    value = field.from_primitive(value)
                elif not field.nullable:
                    value = field.default()
                setattr(obj, name, value)
        obj.obj_reset_changes()
        return obj

    # Database form (for objects with a ``model``) -----------------------

    @classmethod
    def _from_db_object(cls, context, db_obj):
        # Not through __init__: the row sets every field, so the defaults
        # (a new UUID for some) would be made only to be replaced, on
        # every object of every read.
        obj = cls.__new__(cls)
        obj._start(context)
        obj._update_from_db_object(db_obj)
        return obj

    def _update_from_db_object(self, db_obj) -> None:
        for name, field, kept in _plan(type(self)):
            value = getattr(db_obj, name)
            if type(value) not in kept:
                value = _converted(name, field, value)
            object.__setattr__(self, name, value)
        self.obj_reset_changes()

    @classmethod
    def _db_columns_as(cls, kind, rows):
        """``kind`` (a NamedTuple whose fields are some of this object's)
        of each row of those columns, converted as the object's fields
        are: for reads of many rows that need a few columns, not objects
        (a target choice reads every host of the region)."""
        plan = _plan(cls, kind._fields)
        return [kind(*[value if type(value) in kept
                       else _converted(name, field, value)
                       for (name, field, kept), value in zip(plan, row)])
                for row in rows]

    def _db_values(self, names=None) -> dict:
        names = self.fields if names is None else names
        values = {}
        for name in names:
            value = getattr(self, name)
            values[name] = (None if value is None
                            else self.fields[name].to_db(value))
        return values

    def _db_insert(self, conflict=None, also=None) -> None:
        """INSERT every field but ``id``; set ``id`` from the new row.

        ``conflict``: an exception to raise instead of an IntegrityError
        (a unique column already taken). ``also(session, values)`` runs
        in the same transaction, after the INSERT.
        """
        try:
            with db_api.writing() as connection:
                values = self._db_insert_in(connection)
                if also is not None:
                    also(connection, values)
        except Exception as e:
            if self.id is not None:
                self._forget_id()
            if conflict is not None and isinstance(e, sa_exc.IntegrityError):
                raise conflict
            raise

    def _db_update(self, *where, conflict=None, extra=None,
                   also=None) -> bool:
        """UPDATE the changed fields of this row (by ``id``), atomically.

        Extra ``where`` clauses make it a compare-and-swap: returns False,
        object untouched, when the row did not match them. ``extra``: more
        column values, SQL expressions allowed (``count + 1``). On success
        the object holds the row as written. ``also(connection)`` runs in
        the same transaction once the row was updated; what it raises
        rolls the UPDATE back.
        """
        changed = self.obj_what_changed() - {'id'}
        values = self._db_values(changed)
        if 'updated_at' in self.fields:
            values['updated_at'] = utcnow()
        table = self.model.__table__
        # The row as written comes back with the UPDATE (RETURNING, which
        # SQLite has since 3.35 and PostgreSQL always had): no second
        # statement to read it. The values go as parameters: building
        # them into the statement cost more than running it.
        for name in extra or ():
            values.pop(name, None)      # SQL of its own wins
        if where or extra:
            update = sa.update(table).where(
                table.c.id == sa.bindparam(_ROW_ID), *where)
            if extra:
                update = update.values(**extra)
            update = update.returning(table)
        else:
            update = _update_by_id(table)
        values[_ROW_ID] = self.id
        try:
            with db_api.writing() as connection:
                row = connection.execute(update, values).first()
                if row is None:
                    return False
                if also is not None:
                    also(connection)
                self._update_from_db_object(row)
        except sa_exc.IntegrityError:
            if conflict is None:
                raise
            raise conflict
        return True

    def _db_update_in(self, session) -> bool:
        """UPDATE this row's changed fields (by ``id``) in ``session``, the
        transaction of another object's write that carries them;
        ``updated_at`` too when the object has one. Whether the row was
        there (the object is left as it is when it was not)."""
        if 'updated_at' in self.fields:
            self.updated_at = utcnow()
        changed = self.obj_what_changed() - {'id'}
        values = self._db_values(changed)
        values[_ROW_ID] = self.id
        result = session.execute(_update_by_id(self.model.__table__,
                                               returning=False), values)
        if result.rowcount != 1:
            return False
        self.obj_reset_changes()
        return True

    def _db_insert_in(self, session) -> dict:
        """INSERT this object (every field but ``id``) in ``session``;
        ``id`` is set from the new row. Returns the values written.

        NOTE: the transaction may still roll back after this: a caller
        whose commit failed must not trust ``id`` (``_forget_id``).
        """
        values = self._db_values(n for n in self.fields if n != 'id')
        # The table's INSERT with the values as parameters: built into
        # the statement, they cost more than the INSERT itself.
        result = session.execute(self.model.__table__.insert(), values)
        object.__setattr__(self, 'id', result.inserted_primary_key[0])
        self.obj_reset_changes()
        return values

    def _forget_id(self) -> None:
        """Back to unsaved: the transaction that inserted this row did not
        commit (every field counts as changed again)."""
        object.__setattr__(self, 'id', None)
        self._changed.update(n for n in self.fields if n != 'id')

    @classmethod
    def _db_select(cls, *where):
        """SELECT of this object's table, for Core rows.

        ``_update_from_db_object`` reads a row as it reads an ORM object
        (each field is a column of the same name, and none is named like
        an attribute of ``Row``, such as ``count``: a unit test checks
        every model), and a row costs about a third of an ORM object to
        load: the reads below run on every request and every step of
        every operation.

        The columns are the table's, never the mapped class's: a mapped
        class or attribute among a SELECT's columns makes SQLAlchemy
        configure every mapper, which nova-compute, whose statements are
        all Core, otherwise never does (``doc/source/contributor/
        internals.rst``, "Persistence"). ``where`` may name mapped
        attributes: those configure nothing.
        """
        return sa.select(cls.model.__table__).where(*where)

    @classmethod
    def _db_get_one(cls, context, *where):
        """The one object matching ``where``, or None."""
        with db_api.reading() as connection:
            row = connection.execute(cls._db_select(*where)).first()
        return None if row is None else cls._from_db_object(context, row)

    @classmethod
    def _db_read_one(cls, context, query, params: dict):
        """The one object ``query`` finds with ``params``, or None:
        ``query`` is built once, with bind parameters, for a read that
        runs on every request (building a statement cost more than
        running it)."""
        with db_api.reading() as connection:
            row = connection.execute(query, params).first()
        return None if row is None else cls._from_db_object(context, row)

    @classmethod
    def _db_get_by(cls, context, order_by: tuple[str, ...] = ('id',),
                   **filters) -> list:
        """The objects whose columns match ``filters`` (each a value, a
        list, None for NULL: as ``matches``), in ``order_by`` (column
        names, ``-name`` for descending).

        The statement is built once per shape of the filters (which
        columns, one value or several, NULL or not) and run with their
        values as parameters: the reads of every operation cost about a
        third of what they did built each time.
        """
        shapes = tuple((name, match_shape(filters[name]))
                       for name in sorted(filters))
        key = (cls.model, shapes, order_by)
        query = _SELECTS.get(key)
        if query is None:
            table = cls.model.__table__
            query = _SELECTS[key] = sa.select(table).where(*[
                bound_match(table.c[name], name, shape)
                for name, shape in shapes]).order_by(*[
                    table.c[name[1:]].desc() if name.startswith('-')
                    else table.c[name] for name in order_by])
        params: dict = {}
        for name, value in filters.items():
            bind_match(name, value, params)
        with db_api.reading() as connection:
            rows = connection.execute(query, params).all()
        return [cls._from_db_object(context, r) for r in rows]

    @classmethod
    def _db_find_by(cls, context, **filters):
        """The first object (by id) ``_db_get_by`` finds, or None."""
        found = cls._db_get_by(context, **filters)
        return found[0] if found else None

    @classmethod
    def _db_get_all(cls, context, *where, order_by=None) -> list:
        query = cls._db_select(*where)
        if order_by is not None:
            query = query.order_by(*order_by)
        else:
            query = query.order_by(cls.model.id)
        with db_api.reading() as connection:
            rows = connection.execute(query).all()
        return [cls._from_db_object(context, r) for r in rows]


# {(table, filters' names and shapes, order): the SELECT of
# NovaObject._db_get_by}, each built once.
_SELECTS: dict[tuple, sa.Select] = {}


# {(object class, field names or None for all of them): (name, field,
# the types its column values are kept as, fields.kept_from_db) of each},
# made once per class, not looked up once per value. Reads convert
# thousands of values (a choice in a region of 500 hosts: about 7,000),
# most of them strings and integers the field would return unchanged.
_PLANS: dict[tuple[type, tuple[str, ...] | None],
             list[tuple[str, object, tuple[type, ...]]]] = {}


def _plan(cls, names: tuple[str, ...] | None = None):
    """The plan of ``names`` (None: every field of ``cls``)."""
    plan = _PLANS.get((cls, names))
    if plan is None:
        plan = [(name, cls.fields[name],
                 obj_fields.kept_from_db(cls.fields[name]))
                for name in (cls.fields if names is None else names)]
        _PLANS[cls, names] = plan
    return plan


def _converted(name: str, field, value):
    """Field ``name``'s (``field``'s) value from its column's ``value``."""
    if value is not None:
        value = field.from_db(value)
    elif not field.nullable:
        value = field.default()
    return field.coerce(name, value)


# The bind parameter of a row's id in the UPDATEs below (not a column
# name: those are the SET clause's).
_ROW_ID = 'row_id'
# {(table, returning): UPDATE ... WHERE id = :row_id}, built once per
# table; the SET clause is made of the parameters given at execution.
_UPDATES_BY_ID: dict[tuple[sa.Table, bool], sa.Update] = {}


def _update_by_id(table: sa.Table, returning: bool = True) -> sa.Update:
    update = _UPDATES_BY_ID.get((table, returning))
    if update is None:
        update = sa.update(table).where(table.c.id == sa.bindparam(_ROW_ID))
        if returning:
            update = update.returning(table)
        _UPDATES_BY_ID[table, returning] = update
    return update


def reads_together():
    """A context in which this thread's reads of objects share one
    read-only transaction (``db_api.reading``): one BEGIN and COMMIT for
    a view built from several reads, instead of one per read. Nothing in
    it may wait on anything else (an RPC call, a lock): the transaction
    stays open until the context ends."""
    return db_api.reading()


def matches(column, expected):
    """SQL for "column is one of ``expected``" (a value or a list).

    ``None`` in ``expected`` means NULL.
    """
    values = as_list(expected)
    if len(values) == 1 and values[0] is not None:
        # A third of the cost of building IN (v), and no list to expand
        # at each execution: the case of most checks.
        return column == values[0]
    clauses = []
    if None in values:
        clauses.append(column.is_(None))
    non_null = [v for v in values if v is not None]
    if non_null:
        clauses.append(column.in_(non_null))
    return sa.or_(*clauses) if clauses else sa.false()


def match_shape(expected) -> tuple[bool, int]:
    """What ``matches`` builds for ``expected``: (NULL among them, how
    many other values: 0, 1, or 2 for more), the key of a statement built
    once per shape (``bound_match``)."""
    values = as_list(expected)
    non_null = sum(1 for v in values if v is not None)
    return len(values) != non_null, min(non_null, 2)


def bound_match(column, name: str, shape: tuple[bool, int]):
    """``matches`` of ``column`` for values of ``shape``, given at
    execution as the parameter ``name`` (``bind_match``)."""
    has_null, non_null = shape
    clauses = []
    if has_null:
        clauses.append(column.is_(None))
    if non_null == 1 and not has_null:
        return column == sa.bindparam(name)
    if non_null:
        clauses.append(column.in_(sa.bindparam(name, expanding=True)))
    return sa.or_(*clauses) if clauses else sa.false()


def bind_match(name: str, expected, params: dict) -> None:
    """Put the values of ``expected`` in ``params`` for the clause
    ``bound_match`` built for its shape."""
    non_null = [v for v in as_list(expected) if v is not None]
    if len(non_null) == 1 and None not in as_list(expected):
        params[name] = non_null[0]
    elif non_null:
        params[name] = non_null


def as_list(expected) -> list:
    if isinstance(expected, (list, tuple, set, frozenset)):
        return list(expected)
    return [expected]
