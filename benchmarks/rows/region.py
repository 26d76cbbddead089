"""A simulated region losing five compute hosts at once: how host-evacuate
of their 100 instances scales with the number of hosts.

For N = 10, 25 and 50 compute hosts (``--quick``: 10 and 25), a fresh
region each time, as ``tools/cluster`` builds its control plane
(``nova.testing``): PostgreSQL (``pg_stat_statements`` preloaded),
RabbitMQ, one ``nova-api``, one ``nova-conductor``, and N
``nova-compute`` processes (``.venv/bin/nova-compute``), each with its own
``host``, ``state_path``, ``instances_path`` and node file of libvirt's
test driver (no QEMU, no libvirtd). 20 instances per host:

* the 100 instances of the five hosts that fail (``compute1`` ..
  ``compute5``) are booted through the REST API (``POST /servers`` with
  ``availability_zone ":computeK"``), so their rows, ports, image and
  disks are what a boot makes;
* the other (N - 5) x 20 are bystanders, never evacuated; they make the
  hosts and the database the size of a region. One on each host is
  booted through the REST API as above, so that each host has done what
  every host running instances has: the image is in its cache (with its
  overlay template), it has spawned a guest, bound a port and sent
  messages. The other 19 are written directly: instance rows in
  PostgreSQL (flavor columns, ``host_usage.audit`` counters, as
  ``benchmarks/placement.py`` does for SQLite) and running domains in
  each host's node file (``benchmarks/init_host.py``). With all 20
  written directly, each target's first evacuation fetched the image
  and made its template, opened its first AMQP connection for sending
  and compiled its SQL for the first time (about 40 ms of CPU more
  than a later one, measured): a cost of a fresh host, not of a region,
  that a region of more hosts paid more often (45 targets of about two
  evacuations each, against 5 of 20).

The services heartbeat at Nova's default ``report_interval`` (10 s) and
count a host down after its ``service_down_time`` (60 s), not at the test
cluster's 2 and 10 s (``ClusterSpec``): the failing hosts are forced down
through the API, so nothing here waits for a heartbeat to age, and a
region whose every host reported five times as often as a deployed one
would load its shared cores with a background no region has (at 50
hosts: 25 heartbeats a second, each a transaction).

Every service up (``GET /os-services``), the five hosts' nova-compute
processes get SIGKILL at once (a power loss), are forced down (``PUT
/os-services/{id}``, 2.53) and their host evacuations requested all at
once (``POST /os-host-evacuations``, one per host; the conductor chooses
the targets). Measured, per size:

* time from the last SIGKILL until ``GET /servers/detail`` (polled every
  100 ms, ``changes-since`` a second before the first kill: the servers
  the evacuations update, not the whole region) shows all 100 ACTIVE,
  with no task, on surviving hosts;
* per-evacuation latency: ``updated_at - created_at`` of each
  ``migrations`` row (type evacuation, status done), median and p95;
* per evacuation: database statements (sum of ``calls`` of
  ``pg_stat_statements``, BEGIN/COMMIT included), RabbitMQ messages
  received by the broker (``rabbit_global_counters:overview()``,
  ``messages_received_total``) and nova-conductor CPU seconds (utime +
  stime of ``/proc/<pid>/stat``). Each is counted from the first kill to
  the last instance landed, minus the background of the idle region
  (heartbeats, network agents, periodic tasks: its rate over a 10 s
  window measured just before, times the duration); both raw and net are
  printed;
* where the machine's CPU went, per evacuation and net of the idle
  region's as above: the whole machine's (``/proc/stat``: user, nice,
  system, irq and softirq; not what the hypervisor stole), and the
  surviving nova-compute processes' (with their children: ``qemu-img``).
  Every service shares this machine's two cores, so the latency follows
  the machine's CPU per evacuation; the targets' share is where a larger
  region pays more: each of its targets receives fewer evacuations, and
  pays the first one's costs (connections, the image, SQL compiled for
  the first time) for fewer;
* where each evacuation's time went: the phase marks (``nova.phases``)
  that the conductor, nova-api and the computes logged, per attempt (its
  own request id), as a phase table. The services log without debug,
  but for those marks (``nova.phases`` at debug), as the QEMU rows do.

The latency of a migration row starts when the conductor's host-evacuate
runner requests that attempt (at most ``[conductor]
host_evacuate_workers`` at a time), so it excludes the wait for a slot;
the time to all ACTIVE includes it.

Target: each per-evacuation figure (latency median, statements,
messages, conductor CPU) grows by at most 1.2x from the smallest to the
largest region: the cost of an evacuation does not follow the region's
size.

This VM's CPU is not steady: the same pure-Python loop takes from 0.39
to 0.71 s within a minute with nothing else running, and the conductor's
CPU for the same work per evacuation has been seen to double from one
region to the next. So a growth measured from one region of each size
says as much about the moment as about the size. The full run measures
the smallest and the largest sizes ``REPEATS`` times each, interleaved
(``schedule``: 10, 50, 25, 10, 50, 10, 50), and the growth lines compare
the medians over those runs of each figure; ``--quick`` runs each size
once. Before each region starts, a reference loop (``REFERENCE_LOOP``
iterations of integer arithmetic, in its own process) is timed: its CPU
seconds are printed with the region's figures, to show how fast the
machine was then. Nothing is scaled by it.
"""

