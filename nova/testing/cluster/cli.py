"""``tools/cluster``: a real multi-host cluster on this machine, by hand.

    tools/cluster up N [--shared-storage HOST,HOST ...] [--dir DIR]
    tools/cluster status [--json]
    tools/cluster fail HOST
    tools/cluster fence HOST
    tools/cluster revive HOST [--crash-point NAME] [--no-wait]
    tools/cluster restart-compute HOST [--crash-point NAME] [--no-wait]
    tools/cluster wait-exit HOST [--timeout S]
    tools/cluster mount-shared HOST GROUP
    tools/cluster unmount-shared HOST
    tools/cluster partition HOST
    tools/cluster heal HOST
    tools/cluster restart-libvirtd HOST
    tools/cluster down

``up`` starts a supervisor process that owns the cluster (its hosts'
namespaces stop themselves if it dies) and returns once every service
answers; ``fail``, ``fence``, ``revive``, ``restart-compute``, ``wait-exit``,
``mount-shared``, ``unmount-shared``, ``partition``, ``heal``,
``restart-libvirtd`` and ``down`` are requests to it over
a Unix socket (``DIR/control.sock``), one line of JSON each way.
``status`` reads ``DIR/cluster.json`` and asks each piece itself.
``fence`` is the cluster's fence agent (nova-hamonitor's ``[ha]
fence_command`` with ``up --hamonitor``): it powers the host off as
``fail`` does, and succeeds (exit 0) on a host that is off already.
``down`` also works when the supervisor has died: it stops what the
record names, by PID.

The directory is ``--dir``, else ``$NOVA_CLUSTER_DIR``, else
``/tmp/nova-cluster``.
"""

import argparse
import json
import logging as py_logging
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time

from nova.testing import cluster as cluster_mod
from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import record as cluster_record
from nova.testing.cluster import status as cluster_status
from nova.testing import procs

DEFAULT_DIR = '/tmp/nova-cluster'
UP_TIMEOUT = 600
REQUEST_TIMEOUT = 300


def _base_dir(args):
    return os.path.abspath(args.dir or os.environ.get('NOVA_CLUSTER_DIR')
                           or DEFAULT_DIR)


def _spec_from_args(args):
    return cluster_config.ClusterSpec(
        base_dir=_base_dir(args), hosts=args.hosts,
        shared_groups=tuple(cluster_config.parse_group(g)
                            for g in args.shared_storage),
        vif_plugging_timeout=args.vif_plugging_timeout,
        hosts_without_leases=tuple(
            name for group in args.no_disk_leases
            for name in cluster_config.parse_group(group)),
        reap_orphans_interval=args.reap_orphans_interval,
        keystone=args.keystone or args.glance, glance=args.glance,
        masakari=args.masakari, hamonitor=args.hamonitor,
        fence_agent=not args.no_fence_agent)


def _load(base_dir):
    path = cluster_config.Layout(base_dir).record
    if not os.path.exists(path):
        return None
    return cluster_record.ClusterRecord.load(path)


def describe_exit(last_exit):
    """``last_exit`` of a host entry, in words."""
    if not last_exit:
        return 'never ended (it was never started)'
    how = ('killed by %s' % last_exit['signal'] if last_exit['signal']
           else 'exited with status %d' % last_exit['returncode'])
    text = '(pid %d) %s: %s' % (last_exit['pid'], how, last_exit['cause'])
    if last_exit.get('crash_point'):
        text += ' %s' % last_exit['crash_point']
    return text


def request(base_dir, command, timeout=REQUEST_TIMEOUT, **arguments):
    """Send one request to the supervisor; its JSON answer."""
    path = cluster_config.Layout(base_dir).control_socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(json.dumps(dict(arguments, command=command)).encode()
                     + b'\n')
        answer = sock.makefile('rb').readline()
    if not answer:
        raise cluster_mod.ClusterError('the supervisor closed the '
                                       'connection without answering')
    return json.loads(answer)


# -- the supervisor -----------------------------------------------------------

