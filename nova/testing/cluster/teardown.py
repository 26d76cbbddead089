"""Taking back a cluster's directory: what may be removed, and when.

``claim_directory`` marks a directory as a cluster's (``MARKER``);
``remove_files`` removes only what ``Cluster.up`` creates, and only in a
marked directory; ``reclaim`` stops and removes a cluster whose owner
died, from ``cluster.json`` and the hosts' own records alone, signalling
each process only if its PID still has the recorded start time.

Example::

    reclaim('/tmp/nova-cluster')     # ClusterBusy if a live owner has it
"""

import os
import shutil

from oslo_log import log as logging

from nova.testing.cluster import config as cluster_config
from nova.testing.cluster import net as cluster_net
from nova.testing.cluster import record as cluster_record
from nova.testing.cluster import services as cluster_services
from nova.testing import hostrecord
from nova.testing import postgresql
from nova.testing import procs
from nova.testing import rabbitmq

LOG = logging.getLogger(__name__)

ClusterError = cluster_services.ClusterError

# What up() creates under base_dir, and so what down() removes.
_CREATED = ('cluster.json', 'control.sock', 'supervisor.log', 'etc',
            'logs', 'postgres', 'rabbitmq', 'images', 'guest', 'hosts',
            'instances', 'storage', 'controller', 'keystone', 'masakari',
            'glance', 'mgmt')
MARKER = '.nova-cluster'


class ClusterBusy(ClusterError):
    """Another live process owns the cluster in that directory."""


def claim_directory(base_dir):
    """Make ``base_dir`` a cluster directory, or refuse to.

    A directory that exists, holds anything and has no ``MARKER`` is not
    ours: up() would write into it and down() remove parts of it, so it is
    refused. The marker is what lets ``remove_files`` delete anything.
    """
    marker = os.path.join(base_dir, MARKER)
    if os.path.isdir(base_dir) and not os.path.exists(marker) and \
            os.listdir(base_dir):
        raise ClusterError('%s is not empty and was not made by '
                           'tools/cluster; choose another --dir' % base_dir)
    os.makedirs(base_dir, exist_ok=True)
    with open(marker, 'w') as f:
        f.write('made by nova.testing.cluster; tools/cluster down removes '
                'this directory\n')


def remove_namespaces(spec_or_tag):
    tag = getattr(spec_or_tag, 'tag', spec_or_tag)
    for name in cluster_net.existing('nvc%s-' % tag):
        cluster_net.NetworkNamespace(name).delete()


def remove_files(layout, keep=()):
    """Remove what up() creates under base_dir (but the names in
    ``keep``), then base_dir if it is empty. Nothing at all without the
    directory's ``MARKER``: a directory up() never claimed is not ours."""
    marker = os.path.join(layout.base_dir, MARKER)
    if not os.path.exists(marker):
        if os.path.isdir(layout.base_dir):
            LOG.warning('%s has no %s: not removing anything there',
                        layout.base_dir, MARKER)
        return
    for name in _CREATED:
        if name in keep:
            continue
        path = os.path.join(layout.base_dir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    if not keep and os.listdir(layout.base_dir) == [MARKER]:
        os.unlink(marker)
        os.rmdir(layout.base_dir)


def reclaim(base_dir):
    """Stop and remove a cluster in ``base_dir`` whose owner is gone.

    Works from ``cluster.json`` and the hosts' own records alone: every
    process is signalled only if its PID still has the recorded start
    time. Raises ``ClusterBusy`` when a live process still owns it.
    Returns True when there was something to reclaim.
    """
    layout = cluster_config.Layout(os.path.abspath(base_dir))
    record = None
    if os.path.exists(layout.record):
        try:
            record = cluster_record.ClusterRecord.load(layout.record)
        except (OSError, ValueError, TypeError, KeyError) as e:
            LOG.warning('Unreadable %s (%s); cleaning up without it',
                        layout.record, e)
    if record is not None and record.owner.alive():
        raise ClusterBusy('the cluster in %s is owned by running process '
                          '%d; stop it with tools/cluster down'
                          % (base_dir, record.owner.pid))
    found = record is not None
    hosts_dir = layout.hosts
    if os.path.isdir(hosts_dir):
        for name in sorted(os.listdir(hosts_dir)):
            found |= _stop_recorded_host(os.path.join(hosts_dir, name))
    if record is not None:
        for entry in record.hosts:
            for proc in entry.processes.values():
                procs.terminate(proc, 10)
        for role in ('nova-hamonitor', 'nova-api', 'nova-conductor',
                     'keystone'):
            proc = record.processes.get(role)
            if proc is not None:
                procs.terminate(proc, 10)
        _stop_recorded_rabbit(layout, record)
        _stop_recorded_postgres(layout, record)
    tag = cluster_config.ClusterSpec(base_dir=layout.base_dir).tag
    found |= bool(cluster_net.existing('nvc%s-' % tag))
    remove_namespaces(tag)
    found |= os.path.exists(os.path.join(layout.base_dir, MARKER))
    remove_files(layout)
    if found:
        LOG.warning('Reclaimed a cluster left in %s', base_dir)
    return found


def _stop_recorded_host(tree):
    path = os.path.join(tree, 'harness.json')
    try:
        with open(path) as f:
            state = hostrecord.HostState.from_json(f.read())
    except (OSError, ValueError, TypeError, KeyError):
        return False
    if state.owner.alive() and state.owner.pid != os.getpid():
        raise ClusterBusy('host %s is owned by running process %d'
                          % (state.name, state.owner.pid))
    hostrecord.stop_state(state, timeout=10)
    hostrecord.forget(state)
    return bool(state.processes)


def _stop_recorded_rabbit(layout, record):
    beam = record.processes.get('rabbitmq')
    epmd = record.processes.get('epmd')
    ports = record.ports
    if beam is not None and beam.alive():
        server = rabbitmq.RabbitMQServer(
            layout.rabbitmq, ports['rabbitmq'],
            epmd_port=ports['rabbitmq_epmd'],
            dist_port=ports['rabbitmq_dist'], nodename=record.rabbitmq_node)
        server.started = True
        server.beam = beam
        server.epmd = epmd if epmd is not None and epmd.alive() else None
        server.stop()
    if epmd is not None:
        procs.terminate(epmd, 10)


def _stop_recorded_postgres(layout, record):
    pg = record.processes.get('postgres')
    if pg is None or not pg.alive():
        return
    server = postgresql.PostgreSQLServer(layout.postgres,
                                         port=record.ports['postgres'])
    server.pid = pg.pid
    server.stop()
