"""``tools/cluster status``: every piece, its PID, and whether it answers.

Built from ``cluster.json`` and the pieces themselves, never from the
owner's memory, so it works from any process and also describes a cluster
whose owner died (its pieces then show as not running).

Example::

    for line in gather(base_dir):
        print(line.piece, line.pid, line.running, line.answers)
"""

import dataclasses
import os

from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import net as cluster_net
from nova.testing.cluster import record as cluster_record
from nova.testing.cluster import services as cluster_services
from nova.testing import hostrecord


@dataclasses.dataclass
class StatusLine:
    piece: str
    pid: str = '-'
    running: bool | None = None
    # True/False from a probe, or a word ('up', 'down') from the API.
    answers: object = None
    detail: str = ''

    def cells(self):
        def word(value):
            if value is None:
                return '-'
            if isinstance(value, bool):
                return 'yes' if value else 'NO'
            return str(value)
        return [self.piece, self.pid, word(self.running),
                word(self.answers), self.detail]


def _proc_line(piece, record, answers=None, detail=''):
    if record is None:
        return StatusLine(piece, '-', False, answers, detail or
                          'not recorded')
    return StatusLine(piece, str(record.pid), record.alive(), answers,
                      detail)


def _service_states(record):
    client = cluster_services.ApiClient(record.api_url, record.api_token)
    try:
        return {(s['host'], s['binary']): s['state']
                for s in client.services()}
    except (OSError, ValueError, KeyError, cluster_services.ClusterError):
        return None


def gather(base_dir):
    """Status lines of the cluster in ``base_dir`` (ClusterError if none)."""
    layout = cluster_config.Layout(os.path.abspath(base_dir))
    if not os.path.exists(layout.record):
        raise cluster_services.ClusterError('no cluster in %s' % base_dir)
    record = cluster_record.ClusterRecord.load(layout.record)
    ports = record.ports
    lines = [_proc_line('owner', record.owner, detail='state ' +
                        record.state)]
    pg = record.processes.get('postgres')
    lines.append(_proc_line(
        'postgres', pg, cluster_services.postgres_answers(
            ports['postgres'], layout.postgres) if pg else None,
        record.database_url))
    rabbit = record.processes.get('rabbitmq')
    lines.append(_proc_line(
        'rabbitmq', rabbit, cluster_services.amqp_answers(ports['rabbitmq'])
        if rabbit else None, record.transport_url))
    if 'epmd' in record.processes:
        lines.append(_proc_line('rabbitmq/epmd', record.processes['epmd'],
                                detail='port %d' % ports['rabbitmq_epmd']))
    if 'keystone' in record.processes:
        lines.append(_proc_line('keystone', record.processes['keystone'],
                                detail='%s, clients: %s' % (
                                    record.keystone_url,
                                    record.clouds_yaml)))
    api = record.processes.get('nova-api')
    client = cluster_services.ApiClient(record.api_url, record.api_token)
    lines.append(_proc_line('nova-api', api,
                            client.answers() if api else None,
                            record.api_url))
    states = _service_states(record) if api else None

    def state(host, binary):
        if states is None:
            return None
        return states.get((host, binary), 'no record')

    lines.append(_proc_line(
        'nova-conductor', record.processes.get('nova-conductor'),
        state(cluster_config.CONTROLLER_HOST, 'nova-conductor')))
    for host in record.hosts:
        lines.extend(_host_lines(host, record, state))
    return lines


def _host_lines(host, record, state):
    name = host.name
    lines = []
    for role in ('holder', 'virtlogd', 'virtlockd', 'libvirtd',
                 'nova-compute'):
        if role == 'virtlockd' and not host.lock_manager:
            continue
        proc = host.processes.get(role)
        answers = None
        detail = ''
        if role == 'virtlockd':
            detail = 'disk leases (lock_manager = "lockd")'
        elif role == 'libvirtd' and proc is not None:
            answers = cluster_services.libvirt_answers(host.libvirt_uri)
            detail = host.libvirt_uri
        elif role == 'nova-compute':
            answers = state(name, 'nova-compute')
            detail = 'host state %s' % host.state
            crash_point = host.compute_overrides.get(
                'fault_injection', {}).get('crash_point')
            if crash_point:
                detail += '; crash point %s' % crash_point
            if host.last_exit:
                exit_ = host.last_exit
                detail += '; last exit: pid %d %s (%s%s)' % (
                    exit_['pid'], exit_['signal'] or 'status %d'
                    % exit_['returncode'], exit_['cause'],
                    ' ' + exit_['crash_point'] if exit_.get('crash_point')
                    else '')
        lines.append(_proc_line('%s/%s' % (name, role), proc, answers,
                                detail))
    try:
        with open(os.path.join(host.tree, 'harness.json')) as f:
            qemu = hostrecord.qemu_pids(hostrecord.HostState.from_json(
                f.read()))
    except (OSError, ValueError, TypeError, KeyError):
        qemu = []
    lines.append(StatusLine('%s/qemu' % name,
                            ','.join(map(str, qemu)) or '-',
                            True if qemu else None, None,
                            '%d guest(s) running' % len(qemu)))
    ns = cluster_net.NetworkNamespace(host.netns)
    if ns.exists():
        detail = 'bridge %s %s; taps %s; storage %s' % (
            record.bridge, 'present' if ns.has_bridge(record.bridge)
            else 'MISSING', ns.taps() or 'none', host.storage_dir)
        if host.mounts:
            detail += ' (mounted over %s)' % ', '.join(
                m['covers'] for m in host.mounts)
        lines.append(StatusLine('%s/netns' % name, '-', True, None,
                                '%s: %s' % (host.netns, detail)))
    else:
        lines.append(StatusLine('%s/netns' % name, '-', False, None,
                                host.netns))
    return lines


def format_table(lines):
    rows = [['PIECE', 'PID', 'RUNNING', 'ANSWERS', 'DETAIL']]
    rows += [line.cells() for line in lines]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return '\n'.join('  '.join(cell.ljust(w) for cell, w in
                               zip(row[:4], widths)) + '  ' + row[4]
                     for row in rows)
