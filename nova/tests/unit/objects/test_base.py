"""Shared object machinery: fields, change tracking, the RPC form."""

import collections
import datetime
import importlib
import pkgutil

import sqlalchemy as sa

from nova import context
from nova.db import api as db_api
from nova.db import models
from nova import objects
from nova.objects import base as obj_base
from nova.objects import fields
from nova.tests import base


class Widget(obj_base.NovaObject):
    # A test-only object type (no table).
    fields = {
        'name': fields.String(),
        'size': fields.Integer(default=1, nullable=False),
        'labels': fields.Dict(),
        'seen': fields.DateTime(),
    }


class NovaObjectTestCase(base.TestCase):

    def test_defaults_and_no_changes_for_them(self):
        widget = Widget()
        self.assertEqual((None, 1, {}), (widget.name, widget.size,
                                         widget.labels))
        self.assertEqual(set(), widget.obj_what_changed())

    def test_defaults_are_not_shared_between_objects(self):
        one, two = Widget(), Widget()
        one.labels['a'] = 'b'
        self.assertEqual({}, two.labels)

    def test_assignment_is_tracked_and_reset(self):
        widget = Widget(name='w')
        widget.size = 3
        self.assertEqual({'name', 'size'}, widget.obj_what_changed())
        widget.obj_reset_changes(['size'])
        self.assertEqual({'name'}, widget.obj_what_changed())
        widget.obj_reset_changes()
        self.assertEqual(set(), widget.obj_what_changed())

    def test_in_place_dict_change_is_tracked(self):
        widget = Widget()
        widget.labels['a'] = 'b'
        self.assertEqual({'labels'}, widget.obj_what_changed())

    def test_values_are_checked(self):
        self.assertRaises(ValueError, Widget, name=3)
        self.assertRaises(ValueError, Widget, size=None)
        self.assertRaises(AttributeError, setattr, Widget(), 'colour', 1)

    def test_primitive_round_trip_with_changes_and_context(self):
        ctx = context.get_admin_context()
        widget = Widget(name='w', labels={'a': 'b'})
        widget.obj_reset_changes()
        widget.size = 5
        primitive = obj_base.obj_to_primitive(widget)
        self.assertEqual('Widget', primitive[obj_base.NAME_KEY])
        copy = obj_base.obj_from_primitive(ctx, primitive)
        self.assertIsInstance(copy, Widget)
        self.assertEqual(widget.to_dict(), copy.to_dict())
        self.assertEqual({'size'}, copy.obj_what_changed())
        self.assertIs(ctx, copy.context)

    def test_every_object_type_is_registered(self):
        for cls in (objects.Instance, objects.Flavor, objects.Migration,
                    objects.InstanceAction, objects.InstanceActionEvent,
                    objects.InstanceFault, objects.Service,
                    objects.Network, objects.Port):
            self.assertIs(cls, obj_base._REGISTRY[cls.__name__])

    def test_flavor_dataclass_round_trip(self):
        flavor = objects.Flavor('1', 'm1', 64, 1, 1, swap=5)
        primitive = obj_base.obj_to_primitive(flavor)
        self.assertTrue(obj_base.is_primitive_object(primitive))
        self.assertEqual(flavor, obj_base.obj_from_primitive(None,
                                                             primitive))

    def test_unknown_types_are_refused(self):
        self.assertRaises(ValueError, obj_base.obj_to_primitive, {'a': 1})
        self.assertFalse(obj_base.is_object({'a': 1}))
        self.assertRaises(ValueError, obj_base.obj_from_primitive, None,
                          {obj_base.NAME_KEY: 'Nope',
                           obj_base.DATA_KEY: {}})

    def test_unset_is_not_none(self):
        self.assertIsNot(None, obj_base.UNSET)
        self.assertFalse(obj_base.UNSET)


class ColumnsAsTestCase(base.TestCase):
    """``_db_columns_as``: rows of a few columns converted as the
    object's fields convert them, without building objects."""

    Row = collections.namedtuple('Row', ('name', 'size', 'labels', 'seen'))

    def test_values_are_converted_as_their_fields_convert_them(self):
        naive = datetime.datetime(2026, 12, 7, 9, 0)
        rows = [('a', 3, {'k': 'v'}, naive), (None, None, None, None)]
        got = Widget._db_columns_as(self.Row, rows)
        # A naive time is taken as UTC; a non-nullable column's NULL is
        # its default; a dict's NULL is {} (Dict.from_db).
        self.assertEqual(
            [self.Row('a', 3, {'k': 'v'},
                      naive.replace(tzinfo=datetime.timezone.utc)),
             self.Row(None, 1, {}, None)], got)
        self.assertEqual(got, [self.Row(*(
            obj_base._converted(name, Widget.fields[name], value)
            for name, value in zip(self.Row._fields, row))) for row in rows])

    def test_a_value_its_field_refuses_is_refused(self):
        self.assertRaises(ValueError, Widget._db_columns_as, self.Row,
                          [(7, 3, {}, None)])
        self.assertRaises(ValueError, Widget._db_columns_as, self.Row,
                          [('a', True, {}, None)])

    def test_a_field_that_converts_more_than_the_type_still_converts(self):
        # Values of a plain type are taken as they are (fields.kept_from_db)
        # unless the field's class converts or checks more.
        Row = collections.namedtuple('Row', ('code', 'size'))
        self.assertEqual([Row('AB', 2)],
                         Gadget._db_columns_as(Row, [(' AB ', 2)]))
        gadget = Gadget._from_db_object(None, Row(' AB ', '3'))
        self.assertEqual(('AB', 3), (gadget.code, gadget.size))


