"""Host-evacuate on real QEMU: every instance of a dead host to two
targets, against parallel ``virsh create`` of the same split.

A ``nova.testing.cluster`` of three compute hosts (``rows/qemu_cluster.py``).
For N = 10 and 20 (``--quick``: 2 and 4): N servers are booted on
``compute1`` (the other two disabled meanwhile); ``compute1`` fails (a
power loss, ``Cluster.fail``) and is forced down. Then:

* project: ``nova host-evacuate compute1`` (``nova.cli.host_evacuate``:
  ``POST /os-host-evacuations``, the conductor requesting each
  evacuation and choosing between ``compute2`` and ``compute3``), timed
  from the request until ``GET /servers/detail`` (polled every 100 ms)
  shows every one ACTIVE, with no task, on a target;
* baseline: a copy of each evacuated server's domain (its XML on the
  target where it landed, its disks copied beforehand; see
  ``qemu_cluster.copy_domain``) started with ``virsh create`` on that
  target, all at once (one thread each), timed until the last ``virsh``
  returns; then destroyed.

Between the two sizes the servers are deleted and ``compute1`` revived.
Target: ratio at most 1.15, at both sizes. Then, to say what each
guarantee costs, the larger size again in a new cluster whose services
start without it (``GUARANTEES``; benchmark only,
``rows/guarantees.py``), and once without all of them, each against its
own run's parallel ``virsh create``.

A part that fails (a server not ACTIVE in time, a ``virsh`` that does
not return) is a ``not measured`` line saying why, and the row keeps the
lines of the others (``common.line_or_why_not``); after a failed size
the next one is not tried in that cluster. What would say why (logs,
libvirtd's threads) is kept before the cluster goes on or down
(``BenchCluster.keep_evidence``), in the directory the run prints.
"""

import functools
import time

from rows import common
from rows import guarantees
from rows import qemu_cluster

from nova.cli import host_evacuate as host_evacuate_cli  # noqa: E402

SOURCE = 'compute1'
TARGETS = ('compute2', 'compute3')
LIMIT = 1.15
# The first mark of an evacuation attempt (nova/conductor/manager.py).
FIRST_MARK = 'conductor.received'
# What each guarantee costs here (rows/guarantees.py).
GUARANTEES = ('token_checks', 'file_fsync', 'postgres_sync', 'vif_wait')


def boot_on_source(bench, client, count, size):
    for target in TARGETS:
        bench.set_service(client, target, status='disabled')
    try:
        uuids = [bench.post_server(client, 'bench-hevac-%d-%d' % (size, n))
                 for n in range(count)]
        for uuid in uuids:
            bench.wait_server(client, uuid, 'ACTIVE', host=SOURCE)
    finally:
        for target in TARGETS:
            bench.set_service(client, target, status='enabled')
    return uuids


def host_evacuate(client, uuids):
    """Seconds from the first request to every server ACTIVE on a
    target; {uuid: target}."""
    started = time.perf_counter()
    host_evacuate_cli.start(client, SOURCE)
    landed = {}

    def all_landed():
        servers = client.get('/servers/detail',
                             query={'all_tenants': '1'})['servers']
        for server in servers:
            if server['id'] not in uuids:
                continue
            if server['status'] == 'ERROR':
                raise RuntimeError('evacuation of %s failed: %s'
                                   % (server['id'], server.get('fault')))
            host = server.get('OS-EXT-SRV-ATTR:host')
            if (server['status'] == 'ACTIVE' and host in TARGETS
                    and server.get('OS-EXT-STS:task_state') is None):
                landed[server['id']] = host
        return len(landed) == len(uuids)
    common.wait_until(all_landed, qemu_cluster.TIMEOUT,
                      'host-evacuate of %d servers' % len(uuids),
                      interval=0.1)
    return time.perf_counter() - started, landed


def parallel_virsh_create(bench, landed, size):
    copies = [(host,) + bench.copy_domain(host, uuid, 'hevac-%d-%d'
                                          % (size, n))
              for n, (uuid, host) in enumerate(sorted(landed.items()))]
    try:
        elapsed = common.run_threads([
            functools.partial(qemu_cluster.timed_run,
                              ['virsh', '-c', bench.entry(host).libvirt_uri,
                               'create', path])
            for host, path, _name in copies])
    finally:
        for host, _path, name in copies:
            bench.remove_copy(host, name)
    return elapsed


def measure(bench, client, size):
    uuids = boot_on_source(bench, client, size, size)
    bench.cluster.fail(SOURCE)
    bench.set_service(client, SOURCE, forced_down=True)
    since = time.time()
    project, landed = host_evacuate(client, set(uuids))
    traces = bench.traces(since, FIRST_MARK)
    baseline = parallel_virsh_create(bench, landed, size)
    split = ', '.join('%s %d' % (t, list(landed.values()).count(t))
                      for t in TARGETS)
    bench.delete_servers(client, uuids)
    return project, baseline, split, traces


def size_line(bench, client, size, revive):
    try:
        if revive:
            bench.set_service(client, SOURCE, forced_down=False)
            bench.cluster.revive(SOURCE)
        project, baseline, split, traces = measure(bench, client, size)
    except Exception as e:
        # Before the cluster goes on (or down): what says why.
        bench.keep_evidence('%d servers: %s: %s'
                            % (size, type(e).__name__, e))
        raise
    value = common.ratio(project, baseline)
    return common.Line(
        'host-evacuate %d servers to 2 targets, real QEMU (%s)'
        % (size, split), common.seconds(project),
        'parallel virsh create: %s' % common.seconds(baseline),
        '%.2fx' % value, 'ratio <= %g' % LIMIT,
        common.verdict(value <= LIMIT),
        phases=common.phase_table(traces) or None)


def without_line(names, size):
    with qemu_cluster.BenchCluster(3, switched_off=names) as bench:
        project, baseline, _split, _traces = measure(
            bench, bench.client(), size)
    return common.without_line(names, [project], [baseline])


def run(quick):
    # Each part that fails (a guest that never came up, a libvirtd that
    # stopped answering) is a line that says why; the others are kept.
    sizes = (2, 4) if quick else (10, 20)
    lines = []
    with qemu_cluster.BenchCluster(3) as bench:
        client = bench.client()
        for index, size in enumerate(sizes):
            lines.append(common.line_or_why_not(
                'host-evacuate %d servers to 2 targets, real QEMU' % size,
                functools.partial(size_line, bench, client, size,
                                  revive=bool(index)),
                target='ratio <= %g' % LIMIT))
            if lines[-1].met not in (common.MET, common.NOT_MET):
                break       # the cluster's state is unknown now
    for names in guarantees.one_by_one_then_all(GUARANTEES):
        lines.append(common.line_or_why_not(
            guarantees.without_label(names),
            functools.partial(without_line, names, sizes[-1])))
    return lines
