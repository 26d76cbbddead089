"""One evacuation on the embedded default: from the request to the server
ACTIVE on its new host.

The in-process cloud of ``benchmarks/evacuate.py`` (``open_cloud``:
compute services on libvirt's test driver, conductor and compute API,
``inproc://`` RPC as in ``nova-all``, SQLite; the network backend answers
every plug at once). N instances (30; ``--quick``: 10) are booted on host
``a``; ``b`` comes up; ``a`` dies and is forced down. Then each instance,
one after the other, is evacuated over the REST API (``POST
/servers/<id>/action {"evacuate": {}}``, the conductor choosing the
target, as ``nova evacuate SERVER``) and timed by the client from the
request until ``GET /servers/<id>`` shows it ACTIVE on ``b`` with no task
(polled every 5 ms, so up to 5 ms is polling).

No baseline; target: median at most 0.1 s.
"""

import statistics
import time

from rows import common

import evacuate  # noqa: E402  (benchmarks/evacuate.py)

TARGET_S = 0.1


def evacuate_and_wait(client, uuid, target):
    started = time.perf_counter()
    client.post('/servers/%s/action' % uuid, {'evacuate': {}})

    def landed():
        server = client.get('/servers/%s' % uuid)['server']
        if server['status'] == 'ERROR':
            raise RuntimeError('evacuation of %s failed: %s'
                               % (uuid, server.get('fault')))
        return (server['status'] == 'ACTIVE'
                and server.get('OS-EXT-STS:task_state') is None
                and server.get('OS-EXT-SRV-ATTR:host') == target)
    common.wait_until(landed, evacuate.WAIT_SECONDS, 'evacuation of %s'
                      % uuid, interval=evacuate.POLL_SECONDS)
    return time.perf_counter() - started


def run(quick):
    count = 10 if quick else 30
    with evacuate.open_cloud(count) as cloud:
        cloud.start_compute('a')
        booted = [cloud.boot(n)[0] for n in range(count)]
        cloud.start_compute('b')
        cloud.start_conductor()
        cloud.kill('a')
        client = cloud.rest_client()
        times = [evacuate_and_wait(client, instance.uuid, 'b')
                 for instance in booted]
        # The API, the conductor and the computes ran in this process:
        # their marks of each evacuation are here (nova.phases).
        traces = common.traces_of('api.evacuate_received')
    median = statistics.median(times)
    return [common.Line(
        'evacuate one server, embedded, request -> ACTIVE on new host',
        common.spread(times), target='median <= %g s' % TARGET_S,
        met=common.verdict(median <= TARGET_S),
        phases=common.phase_table(traces))]