class _Stripped(fields.String):
    # Its column holds the value with spaces around it.
    def from_db(self, value):
        return value.strip()


class Gadget(obj_base.NovaObject):
    # A test-only object type (no table) with a field that converts
    # more than its value's type.
    fields = {'code': _Stripped(), 'size': fields.Integer()}


class MatchesTestCase(base.TestCase):

    def _sql(self, expected):
        clause = obj_base.matches(models.Instance.task_state, expected)
        return str(clause.compile(compile_kwargs={'literal_binds': True}))

    def test_none_means_null(self):
        self.assertEqual('instances.task_state IS NULL', self._sql(None))
        self.assertEqual(
            "instances.task_state IS NULL OR instances.task_state IN "
            "('spawning')", self._sql([None, 'spawning']))

    def test_empty_list_matches_nothing(self):
        self.assertEqual('false', self._sql([]))

    def test_one_value_is_an_equality(self):
        self.assertEqual("instances.task_state = 'spawning'",
                         self._sql('spawning'))
        self.assertEqual("instances.task_state IN ('spawning', 'deleting')",
                         self._sql(['spawning', 'deleting']))


class BoundMatchTestCase(base.TestCase):
    """``bound_match`` (built once per shape, values given at execution)
    finds the rows ``matches`` finds, for every shape."""

    def test_same_rows_as_matches_for_every_shape(self):
        self.use_database()
        ctx = context.get_admin_context()
        by_state = {}
        for state in (None, 'a', 'b', 'c'):
            by_state[state] = objects.Instance(
                ctx, display_name='vm', task_state=state).create().uuid
        column = models.Instance.task_state
        table = models.Instance
        for expected in (None, 'a', ['a'], ['a', 'b'], [None, 'a'],
                         [None, 'a', 'b'], [], [None]):
            with self.subTest(expected=expected):
                params = {}
                obj_base.bind_match('state', expected, params)
                with db_api.reading() as connection:
                    bound = set(connection.scalars(sa.select(
                        table.uuid).where(obj_base.bound_match(
                            column, 'state',
                            obj_base.match_shape(expected))), params))
                    literal = set(connection.scalars(sa.select(
                        table.uuid).where(obj_base.matches(
                            column, expected))))
                wanted = {by_state[s] for s in obj_base.as_list(expected)}
                self.assertEqual(wanted, literal)
                self.assertEqual(literal, bound)


class GetByTestCase(base.TestCase):
    """``_db_get_by``: equality reads built once per shape."""

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()
        self.instances = [objects.Instance(
            self.ctx, display_name='vm%d' % n).create().uuid
            for n in range(2)]
        self.made = [objects.Migration(
            self.ctx, instance_uuid=self.instances[n % 2],
            source_compute='a',
            dest_compute=dest, migration_type='evacuation',
            status=status).create()
            for n, (dest, status) in enumerate((
                ('b', 'accepted'), (None, 'done'), ('c', 'failed'),
                ('b', 'done')))]

    def ids(self, found):
        return [m.id for m in found]

    def test_filters_shapes_and_order(self):
        get = objects.Migration._db_get_by
        m = self.ids(self.made)
        self.assertEqual(m, self.ids(get(self.ctx)))
        self.assertEqual([m[1], m[3]],
                         self.ids(get(self.ctx, status='done')))
        self.assertEqual([m[3], m[1]], self.ids(
            get(self.ctx, order_by=('-id',), status='done')))
        self.assertEqual([m[0], m[2], m[3]], self.ids(
            get(self.ctx, dest_compute=['b', 'c'])))
        self.assertEqual([m[1]], self.ids(get(self.ctx, dest_compute=None)))
        self.assertEqual([m[0], m[1], m[3]], self.ids(
            get(self.ctx, dest_compute=[None, 'b'])))
        self.assertEqual([m[3]], self.ids(
            get(self.ctx, dest_compute='b',
                instance_uuid=self.instances[1])))
        self.assertEqual([], get(self.ctx, status=[]))
        self.assertIsNone(objects.Migration._db_find_by(
            self.ctx, status='nothing'))

    def test_one_statement_per_shape(self):
        get = objects.Migration._db_get_by
        get(self.ctx, status='done', dest_compute='b')
        before = len(obj_base._SELECTS)
        found = get(self.ctx, dest_compute='c', status='failed')
        self.assertEqual([self.made[2].id], self.ids(found))
        self.assertEqual(before, len(obj_base._SELECTS))
        get(self.ctx, dest_compute=['b', 'c'], status='failed')
        self.assertEqual(before + 1, len(obj_base._SELECTS))