class Supervisor:
    """Owns one cluster and serves requests on its control socket.

    ``Supervisor(spec)`` builds the cluster, and ``serve()`` brings it
    down at its end. ``Supervisor(cluster=c)`` serves a cluster the
    caller owns (a test's, so that its nova-hamonitor's fence agent,
    ``tools/cluster fence``, reaches it) and leaves it up: ``stop()``
    ends the serving."""

    def __init__(self, spec=None, cluster=None):
        self.owns = cluster is None
        self.cluster = cluster or cluster_mod.Cluster(spec)
        self.layout = self.cluster.layout
        self.stopping = threading.Event()
        self._thread = None

    def serve_in_thread(self) -> 'Supervisor':
        self._thread = threading.Thread(target=self.serve, daemon=True,
                                        name='cluster-control')
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=REQUEST_TIMEOUT)

    def handle(self, message):
        command = message.get('command')
        host = message.get('host')
        cluster = self.cluster
        if command == 'fail':
            cluster.fail(host)
            return 'host %s failed' % host
        if command == 'fence':
            # Powering off a host that is off is a fence agent's success.
            if cluster.fence(host):
                return 'host %s fenced: powered off' % host
            return 'host %s fenced: it was off already' % host
        if command in ('revive', 'restart-compute'):
            start = (cluster.revive if command == 'revive'
                     else cluster.restart_compute)
            died = start(host, wait=message.get('wait', True),
                         crash_point=message.get('crash_point'))
            done = ('host %s revived' % host if command == 'revive'
                    else 'nova-compute of %s restarted' % host)
            if message.get('crash_point'):
                done += ' with crash point %s' % message['crash_point']
            if died is not None:
                done += '; it ended before it was up: %s' % describe_exit(
                    died)
            return done
        if command == 'wait-exit':
            died = cluster.wait_for_compute_exit(
                host, timeout=message.get('wait_timeout',
                                          REQUEST_TIMEOUT - 10))
            return 'nova-compute of %s %s' % (host, describe_exit(died))
        if command == 'mount-shared':
            cluster.mount_shared(host, message['group'])
            entry = cluster.record.host(host)
            return 'host %s now has %s at %s' % (host, entry.storage_dir,
                                                 entry.instances_path)
        if command == 'unmount-shared':
            mount = cluster.unmount_shared(host)
            return 'host %s: unmounted %s; it has %s again' % (
                host, mount['source'], mount['covers'])
        if command == 'stop-compute':
            cluster.stop_compute(host)
            return ('nova-compute of %s stopped; libvirtd and the guests '
                    'run on' % host)
        if command == 'partition':
            cluster.partition(host)
            return ('host %s partitioned: its nova-compute is stopped, its '
                    'guests run on' % host)
        if command == 'heal':
            cluster.heal(host)
            return 'host %s healed: its nova-compute goes on' % host
        if command == 'restart-libvirtd':
            cluster.restart_libvirtd(host)
            return 'libvirtd of %s restarted' % host
        if command == 'down':
            if not self.owns:
                raise cluster_mod.ClusterError(
                    'this cluster belongs to the process that brought it '
                    'up, which brings it down')
            self.stopping.set()
            return 'stopping'
        if command == 'ping':
            return 'pong'
        raise cluster_mod.ClusterError('unknown command %r' % command)

    def serve(self):
        path = self.layout.control_socket
        # Bound and listening under another name, then renamed into place:
        # whoever waits for the path (procs.wait_for_path) must find it
        # accepting, never bound but not listening yet (refused).
        staging = path + '.new'
        for stale in (path, staging):
            if os.path.exists(stale):
                os.unlink(stale)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(staging)
        os.chmod(staging, 0o600)
        server.listen(8)
        os.rename(staging, path)
        server.settimeout(0.5)
        down_requests = []
        try:
            while not self.stopping.is_set():
                try:
                    conn, _ = server.accept()
                except socket.timeout:
                    continue
                conn.settimeout(REQUEST_TIMEOUT)
                message = {}
                try:
                    line = conn.makefile('rb').readline()
                    message = json.loads(line or b'{}')
                    if message.get('command') == 'wait-exit':
                        # It may wait long: other requests go on meanwhile.
                        threading.Thread(target=self._serve_one,
                                         args=(conn, message),
                                         daemon=True).start()
                        continue
                    answer = {'ok': True, 'message': self.handle(message)}
                except Exception as e:
                    py_logging.exception('request failed')
                    answer = {'ok': False, 'error': str(e)}
                if message.get('command') == 'down' and answer['ok']:
                    down_requests.append(conn)      # answered when down
                    continue
                self._answer(conn, answer)
        finally:
            server.close()
            if os.path.exists(path):
                os.unlink(path)
            if self.owns:
                self._down(down_requests)

    def _down(self, down_requests):
        """Bring the cluster down, then answer who asked for it."""
        try:
            self.cluster.down()
            final = {'ok': True, 'message': 'cluster down'}
        except Exception as e:
            py_logging.exception('down failed')
            final = {'ok': False, 'error': str(e)}
        for conn in down_requests:
            self._answer(conn, final)

    def _serve_one(self, conn, message):
        try:
            answer = {'ok': True, 'message': self.handle(message)}
        except Exception as e:
            py_logging.exception('request failed')
            answer = {'ok': False, 'error': str(e)}
        self._answer(conn, answer)

    @staticmethod
    def _answer(conn, answer):
        try:
            conn.sendall(json.dumps(answer).encode() + b'\n')
        except OSError:
            pass
        conn.close()