import datetime
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid as uuid_mod

from rows import common

import init_host  # noqa: E402  (benchmarks/init_host.py)

from nova.cli import client as client_mod  # noqa: E402
from nova.testing import cluster  # noqa: E402
from nova.testing.cluster import config as cluster_config  # noqa: E402
from nova.testing.cluster import guest as cluster_guest  # noqa: E402
from nova.testing.cluster import services as cluster_services  # noqa: E402
from nova.testing import postgresql  # noqa: E402
from nova.testing import rabbitmq  # noqa: E402

PER_HOST = 20
# Nova's defaults (the test cluster's are 2 and 10 s).
REPORT_INTERVAL = 10
SERVICE_DOWN_TIME = 60
FAILED = 5
SIZES = (10, 25, 50)
QUICK_SIZES = (10, 25)
# Runs of the smallest and the largest size in a full run.
REPEATS = 3
REFERENCE_LOOP = 3000000
GROWTH_LIMIT = 1.2
BACKGROUND_S = 10.0
START_TIMEOUT = 900
BOOT_TIMEOUT = 600
EVACUATE_TIMEOUT = 900
POLL = 0.1
# The first mark of an evacuation attempt (nova/conductor/manager.py).
FIRST_MARK = 'conductor.received'
NETWORK = ('public', 'br-public', '10.10.0.0/20')
FLAVOR = ('1', 'm1.nano', 64)
IMAGE = 'bootsector'
COMPUTE_CONF = """[DEFAULT]
host = %(host)s
state_path = %(state)s
instances_path = %(instances)s
transport_url = %(transport)s
report_interval = %(report_interval)d
service_down_time = %(service_down_time)d
periodic_fuzzy_delay = 0
debug = false
default_log_levels = %(log_levels)s
log_file = %(log)s
use_stderr = false
[libvirt]
connection_uri = test://%(node)s
vif_driver = noop
[network]
bridges = %(bridge)s
events_api_url = %(api)s
events_api_token = %(token)s
[database]
connection = %(database)s
[image]
store_path = %(images)s
"""


def unavailable_reason():
    reason = cluster.control_plane_unavailable_reason()
    if reason:
        return reason
    if not os.path.exists(os.path.join(
            os.path.dirname(postgresql.BIN_DIR), 'lib',
            'pg_stat_statements.so')):
        return 'pg_stat_statements is not installed'
    if shutil.which('qemu-img') is None:
        return 'qemu-img is not installed (the image)'
    return None


class StatsPostgreSQL(postgresql.PostgreSQLServer):
    """The throwaway PostgreSQL with ``pg_stat_statements`` preloaded and
    room for the connections of N compute processes."""

    def _run(self, binary, *args):
        if binary == 'pg_ctl' and 'start' in args:
            args = list(args)
            at = args.index('-o') + 1
            args[at] += (' -c shared_preload_libraries=pg_stat_statements'
                         ' -c max_connections=1000')
        return super()._run(binary, *args)

    def sql(self, query):
        import psycopg2
        connection = psycopg2.connect(host='127.0.0.1', port=self.port,
                                      user=postgresql.OS_USER,
                                      dbname=postgresql.DATABASE)
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(query)
                return cursor.fetchall() if cursor.description else None
        finally:
            connection.close()


