"""What the live instances of each host take, kept as counters.

Placement reads a candidate host's usage at every choice. Summing the
host's instances made that cost grow with the number of servers; instead
``host_usage`` keeps one row per host and node (the number of live
instances and what their flavors take), and every write of an instance
row changes it in the same transaction (``objects.Instance.create`` and
``save``): what the row took before the write is taken off its old host,
what it takes after is added to its new one. Reading a host's usage is
then one row per node, whatever the number of servers::

    vcpus, memory_mb, disk_gb = host_usage.totals('compute1')

Why this cannot drift under concurrency: the row's previous share is read
with ``SELECT ... FOR UPDATE`` before the ``UPDATE`` (on SQLite every
writer holds the database from ``BEGIN IMMEDIATE``), so two transactions
moving one instance see each other's result, never the same old value;
counters change by increments (``vcpus = vcpus + :delta``), not by values
read earlier; and the counters of several hosts are always written in
the order of their keys, so two moves in opposite directions cannot
deadlock on PostgreSQL.

What can still make the counters wrong is a write that bypasses
``objects.Instance`` (an operator's SQL, a restored dump): ``audit()``
recomputes a host's counters from its instances (under the lock of its
counter rows, so a concurrent claim is counted once) and corrects them,
logging every correction. Each compute host runs it with its periodic
resource update (``nova/compute/resources.py``).
"""

import dataclasses
import importlib

from oslo_log import log as logging
import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models

LOG = logging.getLogger(__name__)

_COUNTERS = ('instances', 'vcpus', 'memory_mb', 'disk_gb')
# The module of each database's own INSERT (the one that says ON CONFLICT
# DO UPDATE), by dialect name; imported by _write.
_INSERT_MODULES = {'sqlite': 'sqlalchemy.dialects.sqlite',
                   'postgresql': 'sqlalchemy.dialects.postgresql'}


@dataclasses.dataclass(frozen=True)
class Share:
    """What one live instance takes on its host and node."""
    host: str
    node: str
    vcpus: int = 0
    memory_mb: int = 0
    disk_gb: int = 0

    @property
    def key(self) -> tuple[str, str]:
        return self.host, self.node


_INSTANCES = models.Instance.__table__.c
# The columns of an instance row that decide its share.
_SHARE_COLUMNS = (_INSTANCES.host, _INSTANCES.node, _INSTANCES.deleted,
                  _INSTANCES.flavor_vcpus, _INSTANCES.flavor_memory_mb,
                  _INSTANCES.flavor_disk_gb)

# Writing any of these fields can change an instance's share.
SHARE_FIELDS = frozenset({'host', 'node', 'deleted', 'flavor'})


def _share(row) -> Share | None:
    if row is None:
        return None
    host, node, deleted, vcpus, memory_mb, disk_gb = row
    if not host or deleted:
        return None
    return Share(host, node or '', vcpus or 0, memory_mb or 0, disk_gb or 0)


# Built once, as the reads below (each runs at every claim and choice):
# the share of one instance, plain and locked.
_SHARE_OF = sa.select(*_SHARE_COLUMNS).where(
    _INSTANCES.uuid == sa.bindparam('uuid'))
_SHARE_OF_LOCKED = _SHARE_OF.with_for_update()


def share_of(connection, uuid: str, lock: bool = False) -> Share | None:
    """The share instance ``uuid``'s row takes now (None: no host, deleted
    or no row). ``lock``: hold the row until the transaction ends."""
    return _share(connection.execute(
        _SHARE_OF_LOCKED if lock else _SHARE_OF, {'uuid': uuid}).first())


def share_of_values(values: dict) -> Share | None:
    """The share of a row about to be inserted with ``values``."""
    return _share(tuple(values.get(column.key)
                        for column in _SHARE_COLUMNS))


def share_of_row(row: models.Instance) -> Share | None:
    """The share of an instance row already read in the transaction."""
    return _share(tuple(getattr(row, column.key)
                        for column in _SHARE_COLUMNS))


def move(connection, before: Share | None, after: Share | None) -> None:
    """Take ``before`` off its host and add ``after`` to its host, in
    ``connection``'s transaction (``db_api.writing``)."""
    deltas: dict[tuple[str, str], list[int]] = {}
    for share, sign in ((before, -1), (after, 1)):
        if share is None:
            continue
        delta = deltas.setdefault(share.key, [0, 0, 0, 0])
        for i, value in enumerate((1, share.vcpus, share.memory_mb,
                                   share.disk_gb)):
            delta[i] += sign * value
    # In key order: two transactions never take two hosts' rows in
    # opposite orders.
    for key in sorted(deltas):
        delta = deltas[key]
        if any(delta):
            _add(connection, key, dict(zip(_COUNTERS, delta)))


def _write(connection, key: tuple[str, str], values: dict,
           increment: bool) -> None:
    """INSERT the counter row of ``key`` with ``values``, or, when it
    exists, add ``values`` to it (``increment``) or replace it with them:
    one statement either way, however many processes write at once."""
    host, node = key
    connection.execute(
        _upsert(connection.dialect.name, tuple(values), increment),
        dict(values, host=host, node=node))


# {(dialect, counters, increment): the upsert of _write}: built once
# with bind parameters. Built at each write, its expressions and its
# cache key were two thirds of a counter write's CPU, paid twice by every
# create, evacuation and delete.
_UPSERTS: dict[tuple[str, tuple[str, ...], bool], sa.Insert] = {}


