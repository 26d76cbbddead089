"""Instance HA on real QEMU: from a power loss to the last instance ACTIVE
elsewhere, with nothing but nova-hamonitor acting.

A ``nova.testing.cluster`` of four compute hosts (``rows/qemu_cluster.py``)
where ``compute1`` and ``compute2`` share their instance storage, with
nova-hamonitor on the controller (``service_down_time`` 10 s, a look every
2 s) fencing with the cluster's agent (``tools/cluster fence``, served by
this process) and recovering through the built-in host-evacuate. Three
servers with ``HA_Enabled=True`` are booted on ``compute1`` (shared
storage) and three on ``compute3`` (private); both hosts then lose power
at once (``Cluster.fail``). Timed from the power loss until ``GET
/servers/detail`` (polled every 100 ms) shows all six ACTIVE, with no
task, on ``compute2`` or ``compute4``. No baseline: the target is the
absolute one, at most 30 s.

``--quick``: one server per host.
"""

import time

from rows import common
from rows import qemu_cluster

from nova.testing.cluster import cli as cluster_cli  # noqa: E402

A, B, C, D = 'compute1', 'compute2', 'compute3', 'compute4'
FAILED = (A, C)
TARGETS = (B, D)
LIMIT = 30.0
HA_META = {'metadata': {'HA_Enabled': 'True'}}


def boot_on(bench, client, host, count):
    others = [h for h in bench.compute_services(client) if h != host]
    for other in others:
        bench.set_service(client, other, status='disabled')
    try:
        uuids = [bench.post_server(client, 'bench-ha-%s-%d' % (host, n))
                 for n in range(count)]
    finally:
        for other in others:
            bench.set_service(client, other, status='enabled')
    for uuid in uuids:
        bench.wait_server(client, uuid, 'ACTIVE', host=host)
        client.post('/servers/%s/metadata' % uuid, HA_META)
    return uuids


def recovered(client, uuids):
    servers = client.get('/servers/detail',
                         query={'all_tenants': '1'})['servers']
    landed = {}
    for server in servers:
        host = server.get('OS-EXT-SRV-ATTR:host')
        if (server['id'] in uuids and server['status'] == 'ACTIVE'
                and host in TARGETS
                and server.get('OS-EXT-STS:task_state') is None):
            landed[server['id']] = host
    return landed


def run(quick):
    per_host = 1 if quick else 3
    with qemu_cluster.BenchCluster(4, shared_groups=((A, B),),
                                   hamonitor=True) as bench:
        control = cluster_cli.Supervisor(cluster=bench.cluster)
        control.serve_in_thread()
        try:
            client = bench.client()
            uuids = set()
            for host in FAILED:
                uuids.update(boot_on(bench, client, host, per_host))
            began = time.perf_counter()
            for host in FAILED:
                bench.cluster.fail(host)
            landed = {}

            def all_landed():
                landed.update(recovered(client, uuids))
                return len(landed) == len(uuids)
            common.wait_until(all_landed, qemu_cluster.TIMEOUT,
                              'recovery of %d servers' % len(uuids),
                              interval=0.1)
            elapsed = time.perf_counter() - began
            split = ', '.join('%s %d' % (t, list(landed.values()).count(t))
                              for t in TARGETS)
            bench.delete_servers(client, sorted(uuids))
        finally:
            control.stop()
    return [common.Line(
        'power loss of 2 hosts to %d HA servers ACTIVE elsewhere, real '
        'QEMU, service_down_time %d s (%s)' % (
            len(uuids), bench.spec.service_down_time, split),
        common.seconds(elapsed), target='<= %g s' % LIMIT,
        met=common.verdict(elapsed <= LIMIT))]