class Region:
    """A control plane and ``size`` compute processes in a temporary
    directory; ``stop()`` ends every process it started by its PID."""

    def __init__(self, size):
        self.size = size
        self.base = tempfile.mkdtemp(prefix='nova-bench-region-')
        # PostgreSQL runs as its own user: it must traverse the directory.
        os.chmod(self.base, 0o755)
        self.layout = cluster_config.Layout(self.base)
        self.spec = cluster_config.ClusterSpec(
            base_dir=self.base, hosts=size, network=NETWORK[0],
            bridge=NETWORK[1], network_cidr=NETWORK[2], flavor_id=FLAVOR[0],
            flavor_name=FLAVOR[1], flavor_memory_mb=FLAVOR[2],
            image_name=IMAGE, cpu_allocation_ratio=1000.0,
            # The phase marks without debug logging everywhere (as the
            # QEMU rows): 50 processes logging at debug slowed what this
            # row measures.
            debug=False, phase_marks=True,
            # Nova's defaults, not the test cluster's 2 and 10 s (see the
            # module docstring).
            report_interval=REPORT_INTERVAL,
            service_down_time=SERVICE_DOWN_TIME)
        self.ports = cluster_config.Ports(
            postgres=common.free_port(), rabbitmq=common.free_port(),
            rabbitmq_epmd=common.free_port(),
            rabbitmq_dist=common.free_port(), api=common.free_port())
        self.hosts = self.spec.host_names()
        self.failed = self.hosts[:FAILED]
        self.postgres = None
        self.rabbit = None
        self.api = None
        self.conductor = None
        self.computes = {}
        self.image_id = None
        self.network_id = None

    # -- up and down ---------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """Every nova process (SIGTERM by its record, SIGKILL after 15 s),
        RabbitMQ and PostgreSQL (by their recorded PIDs); the directory."""
        processes = list(self.computes.values()) + [
            p for p in (self.conductor, self.api) if p is not None]
        stoppers = [threading.Thread(target=p.stop) for p in processes]
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join()
        self.computes = {}
        self.api = self.conductor = None
        for server in (self.rabbit, self.postgres):
            if server is not None:
                try:
                    server.stop()
                except Exception as e:     # go on with the others
                    sys.stderr.write('stopping %s: %s\n' % (server, e))
        self.rabbit = self.postgres = None
        shutil.rmtree(self.base, ignore_errors=True)

    def start(self):
        for directory in (self.layout.etc, self.layout.logs,
                          self.layout.images, self.layout.guest,
                          self.layout.hosts, self.layout.controller_state):
            os.makedirs(directory, exist_ok=True)
        self.rabbit = rabbitmq.RabbitMQServer(
            self.layout.rabbitmq, self.ports.rabbitmq,
            epmd_port=self.ports.rabbitmq_epmd,
            dist_port=self.ports.rabbitmq_dist)
        self.postgres = StatsPostgreSQL(self.layout.postgres,
                                        port=self.ports.postgres)
        with open(self.layout.conf('controller'), 'w') as f:
            f.write(cluster_config.controller_conf(self.spec, self.layout,
                                                   self.ports))
        common.run_threads([self.rabbit.start, self._database])
        self._seed_bystanders()
        self.api = self._service('nova-api', self.layout.conf('controller'))
        self.conductor = self._service('nova-conductor',
                                       self.layout.conf('controller'))
        for host in self.hosts:
            self.computes[host] = self._service(
                'nova-compute', self._compute_conf(host), host)
        client = self.client()
        common.wait_until(self._api_answers, START_TIMEOUT,
                          'nova-api answers', alive=self.api.alive)
        common.wait_until(lambda: self._all_up(client), START_TIMEOUT,
                          '%d nova-compute up' % self.size,
                          alive=self._all_alive, interval=1.0)
        return self

    def _database(self):
        self.postgres.start()
        self.postgres.sql('CREATE EXTENSION pg_stat_statements')
        image = cluster_guest.write_image(
            os.path.join(self.layout.guest, 'bootsector.qcow2'))
        argv = [sys.executable, '-m', 'nova.testing.cluster.catalog',
                '--config-file', self.layout.conf('controller'),
                '--flavor', '%s:%s:%d' % FLAVOR,
                '--network', '%s:%s:%s' % NETWORK,
                '--image', '%s:%s' % (IMAGE, image)]
        result = subprocess.run(argv, capture_output=True, text=True,
                                timeout=300, cwd=common.TOP)
        if result.returncode != 0:
            raise RuntimeError('preparing the database failed:\n%s'
                               % result.stderr[-3000:])
        import json
        made = json.loads(result.stdout.strip().splitlines()[-1])
        self.image_id = made['image_id']
        self.network_id = made['network_id']

    def _seed_bystanders(self):
        """The hosts that do not fail: 20 idle instance rows each, their
        domains running in the host's node file."""
        from nova.db import api as db_api
        from nova.db import models
        from nova import objects
        from nova.objects import host_usage
        import sqlalchemy as sa
        flavor = objects.Flavor(FLAVOR[0], FLAVOR[1], FLAVOR[2], 1, 0)
        rows, by_host = [], {}
        for host in self.hosts:
            # The one more on each surviving host: boot_through_api.
            uuids = ([] if host in self.failed else
                     [str(uuid_mod.uuid4()) for _ in range(PER_HOST - 1)])
            by_host[host] = uuids
            rows += [{'uuid': u, 'host': host, 'node': host,
                      'vm_state': 'active', 'power_state': 1,
                      'display_name': 'bystander-%s' % u[:8],
                      'flavor': flavor.to_dict(),
                      'flavor_vcpus': flavor.vcpus,
                      'flavor_memory_mb': flavor.memory_mb,
                      'flavor_disk_gb': flavor.disk_gb, 'deleted': False}
                     for u in uuids]
        db_api.configure(self.postgres.url)
        try:
            with db_api.get_engine().begin() as connection:
                connection.execute(sa.insert(models.Instance.__table__)
                                   .values(rows))
            for host in self.hosts:
                if by_host[host]:
                    host_usage.audit(host)
        finally:
            db_api.dispose()
        for host, uuids in by_host.items():
            init_host._node_with_domains(self._node(host), uuids)

    def _node(self, host):
        return os.path.join(self.layout.state_path(host), 'node.xml')

    def _compute_conf(self, host):
        state = self.layout.state_path(host)
        os.makedirs(state, exist_ok=True)
        path = self.layout.conf(host)
        with open(path, 'w') as f:
            f.write(COMPUTE_CONF % {
                'host': host, 'state': state,
                'instances': os.path.join(state, 'instances'),
                'transport': cluster_config.transport_url(self.ports),
                'report_interval': self.spec.report_interval,
                'service_down_time': self.spec.service_down_time,
                'log': self.layout.log('nova-compute-' + host),
                'log_levels': cluster_config.phase_marks_log_levels(),
                'node': self._node(host), 'bridge': NETWORK[1],
                'api': cluster_config.api_url(self.ports),
                'token': cluster_config.ADMIN_TOKEN,
                'database': cluster_config.host_database_url(self.layout,
                                                             self.ports),
                'images': self.layout.images})
        return path

    def _service(self, binary, conf, host=None):
        log = self.layout.log(binary if host is None
                              else '%s-%s' % (binary, host))
        argv = [cluster_services.venv_bin(binary), '--config-file', conf]
        if host is None:
            argv += ['--log-file', log]
        return cluster_services.ServiceProcess.start(
            binary, argv, log + '.stdout')

    def _api_answers(self):
        try:
            self.client().get('/os-services')
        except (client_mod.ClientException, OSError):
            return False
        return True

    def _all_alive(self):
        return all(p.alive() for p in [self.api, self.conductor,
                                       *self.computes.values()])

    def _all_up(self, client):
        services = client.get('/os-services')['services']
        up = {s['host'] for s in services
              if s['binary'] == 'nova-compute' and s['state'] == 'up'}
        return up >= set(self.hosts)

    def client(self):
        client = client_mod.Client(cluster_config.api_url(self.ports),
                                   cluster_config.ADMIN_TOKEN, timeout=120)
        client.negotiate('2.53')
        return client

    # -- the counters --------------------------------------------------------

    def statements(self):
        return int(self.postgres.sql(
            'SELECT coalesce(sum(calls), 0) FROM pg_stat_statements')[0][0])

    def reset_statements(self):
        self.postgres.sql('SELECT pg_stat_statements_reset()')

    def messages(self):
        """Messages the broker received since it started."""
        result = self.rabbit._run(
            rabbitmq._which(rabbitmq.CTL), '-n', self.rabbit.nodename,
            'eval', 'rabbit_global_counters:overview().')
        found = re.search(r'messages_received_total\s*=>\s*(\d+)',
                          result.stdout)
        if found is None:
            raise RuntimeError('no messages_received_total in %r'
                               % result.stdout[:500])
        return int(found.group(1))

    def conductor_cpu(self):
        return common.cpu_seconds(self.conductor.popen.pid)

    def targets_cpu(self):
        """CPU seconds of the compute processes that do not fail (the
        evacuations' targets), with their children."""
        return sum(common.cpu_seconds(self.computes[host].popen.pid,
                                      children=True)
                   for host in self.hosts if host not in self.failed)

    def counters(self):
        return {'statements': self.statements(),
                'messages': self.messages(),
                'cpu': self.conductor_cpu(),
                'targets_cpu': self.targets_cpu(),
                'machine_cpu': common.machine_cpu_seconds(),
                'at': time.perf_counter()}

    # -- the scenario --------------------------------------------------------

    def boot_through_api(self, client):
        """20 servers on each host that will fail and one on each other
        host, through the API; the set of the failing hosts' servers."""
        failing, others = [], []
        for host in self.hosts:
            failed = host in self.failed
            for n in range(PER_HOST if failed else 1):
                body = {'server': {
                    'name': 'region-%s-%d' % (host, n),
                    'imageRef': self.image_id, 'flavorRef': FLAVOR[0],
                    'availability_zone': ':%s' % host,
                    'networks': [{'uuid': self.network_id}]}}
                uuid = client.post('/servers', body)['server']['id']
                (failing if failed else others).append(uuid)
        self.wait_active(client, failing + others, 'boot', BOOT_TIMEOUT,
                         interval=0.5)
        return set(failing)

    @staticmethod
    def wait_active(client, uuids, what, timeout, interval,
                    not_on=(), alive=None, changed_since=None):
        """Until every server of ``uuids`` is ACTIVE with no task, on a
        host not in ``not_on``; RuntimeError when one is in ERROR.

        ``changed_since`` (a UTC ``datetime``): list only the servers
        updated since (``changes-since``), so the observer's cost follows
        the servers it waits for, not the region's size: listing every
        server ten times a second took API CPU (and this process's) from
        the evacuations, more the larger the region.
        """
        pending = set(uuids)
        query = {'all_tenants': '1'}
        if changed_since is not None:
            query['changes-since'] = changed_since.strftime(
                '%Y-%m-%dT%H:%M:%S.%fZ')

        def all_active():
            for server in client.get('/servers/detail',
                                     query=query)['servers']:
                if server['id'] not in pending:
                    continue
                if server['status'] == 'ERROR':
                    raise RuntimeError('%s of %s failed: %s' % (
                        what, server['id'], server.get('fault')))
                if (server['status'] == 'ACTIVE'
                        and server.get('OS-EXT-STS:task_state') is None
                        and server.get('OS-EXT-SRV-ATTR:host')
                        not in not_on):
                    pending.discard(server['id'])
            return not pending
        common.wait_until(all_active, timeout, '%s of %d servers'
                          % (what, len(uuids)), interval=interval,
                          alive=alive)

    def fail_and_evacuate(self, client, uuids):
        """SIGKILL the failing hosts, force them down, host-evacuate them
        all at once; seconds from the last kill to all landed."""
        services = {s['host']: s for s in client.get('/os-services')[
            'services'] if s['binary'] == 'nova-compute'}
        victims = [self.computes[host] for host in self.failed]
        # Every server evacuated is updated after this (its task state).
        changed_since = (datetime.datetime.now(datetime.timezone.utc)
                         - datetime.timedelta(seconds=1))
        for proc in victims:
            proc.popen.send_signal(signal.SIGKILL)
        killed = time.perf_counter()
        for proc in victims:
            proc.popen.wait(timeout=30)
        for host in self.failed:
            client.put('/os-services/%s' % services[host]['id'],
                       {'forced_down': True})
        common.run_threads([
            (lambda host=host: client.post(
                '/os-host-evacuations', {'host_evacuation': {'host': host}}))
            for host in self.failed])
        self.wait_active(client, uuids, 'host-evacuate', EVACUATE_TIMEOUT,
                         interval=POLL, not_on=set(self.failed),
                         alive=self.conductor.alive,
                         changed_since=changed_since)
        return time.perf_counter() - killed

    def evacuation_traces(self, since):
        """The phase traces of the evacuations, from the marks every
        process logged (``nova.phases.parse_log_line``) after ``since``
        (``time.time()``): each attempt has a request id of its own."""
        return common.traces_in_logs(self.layout.logs, since, FIRST_MARK)

    def migration_latencies(self):
        rows = self.postgres.sql(
            "SELECT extract(epoch FROM updated_at - created_at), status "
            "FROM migrations WHERE migration_type = 'evacuation'")
        return [float(seconds) for seconds, status in rows
                if status in ('done', 'completed')], len(rows)


