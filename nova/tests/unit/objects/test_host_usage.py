"""The usage counters kept with every write of an instance row, and their
audit, against a real SQLite database (PostgreSQL: the integration test
runs ``race_moves`` too)."""

import threading

import sqlalchemy as sa

from nova import context
from nova.db import api as db_api
from nova import exception
from nova.model import task_states
from nova import objects
from nova.objects import host_usage
from nova.tests import base


def _flavor(vcpus=1, memory_mb=64, root_gb=1):
    return objects.Flavor(flavorid='f%d' % vcpus, name='f%d' % vcpus,
                          memory_mb=memory_mb, vcpus=vcpus, root_gb=root_gb)


def counters():
    """Every counter row: {(host, node): (instances, vcpus, MiB, GiB)}."""
    with db_api.session(read_only=True) as session:
        return {(r.host, r.node): (r.instances, r.vcpus, r.memory_mb,
                                   r.disk_gb)
                for r in session.scalars(sa.select(
                    host_usage.models.HostUsage))}


def race_moves(ctx, hosts=('h1', 'h2', 'h3'), threads=6, rounds=15):
    """``threads`` threads each create instances and move them between
    ``hosts`` and delete some, all at once; returns what an audit of each
    host then corrects (nothing, when every write kept the counters)."""
    barrier = threading.Barrier(threads)
    errors = []

    def work(n):
        try:
            barrier.wait()
            mine = []
            for i in range(rounds):
                instance = objects.Instance(
                    ctx, host=hosts[(n + i) % len(hosts)], node='n',
                    flavor=_flavor(vcpus=1 + i % 3)).create()
                mine.append(instance)
                moved = mine[(i * 7) % len(mine)]
                if not moved.deleted:
                    moved.host = hosts[(n + i + 1) % len(hosts)]
                    moved.save()
                if i % 4 == 3:
                    mine[i // 2].destroy()
        except Exception as e:      # reported by the caller
            errors.append(e)
    workers = [threading.Thread(target=work, args=(n,))
               for n in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    if errors:
        raise errors[0]
    return [c for host in hosts for c in host_usage.audit(host)]


class HostUsageTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.use_database()
        self.ctx = context.get_admin_context()

    def _create(self, **values):
        values.setdefault('host', 'h1')
        values.setdefault('node', 'n1')
        values.setdefault('flavor', _flavor())
        return objects.Instance(self.ctx, **values).create()

    def test_a_create_counts_on_its_host_and_node(self):
        self._create(flavor=_flavor(vcpus=2, memory_mb=512, root_gb=10))
        self._create(flavor=_flavor(vcpus=1, memory_mb=64, root_gb=1))
        self._create(host='h2', node=None)
        self.assertEqual({('h1', 'n1'): (2, 3, 576, 11),
                          ('h2', ''): (1, 1, 64, 1)}, counters())
        self.assertEqual((3, 576, 11), objects.Instance.flavor_totals(
            self.ctx, 'h1'))
        self.assertEqual((0, 0, 0), objects.Instance.flavor_totals(
            self.ctx, 'h1', node='other'))

    def test_an_instance_with_no_host_or_no_flavor(self):
        self._create(host=None)
        self._create(flavor=None)
        # Nothing for no host; a flavorless instance counts as one, taking
        # nothing.
        self.assertEqual({('h1', 'n1'): (1, 0, 0, 0)}, counters())

    def test_moves_deletes_and_a_new_flavor_keep_the_counters(self):
        instance = self._create(flavor=_flavor(vcpus=2, memory_mb=128))
        instance.host, instance.node = 'h2', 'n2'
        instance.save()
        self.assertEqual({('h1', 'n1'): (0, 0, 0, 0),
                          ('h2', 'n2'): (1, 2, 128, 1)}, counters())
        instance.flavor = _flavor(vcpus=4, memory_mb=256, root_gb=5)
        instance.save()
        self.assertEqual((1, 4, 256, 5), counters()[('h2', 'n2')])
        instance.destroy()
        self.assertEqual((0, 0, 0, 0), counters()[('h2', 'n2')])
        # A state change alone does not touch them.
        other = self._create()
        before = counters()
        other.task_state = task_states.REBUILDING
        other.save()
        self.assertEqual(before, counters())

    def test_a_save_that_loses_its_compare_and_swap_changes_nothing(self):
        instance = self._create()
        instance.host = 'h2'
        self.assertRaises(exception.InstanceNotOnThisHost, instance.save,
                          expected_host='elsewhere')
        self.assertEqual({('h1', 'n1'): (1, 1, 64, 1)}, counters())

    def test_a_stale_copy_gives_back_what_the_row_took_not_what_it_read(self):
        instance = self._create()
        stale = objects.Instance.get_by_uuid(self.ctx, instance.uuid)
        instance.host = 'h2'
        instance.save()
        # The stale copy still says h1; the row is on h2: h2 gives it back.
        stale.host = 'h3'
        stale.save()
        self.assertEqual({('h1', 'n1'): (0, 0, 0, 0),
                          ('h2', 'n1'): (0, 0, 0, 0),
                          ('h3', 'n1'): (1, 1, 64, 1)}, counters())

    def test_exclude_an_instance(self):
        self._create(flavor=_flavor(vcpus=2, memory_mb=128))
        left_out = self._create()
        elsewhere = self._create(host='h2')
        self.assertEqual((2, 128, 1), objects.Instance.flavor_totals(
            self.ctx, 'h1', exclude_uuid=left_out.uuid))
        # Excluding an instance of another host changes nothing.
        self.assertEqual((3, 192, 2), objects.Instance.flavor_totals(
            self.ctx, 'h1', exclude_uuid=elsewhere.uuid))
        # Nor does excluding an instance the database never had.
        never = '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'
        self.assertEqual((3, 192, 2), objects.Instance.flavor_totals(
            self.ctx, 'h1', exclude_uuid=never))

    def test_the_audit_corrects_a_write_that_bypassed_the_objects(self):
        moved = self._create()
        self._create(flavor=_flavor(vcpus=2, memory_mb=128))
        self.assertEqual([], host_usage.audit('h1'))
        with db_api.session() as session:
            session.execute(sa.text(
                "UPDATE instances SET host = 'h2' WHERE uuid = :u"),
                {'u': moved.uuid})
        with self.assertLogs('nova.objects.host_usage', 'WARNING') as logs:
            corrections = host_usage.audit('h1') + host_usage.audit('h2')
        self.assertEqual(
            [('h1', 'n1', {'instances': 2, 'vcpus': 3, 'memory_mb': 192,
                           'disk_gb': 2},
              {'instances': 1, 'vcpus': 2, 'memory_mb': 128, 'disk_gb': 1}),
             ('h2', 'n1', {'instances': 0, 'vcpus': 0, 'memory_mb': 0,
                           'disk_gb': 0},
              {'instances': 1, 'vcpus': 1, 'memory_mb': 64, 'disk_gb': 1})],
            [(c.host, c.node, c.kept, c.actual) for c in corrections])
        self.assertIn('drifted', logs.output[0])
        self.assertEqual({('h1', 'n1'): (1, 2, 128, 1),
                          ('h2', 'n1'): (1, 1, 64, 1)}, counters())
        self.assertEqual([], host_usage.audit('h1') + host_usage.audit('h2'))

    def test_the_audit_zeroes_a_host_with_no_instance_left(self):
        with db_api.session() as session:
            session.execute(sa.text(
                "INSERT INTO host_usage (host, node, instances, vcpus, "
                "memory_mb, disk_gb) VALUES ('gone', 'n', 3, 3, 3, 3)"))
        (correction,) = host_usage.audit('gone')
        self.assertEqual((0, 0, 0, 0), counters()[('gone', 'n')])
        self.assertEqual(3, correction.kept['instances'])

    def test_each_kind_of_counter_write_is_built_once_and_kept_apart(self):
        # An increment and a replacement of the same counters are two
        # statements; each is built at its first write only.
        key = ('h9', 'n9')
        values = {'instances': 2, 'vcpus': 4, 'memory_mb': 128, 'disk_gb': 2}
        with db_api.writing() as connection:
            host_usage._set(connection, key, values)
            host_usage._add(connection, key, values)
            host_usage._add(connection, key, {'instances': -1})
        self.assertEqual((3, 8, 256, 4), counters()[key])
        shapes = {k for k in host_usage._UPSERTS if k[1] == tuple(values)}
        self.assertEqual({False, True}, {increment for *_k, increment
                                         in shapes})
        built = dict(host_usage._UPSERTS)
        with db_api.writing() as connection:
            host_usage._set(connection, key, values)
        self.assertEqual((2, 4, 128, 2), counters()[key])
        self.assertEqual(built, host_usage._UPSERTS)

    def test_concurrent_creates_moves_and_deletes_keep_exact_counters(self):
        self.assertEqual([], race_moves(self.ctx))
        self.assertTrue(any(counters().values()))