def serve_argv(spec) -> list:
    """The command line of the supervisor (``serve``) that builds
    ``spec``'s cluster."""
    argv = [sys.executable, '-m', 'nova.testing.cluster.cli', '--dir',
            spec.base_dir, 'serve', str(spec.hosts),
            '--vif-plugging-timeout', str(spec.vif_plugging_timeout)]
    for group in spec.shared_groups:
        argv += ['--shared-storage', ','.join(group)]
    if spec.hosts_without_leases:
        argv += ['--no-disk-leases', ','.join(spec.hosts_without_leases)]
    argv += ['--reap-orphans-interval', str(spec.reap_orphans_interval)]
    if spec.keystone:
        argv.append('--keystone')
    if spec.masakari:
        argv.append('--masakari')
    if spec.hamonitor:
        argv.append('--hamonitor')
    if not spec.fence_agent:
        argv.append('--no-fence-agent')
    if spec.glance:
        argv.append('--glance')
    return argv


def _serve_main(args):
    spec = _spec_from_args(args)
    report = sys.stdout
    try:
        cluster_mod.reclaim(spec.base_dir)
        cluster_mod.claim_directory(spec.base_dir)
    except cluster_mod.ClusterError as e:
        report.write(json.dumps({'ok': False, 'error': str(e)}) + '\n')
        return 1
    log = os.open(cluster_config.Layout(spec.base_dir).supervisor_log,
                  os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 2)
    os.close(log)
    py_logging.basicConfig(
        level=py_logging.INFO, stream=sys.stderr,
        format='%(asctime)s %(process)d %(levelname)s %(name)s %(message)s')
    supervisor = Supervisor(spec)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: supervisor.stopping.set())
    try:
        supervisor.cluster.up(reclaim_first=False)
    except Exception as e:
        py_logging.exception('up failed')
        report.write(json.dumps({'ok': False, 'error': str(e)}) + '\n')
        report.flush()
        return 1
    report.write(json.dumps({'ok': True}) + '\n')
    report.flush()
    # The caller stops reading once told: nothing more goes to the pipe.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    supervisor.serve()
    return 0


# -- the commands -------------------------------------------------------------