def _upsert(dialect: str, names: tuple[str, ...],
            increment: bool) -> sa.Insert:
    upsert = _UPSERTS.get((dialect, names, increment))
    if upsert is not None:
        return upsert
    table = models.HostUsage.__table__
    # Imported here, not at the top: the engine has loaded the dialect in
    # use already, while importing the other (PostgreSQL's: 20 modules,
    # about 2 MiB) would cost every process on SQLite, nova-compute among
    # them, for nothing.
    insert = importlib.import_module(_INSERT_MODULES[dialect]).insert(table)
    insert = insert.values({name: sa.bindparam(name)
                            for name in ('host', 'node') + names})
    upsert = insert.on_conflict_do_update(
        index_elements=['host', 'node'],
        set_={name: (table.c[name] + insert.excluded[name] if increment
                     else insert.excluded[name]) for name in names})
    _UPSERTS[dialect, names, increment] = upsert
    return upsert


def _add(connection, key: tuple[str, str], delta: dict) -> None:
    _write(connection, key, delta, increment=True)


def _set(connection, key: tuple[str, str], values: dict) -> None:
    _write(connection, key, values, increment=False)


def totals(host: str, node: str | None = None,
           exclude_uuid: str | None = None) -> tuple[int, int, int]:
    """(vCPUs, MiB, GiB) the live instances on ``host`` take (on its
    ``node`` only if given), ``exclude_uuid``'s share left out."""
    return _totals([host], node, exclude_uuid)[host]


def totals_by_host(hosts, exclude_uuid: str | None = None
                   ) -> dict[str, tuple[int, int, int]]:
    """``totals`` of each of ``hosts``, in one read whatever their number
    (the target choice weighs every host of a region at each choice)."""
    return _totals(list(hosts), None, exclude_uuid)


_USAGE = models.HostUsage.__table__.c
_TOTALS = sa.select(
    _USAGE.host,
    sa.func.coalesce(sa.func.sum(_USAGE.vcpus), 0),
    sa.func.coalesce(sa.func.sum(_USAGE.memory_mb), 0),
    sa.func.coalesce(sa.func.sum(_USAGE.disk_gb), 0),
).where(_USAGE.host.in_(
    sa.bindparam('hosts', expanding=True))).group_by(_USAGE.host)
_NODE_TOTALS = _TOTALS.where(_USAGE.node == sa.bindparam('node'))


def _totals(hosts: list[str], node: str | None,
            exclude_uuid: str | None) -> dict[str, tuple[int, int, int]]:
    if node is None:
        query, params = _TOTALS, {'hosts': hosts}
    else:
        query, params = _NODE_TOTALS, {'hosts': hosts, 'node': node}
    found = {host: [0, 0, 0] for host in hosts}
    with db_api.reading() as connection:
        for host, vcpus, memory_mb, disk_gb in connection.execute(
                query, params):
            found[host] = [int(vcpus), int(memory_mb), int(disk_gb)]
        excluded = (share_of(connection, exclude_uuid)
                    if exclude_uuid is not None else None)
    if excluded is not None and excluded.host in found and (
            node is None or excluded.node == node):
        kept = found[excluded.host]
        kept[0] -= excluded.vcpus
        kept[1] -= excluded.memory_mb
        kept[2] -= excluded.disk_gb
    return {host: (v[0], v[1], v[2]) for host, v in found.items()}


@dataclasses.dataclass(frozen=True)
class Correction:
    """A counter row the audit found wrong, and what it holds now."""
    host: str
    node: str
    kept: dict
    actual: dict


def audit(host: str) -> list[Correction]:
    """Recompute ``host``'s counters from its live instances and correct
    those that drifted (each correction logged as a warning)."""
    usage = models.HostUsage
    instance = _INSTANCES
    node = sa.func.coalesce(instance.node, '')

    def total(column):
        return sa.func.coalesce(sa.func.sum(column), 0)
    corrections = []
    with db_api.writing() as connection:
        # The counter rows first, locked: a claim that commits while the
        # instances are summed waits to change its counter until this
        # transaction ends, so it is counted exactly once.
        kept = {row.node: {name: getattr(row, name) for name in _COUNTERS}
                for row in connection.execute(sa.select(
                    usage.__table__).where(
                        usage.host == host).with_for_update())}
        actual = {
            row[0]: dict(zip(_COUNTERS, (int(v) for v in row[1:])))
            for row in connection.execute(
                sa.select(node, sa.func.count(), total(instance.flavor_vcpus),
                          total(instance.flavor_memory_mb),
                          total(instance.flavor_disk_gb))
                .where(instance.host == host,
                       instance.deleted == sa.false())
                .group_by(node))}
        zero = dict.fromkeys(_COUNTERS, 0)
        for name in sorted(set(kept) | set(actual)):
            was, now = kept.get(name, zero), actual.get(name, zero)
            if was != now:
                _set(connection, (host, name), now)
                corrections.append(Correction(host, name, was, now))
    for c in corrections:
        LOG.warning('Usage of host %(host)s node %(node)r had drifted from '
                    'its instances: counted %(kept)s, corrected to '
                    '%(actual)s', dataclasses.asdict(c))
    return corrections
