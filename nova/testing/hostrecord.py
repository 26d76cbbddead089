"""What a simulated host started, and stopping it from that record alone.

A ``HostState`` lists the processes a ``LibvirtHost`` started (PID and
kernel start time) and the inode of its mount namespace. It is written to
``<tree>/harness.json`` and to a registry file under ``REGISTRY_DIR``
while the host runs, so that ``reap_stale()`` can stop hosts whose owning
test process died (``os._exit``, SIGKILL, a crashed interpreter) and
``stop_state()`` works the same for a live object or a record read back.
"""

import dataclasses
import json
import os
import signal

from oslo_log import log as logging

from nova.testing import procs

LOG = logging.getLogger(__name__)

REGISTRY_DIR = '/run/nova-testing/hosts'
# The host's daemons, in the order they are stopped: libvirtd first (it
# may talk to the others while it stops), virtlockd last.
DAEMONS = ('libvirtd', 'virtlogd', 'virtlockd')
ROLES = ('holder',) + DAEMONS


@dataclasses.dataclass
class HostState:
    """What a host started; enough to stop it from another process."""
    name: str
    tree: str
    instances_path: str
    owner: procs.ProcessRecord
    ns_inode: int = 0
    processes: dict = dataclasses.field(default_factory=dict)

    def to_json(self):
        return json.dumps(dataclasses.asdict(self), indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text):
        values = json.loads(text)
        values['owner'] = procs.ProcessRecord(**values['owner'])
        values['processes'] = {
            role: procs.ProcessRecord(**record)
            for role, record in values['processes'].items()}
        return cls(**values)


def write_atomically(path, text):
    tmp = '%s.%d.tmp' % (path, os.getpid())
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)


def registry_file(tree, registry_dir=REGISTRY_DIR):
    return os.path.join(registry_dir,
                        tree.strip('/').replace('/', '_') + '.json')


def save(state, registry_dir=REGISTRY_DIR):
    """Record the state in the tree, and in the registry while it runs."""
    text = state.to_json()
    write_atomically(os.path.join(state.tree, 'harness.json'), text)
    if state.processes:
        os.makedirs(registry_dir, exist_ok=True)
        write_atomically(registry_file(state.tree, registry_dir), text)


def forget(state, registry_dir=REGISTRY_DIR):
    try:
        os.unlink(registry_file(state.tree, registry_dir))
    except FileNotFoundError:
        pass


def qemu_pids(state):
    """Running QEMU processes of the host, from libvirt's pid files.

    ``<domain>.pid`` next to the ``<domain>.xml`` status file of a running
    domain (``driver.pid`` there is libvirtd's lock file), each confirmed
    to be in the host's namespace, so a stale file naming a reused PID is
    ignored.
    """
    if not state.ns_inode:
        return []
    qemu_run = os.path.join(state.tree, 'run', 'libvirt', 'qemu')
    return [pid for pid in procs.pids_from_files(qemu_run, '.pid',
                                                 sibling='.xml')
            if procs.mount_ns_inode(pid) == state.ns_inode
            and procs.start_time(pid) is not None]


def members(state, but=()):
    """Every process in the host's namespace except the roles in ``but``."""
    if not state.ns_inode:
        return []
    skip = {state.processes[r].pid for r in but if r in state.processes}
    return [pid for pid in procs.pids_in_mount_ns(state.ns_inode)
            if pid not in skip]


def stop_state(state, timeout, release_holder=None):
    """Stop every process of the host; its namespace ends with them.

    QEMU first (SIGKILL: guests are disposable, and their leases go with
    them), then libvirtd, virtlogd and virtlockd (SIGTERM, SIGKILL after
    ``timeout``), then anything else
    that entered the namespace, then the holder, whose exit ends the
    namespace and with it every mount made in it. ``release_holder()``
    lets the holder exit on its own (its owner closes its input); SIGKILL
    follows if it is still there.
    """
    qemu = set(qemu_pids(state)) | set(members(state, but=ROLES))
    for pid in qemu:
        procs.kill(pid, signal.SIGKILL)
    procs.wait_gone(sorted(qemu), timeout)
    for role in DAEMONS:
        record = state.processes.get(role)
        if record is not None:
            procs.terminate(record, timeout)
    rest = members(state, but=('holder',))
    for pid in rest:
        procs.kill(pid, signal.SIGKILL)
    procs.wait_gone(rest, timeout)
    if release_holder is not None:
        release_holder()
    holder = state.processes.get('holder')
    if holder is not None:
        procs.terminate(holder, timeout, sig=signal.SIGKILL)
    left = members(state)
    if left:
        raise RuntimeError('host %s: processes %s still in its namespace'
                           % (state.name, left))


def reap_stale(registry_dir=REGISTRY_DIR):
    """Stop hosts recorded by processes that died without stopping them.

    Hosts whose owner still runs (another test run) are left alone.
    Returns the names of the hosts stopped.
    """
    reaped = []
    if not os.path.isdir(registry_dir):
        return reaped
    for name in sorted(os.listdir(registry_dir)):
        path = os.path.join(registry_dir, name)
        try:
            with open(path) as f:
                state = HostState.from_json(f.read())
        except (OSError, ValueError, TypeError, KeyError):
            LOG.warning('Ignoring unreadable host record %s', path)
            continue
        if state.owner.alive():
            continue
        LOG.warning('Stopping host %s left by dead process %d',
                    state.name, state.owner.pid)
        stop_state(state, timeout=10)
        os.unlink(path)
        reaped.append(state.name)
    return reaped