def reference_loop_seconds():
    """CPU seconds of a fixed loop of integer arithmetic in a new
    interpreter: how fast this machine runs Python right now."""
    code = ('import time\n'
            't = time.process_time()\n'
            's = 0\n'
            'for i in range(%d):\n'
            '    s += i * i\n'
            'print(time.process_time() - t)\n' % REFERENCE_LOOP)
    out = subprocess.run([sys.executable, '-c', code], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return float(out)


def schedule(sizes, repeats):
    """The order of the regions: the smallest and the largest size
    ``repeats`` times each, alternating, the others once in the middle
    (10, 50, 25, 10, 50, 10, 50)."""
    if repeats == 1:
        return list(sizes)
    ends = [sizes[0], sizes[-1]]
    return ends + list(sizes[1:-1]) + ends * (repeats - 1)


def measure(size):
    reference = reference_loop_seconds()
    with Region(size) as region:
        region.start()
        client = region.client()
        uuids = region.boot_through_api(client)
        # The idle region's background rate of each counter.
        region.reset_statements()
        idle = region.counters()
        time.sleep(BACKGROUND_S)   # a measurement window, not a wait
        after_idle = region.counters()
        region.reset_statements()
        before = region.counters()
        since = time.time()
        elapsed = region.fail_and_evacuate(client, uuids)
        after = region.counters()
        latencies, rows = region.migration_latencies()
        traces = region.evacuation_traces(since)
    count = len(uuids)
    if len(latencies) != count:
        raise RuntimeError('%d evacuation migrations done of %d (%d rows)'
                           % (len(latencies), count, rows))
    window = after_idle['at'] - idle['at']
    span = after['at'] - before['at']
    figures = {}
    for key in ('statements', 'messages', 'cpu', 'targets_cpu',
                'machine_cpu'):
        raw = after[key] - before[key]
        rate = (after_idle[key] - idle[key]) / window
        figures[key] = (raw / count, (raw - rate * span) / count,
                        rate)
    return {'size': size, 'count': count, 'elapsed': elapsed,
            'latencies': latencies, 'figures': figures, 'traces': traces,
            'reference': reference}


def _run_name(result):
    name = 'region %d hosts' % result['size']
    if result.get('runs', 1) > 1:
        name += ' (run %d of %d)' % (result['run'], result['runs'])
    return name


def size_line(result):
    f = result['figures']
    return common.Line(
        '%s: SIGKILL %d hosts, host-evacuate %d servers'
        % (_run_name(result), FAILED, result['count']),
        'all ACTIVE %s after last kill; per evacuation: latency %s; '
        'net (raw) %.0f (%.0f) SQL statements, %.0f (%.0f) AMQP messages, '
        'conductor CPU %s (%s)' % (
            common.seconds(result['elapsed']),
            common.spread(result['latencies']),
            f['statements'][1], f['statements'][0],
            f['messages'][1], f['messages'][0],
            common.seconds(f['cpu'][1]), common.seconds(f['cpu'][0])),
        'idle/s: %.0f stmts, %.0f msgs, %.2f cpu-s; reference loop %s' % (
            f['statements'][2], f['messages'][2], f['cpu'][2],
            common.seconds(result['reference'])),
        # The phases of the first run of each size: the others' are alike.
        phases=(common.phase_table(result['traces']) or None)
        if result.get('run', 1) == 1 else None)


def cpu_line(result):
    """Where the machine's CPU went per evacuation (net of the idle
    region, raw in brackets), and the idle region's rate."""
    f = result['figures']
    return common.Line(
        '%s: CPU per evacuation' % _run_name(result),
        'machine %s (%s), of which the %d target nova-compute %s (%s)' % (
            common.seconds(f['machine_cpu'][1]),
            common.seconds(f['machine_cpu'][0]),
            result['size'] - FAILED,
            common.seconds(f['targets_cpu'][1]),
            common.seconds(f['targets_cpu'][0])),
        'idle/s: machine %.2f cpu-s, targets %.2f cpu-s' % (
            f['machine_cpu'][2], f['targets_cpu'][2]))


def growth_lines(smallest, largest):
    """The growth of each figure from the runs of the smallest size to
    those of the largest: the median over the runs of each size."""
    def over(runs, figure):
        return statistics.median(figure(run) for run in runs)

    def both(figure):
        return over(smallest, figure), over(largest, figure)

    name = '%d -> %d hosts' % (smallest[0]['size'], largest[0]['size'])
    if len(smallest) > 1 or len(largest) > 1:
        name += ' (medians of %d and %d runs)' % (len(smallest),
                                                  len(largest))
    values = {
        'evacuation latency median': both(
            lambda r: statistics.median(r['latencies'])),
        'evacuation latency p95': both(
            lambda r: common.percentile(r['latencies'], 95)),
        'SQL statements/evacuation (net)': both(
            lambda r: r['figures']['statements'][1]),
        'AMQP messages/evacuation (net)': both(
            lambda r: r['figures']['messages'][1]),
        'conductor CPU/evacuation (net)': both(
            lambda r: r['figures']['cpu'][1]),
    }
    # What the latency follows on this machine: no target of their own.
    explaining = {
        'machine CPU/evacuation (net)': 'machine_cpu',
        'target computes CPU/evacuation (net)': 'targets_cpu',
    }
    for what, key in explaining.items():
        values[what] = both(lambda r, key=key: r['figures'][key][1])
    no_target = set(explaining) | {'reference loop (machine speed)'}
    values['reference loop (machine speed)'] = both(
        lambda r: r['reference'])
    lines = []
    for what, (small, large) in values.items():
        growth = common.ratio(large, small) if small > 0 else float('inf')
        show = (common.seconds
                if any(w in what for w in ('latency', 'CPU', 'loop'))
                else (lambda v: '%.1f' % v))
        target = ('-', common.NO_TARGET) if what in no_target else (
            'growth <= %g' % GROWTH_LIMIT,
            common.verdict(growth <= GROWTH_LIMIT))
        lines.append(common.Line(
            'region growth %s: %s' % (name, what),
            '%s -> %s' % (show(small), show(large)), show(small),
            '%.2fx' % growth, *target))
    return lines


def run(quick):
    reason = unavailable_reason()
    if reason:
        return [common.not_measured('region', reason)]
    sizes = QUICK_SIZES if quick else SIZES
    order = schedule(sizes, 1 if quick else REPEATS)
    runs = {size: order.count(size) for size in sizes}
    results: dict[int, list] = {size: [] for size in sizes}
    lines = []
    for size in order:
        result = measure(size)
        results[size].append(result)
        result.update(run=len(results[size]), runs=runs[size])
        lines.append(size_line(result))
        sys.stderr.write('%s: %s\n'
                         % (_run_name(result), lines[-1].project))
        lines.append(cpu_line(result))
    return lines + growth_lines(results[sizes[0]], results[sizes[-1]])