def _up(args):
    base_dir = _base_dir(args)
    spec = _spec_from_args(args)
    record = _load(base_dir)
    if record is not None and record.owner.alive():
        hosts = [h.name for h in record.hosts]
        if record.state == 'up' and hosts == spec.host_names():
            print('cluster already up in %s' % base_dir)
            return _status(args)
        print('a cluster in %s is %s with hosts %s; run down first'
              % (base_dir, record.state, ', '.join(hosts)), file=sys.stderr)
        return 1
    argv = serve_argv(spec)
    began = time.monotonic()
    supervisor = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE,
                                  start_new_session=True)
    ready, _, _ = select.select([supervisor.stdout], [], [], UP_TIMEOUT)
    line = supervisor.stdout.readline() if ready else b''
    supervisor.stdout.close()
    try:
        answer = json.loads(line or b'{}')
    except ValueError:
        answer = {}
    if not answer.get('ok'):
        supervisor.wait(timeout=UP_TIMEOUT)
        print('up failed: %s' % answer.get(
            'error', 'the supervisor exited with status %s'
            % supervisor.returncode), file=sys.stderr)
        return 1
    print('cluster up in %s in %.1f s (cluster.json: %s)'
          % (base_dir, time.monotonic() - began,
             cluster_config.Layout(base_dir).record))
    return _status(args)


def _status(args):
    base_dir = _base_dir(args)
    try:
        lines = cluster_status.gather(base_dir)
    except cluster_mod.ClusterError as e:
        print(str(e), file=sys.stderr)
        return 1
    if getattr(args, 'json', False):
        print(json.dumps([vars(line) for line in lines], indent=1))
    else:
        print(cluster_status.format_table(lines))
    return 0


def _host_request(args, command):
    base_dir = _base_dir(args)
    record = _load(base_dir)
    if record is None or not record.owner.alive():
        print('no running cluster in %s' % base_dir, file=sys.stderr)
        return 1
    arguments = {'host': args.host}
    if getattr(args, 'crash_point', None):
        arguments['crash_point'] = args.crash_point
    if getattr(args, 'no_wait', False):
        arguments['wait'] = False
    if getattr(args, 'group', None):
        arguments['group'] = args.group
    timeout = REQUEST_TIMEOUT
    if getattr(args, 'timeout', None) is not None:
        arguments['wait_timeout'] = args.timeout
        timeout = args.timeout + 10
    answer = request(base_dir, command, timeout=timeout, **arguments)
    if not answer.get('ok'):
        print('%s failed: %s' % (command, answer.get('error')),
              file=sys.stderr)
        return 1
    print(answer['message'])
    return 0


def _down(args):
    base_dir = _base_dir(args)
    began = time.monotonic()
    record = _load(base_dir)
    if record is not None and record.owner.alive():
        try:
            answer = request(base_dir, 'down')
            if not answer.get('ok'):
                print('down: %s' % answer.get('error'), file=sys.stderr)
        except (OSError, ValueError, cluster_mod.ClusterError) as e:
            print('supervisor did not answer (%s); terminating it' % e,
                  file=sys.stderr)
        # It exits once down; SIGTERM (then SIGKILL) if it does not.
        deadline = time.monotonic() + 60
        while record.owner.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        procs.terminate(record.owner, 30)
    found = cluster_mod.reclaim(base_dir)
    if record is None and not found:
        print('no cluster in %s' % base_dir)
        return 0
    print('cluster in %s down in %.1f s' % (base_dir,
                                            time.monotonic() - began))
    return 0