def _objects_with_a_table():
    for module in pkgutil.iter_modules(objects.__path__):
        importlib.import_module('nova.objects.' + module.name)
    found, todo = [], [obj_base.NovaObject]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if getattr(cls, 'model', None) is not None:
            found.append(cls)
    return found


class CoreRowsTestCase(base.TestCase):
    """Objects are read from Core rows (``_db_select``), which carry
    columns by name, not from ORM objects, which carry mapped attributes."""

    def test_every_field_is_a_column_of_the_same_name(self):
        classes = _objects_with_a_table()
        self.assertIn(objects.Instance, classes)
        self.assertIn(objects.Port, classes)
        # A field named like an attribute of Row (count, index, t, ...)
        # would read as that attribute, not as the column.
        taken = set(dir(sa.engine.Row))
        for cls in classes:
            columns = {c.name: c.key for c in cls.model.__table__.columns}
            for name in cls.fields:
                self.assertEqual(name, columns.get(name),
                                 '%s.%s' % (cls.__name__, name))
                self.assertNotIn(name, taken,
                                 '%s.%s' % (cls.__name__, name))

    def test_a_row_reads_as_the_orm_object_reads(self):
        self.use_database()
        ctx = context.get_admin_context()
        flavor = objects.Flavor(flavorid='1', name='m1.tiny', memory_mb=512,
                                vcpus=1, root_gb=1, ephemeral_gb=0, swap=0,
                                extra_specs={'hw:cpu_policy': 'shared'})
        instance = objects.Instance(
            ctx, display_name='vm1', host='h1', flavor=flavor,
            system_metadata={'image_base': 'x'}, launched_at=obj_base.utcnow(),
            auto_disk_config=True).create()
        from_row = objects.Instance.get_by_uuid(ctx, instance.uuid)
        with db_api.session(read_only=True) as session:
            orm_object = session.scalars(sa.select(models.Instance).where(
                models.Instance.uuid == instance.uuid)).one()
        from_orm = objects.Instance._from_db_object(ctx, orm_object)
        self.assertEqual(from_orm.to_dict(), from_row.to_dict())
        self.assertEqual(flavor.extra_specs, from_row.flavor.extra_specs)
        self.assertIs(True, from_row.auto_disk_config)
        self.assertEqual(instance.launched_at, from_row.launched_at)

    def test_a_loaded_object_tracks_changes_from_the_row(self):
        self.use_database()
        ctx = context.get_admin_context()
        instance = objects.Instance(
            ctx, display_name='vm1', host='h1',
            system_metadata={'image_base': 'x'}).create()
        loaded = objects.Instance.get_by_uuid(ctx, instance.uuid)
        self.assertIs(ctx, loaded.context)
        self.assertEqual(set(), loaded.obj_what_changed())
        self.assertEqual(instance.uuid, loaded.uuid)
        loaded.system_metadata['image_base'] = 'y'      # in place
        loaded.host = 'h2'
        self.assertEqual({'system_metadata', 'host'},
                         loaded.obj_what_changed())
        loaded.save()
        self.assertEqual(
            ({'image_base': 'y'}, 'h2'),
            (objects.Instance.get_by_uuid(ctx, instance.uuid).system_metadata,
             objects.Instance.get_by_uuid(ctx, instance.uuid).host))


class TestLogPrefix(base.TestCase):
    """Every log line about an instance carries its UUID (oslo.log)."""

    def test_instance_format_renders_the_uuid(self):
        import logging as std_logging

        from oslo_log import _options as log_options
        from oslo_log import formatters

        from nova.conf import CONF
        from nova import objects

        # The non-CLI logging options (instance_format among them);
        # registering them again is a no-op.
        CONF.register_opts(log_options.log_opts)
        uuid = 'b88d49d3-6bad-4aa2-8999-94d41e1b70a2'
        instance = objects.Instance(None, uuid=uuid)
        record = std_logging.LogRecord('nova.test', std_logging.INFO, __file__,
                                       1, 'Spawned the guest', (), None)
        record.instance = instance
        line = formatters.ContextFormatter(config=CONF).format(record)
        self.assertIn('[instance: %s] Spawned the guest' % uuid, line)

    def test_mapping_access_is_limited_to_fields(self):
        from nova import objects
        instance = objects.Instance(None)
        self.assertEqual(instance.uuid, instance['uuid'])
        self.assertRaises(KeyError, instance.__getitem__, '_context')