def _parser():
    parser = argparse.ArgumentParser(
        prog='tools/cluster', description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--dir', help='cluster directory (default: '
                        '$NOVA_CLUSTER_DIR or %s)' % DEFAULT_DIR)
    commands = parser.add_subparsers(dest='command', required=True,
                                     metavar='COMMAND')
    for name in ('up', 'serve'):
        sub = commands.add_parser(
            name, help='bring up N compute hosts and the controller'
            if name == 'up' else argparse.SUPPRESS)
        sub.add_argument('hosts', type=int, metavar='N')
        sub.add_argument('--shared-storage', action='append', default=[],
                         metavar='GROUP',
                         help='comma-separated hosts sharing one instances '
                              'directory (e.g. compute2,compute3); '
                              'repeatable')
        sub.add_argument('--vif-plugging-timeout', type=int, default=20,
                         help='seconds a host waits for '
                              'network-vif-plugged (default 20)')
        sub.add_argument('--no-disk-leases', action='append', default=[],
                         metavar='HOSTS',
                         help='comma-separated hosts whose libvirt runs '
                              'without a lock manager (no virtlockd, no '
                              'disk leases); repeatable')
        sub.add_argument('--keystone', action='store_true',
                         help='a Keystone of the cluster\'s own '
                              'authenticates the API (clouds.yaml in '
                              'etc/, named in cluster.json); noauth2 '
                              'otherwise')
        sub.add_argument('--masakari', action='store_true',
                         help='Masakari (masakari-api and -engine) behind '
                              'the cluster\'s Keystone, with a failover '
                              'segment "cluster" of every compute host; '
                              'needs --keystone')
        sub.add_argument('--hamonitor', action='store_true',
                         help='run nova-hamonitor on the controller, '
                              'fencing with tools/cluster fence')
        sub.add_argument('--no-fence-agent', action='store_true',
                         help='with --hamonitor: no fence agent ([ha] '
                              'fence_command unset), so the monitor '
                              'recovers only hosts whose disk leases '
                              'guard them, and alerts for the others')
        sub.add_argument('--glance', action='store_true',
                         help='a real Glance behind the cluster\'s '
                              'Keystone (implies --keystone) is where '
                              'images come from; the local image store '
                              'otherwise')
        sub.add_argument('--reap-orphans-interval', type=int, default=600,
                         metavar='S',
                         help='the compute hosts\' reap_orphans_interval '
                              '(default 600, nova\'s): how soon a healed '
                              'host stops what was evacuated away')
    status = commands.add_parser('status', help='every piece, its PID and '
                                 'whether it answers')
    status.add_argument('--json', action='store_true')
    from nova import crashpoint
    for name, text in (
            ('fail', 'kill a host as a power loss would'),
            ('fence', 'power a host off as fail does, as a fence agent '
                      'would; success when it is off already'),
            ('revive', 'boot a failed host again'),
            ('restart-compute', 'stop a host\'s nova-compute and start it '
                                'again (the guests keep running)'),
            ('stop-compute', 'stop a host\'s nova-compute alone (libvirtd '
                             'and the guests run on; restart-compute '
                             'starts it)'),
            ('wait-exit', 'wait until a host\'s nova-compute has exited '
                          'and say how'),
            ('mount-shared', 'mount a storage group over a host\'s '
                             'instances_path, as a late NFS mount'),
            ('unmount-shared', 'undo the newest mount-shared of a host'),
            ('partition', 'cut a host off the control plane: its '
                          'nova-compute stopped (SIGSTOP), its libvirtd out '
                          'of the controller\'s reach; its guests run on'),
            ('heal', 'end a partition: the host\'s nova-compute goes on '
                     '(SIGCONT), never restarted'),
            ('restart-libvirtd', 'restart a host\'s libvirtd alone (guests '
                                 'and leases stay)')):
        sub = commands.add_parser(name, help=text)
        sub.add_argument('host', metavar='HOST')
        if name in ('revive', 'restart-compute'):
            sub.add_argument(
                '--crash-point', metavar='NAME',
                choices=sorted(crashpoint.POINTS),
                help='this nova-compute run SIGKILLs itself there '
                     '([fault_injection] crash_point): one of %s'
                     % ', '.join(crashpoint.POINTS))
            sub.add_argument('--no-wait', action='store_true',
                             help='return once it is started, not once '
                                  'it heartbeats (or died at its crash '
                                  'point)')
        elif name == 'wait-exit':
            sub.add_argument('--timeout', type=float, default=120.0,
                             help='seconds to wait at most (default 120)')
        elif name == 'mount-shared':
            sub.add_argument('group', metavar='GROUP',
                             help='a storage group (shared1, ...) or a host '
                                  'whose storage to mount')
    commands.add_parser('down', help='stop everything, remove every file')
    return parser


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == 'serve':
            return _serve_main(args)
        if args.command == 'up':
            return _up(args)
        if args.command == 'status':
            return _status(args)
        if args.command in ('fail', 'fence', 'revive', 'restart-compute',
                            'stop-compute', 'wait-exit', 'mount-shared',
                            'unmount-shared', 'partition', 'heal',
                            'restart-libvirtd'):
            return _host_request(args, args.command)
        return _down(args)
    except (cluster_mod.ClusterError, cluster_config.SpecError) as e:
        print('%s: %s' % (args.command, e), file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
