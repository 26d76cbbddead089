"""Processes found and stopped by PID only, safe against PID reuse.

Test harnesses start daemons that detach (``-d``) and are reparented to
PID 1, so they are not our children. A ``ProcessRecord`` pairs the PID
with the kernel's start time of that process: a PID that was reused by an
unrelated process after ours died does not match, so it is never
signalled. A zombie counts as gone (PID 1 reaps it later).

Example::

    record = ProcessRecord.of(pid)
    terminate(record, timeout=10)     # SIGTERM, wait, SIGKILL
"""

import dataclasses
import os
import signal
import stat
import time

POLL = 0.05


@dataclasses.dataclass(frozen=True)
class ProcessRecord:
    pid: int
    start_time: int

    @classmethod
    def of(cls, pid):
        start = start_time(pid)
        if start is None:
            raise ProcessLookupError('process %d is not running' % pid)
        return cls(pid=pid, start_time=start)

    def alive(self):
        return start_time(self.pid) == self.start_time


def start_time(pid):
    """Kernel start time (clock ticks since boot); None if gone or zombie."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name may hold spaces and parentheses: split after it.
    fields = data[data.rindex(')') + 2:].split()
    if fields[0] in ('Z', 'X'):
        return None
    return int(fields[19])      # field 22 of proc(5); fields[0] is field 3


def state(pid):
    """The state letter of proc(5) (``R``, ``S``, ``T`` when stopped by a
    signal, ``Z`` ...); None when there is no such process."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return data[data.rindex(')') + 2:].split()[0]


def children(pid):
    """PIDs of the running children of ``pid`` (``/proc``; a zombie,
    exited but not yet reaped, is not running)."""
    found = []
    try:
        tasks = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return found
    for task in tasks:
        try:
            with open('/proc/%d/task/%s/children' % (pid, task)) as f:
                found += [int(child) for child in f.read().split()]
        except OSError:
            pass        # the thread or the process ended meanwhile
    return [child for child in found if start_time(child) is not None]


def cmdline(pid):
    """The arguments of process ``pid`` as bytes (empty once it is
    gone)."""
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            return f.read().split(b'\0')
    except OSError:
        return []


def mount_ns_inode(pid):
    try:
        return os.stat('/proc/%d/ns/mnt' % pid).st_ino
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def pids_in_mount_ns(inode):
    """Every live process whose mount namespace is ``inode``."""
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            pid = int(entry)
            if mount_ns_inode(pid) == inode and start_time(pid) is not None:
                found.append(pid)
    return sorted(found)


def read_pid(path):
    """The PID in a pid file, or None."""
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def pids_from_files(directory, suffix, sibling=None):
    """PIDs written in ``directory/*suffix`` files (libvirt's pid files).

    With ``sibling``, only files that have a file of the same stem and
    that suffix next to them.
    """
    pids = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return pids
    for name in names:
        stem = name[:-len(suffix)]
        if name.endswith(suffix) and (
                sibling is None or stem + sibling in names):
            pid = read_pid(os.path.join(directory, name))
            if pid is not None:
                pids.append(pid)
    return sorted(pids)


def kill(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def wait_gone(pids, timeout):
    """Wait until none of ``pids`` runs; the ones still running."""
    deadline = time.monotonic() + timeout
    left = [p for p in pids if start_time(p) is not None]
    while left and time.monotonic() < deadline:
        time.sleep(POLL)
        left = [p for p in left if start_time(p) is not None]
    return left


def terminate(record, timeout, sig=signal.SIGTERM):
    """Signal a recorded process, wait, SIGKILL it if it is still there."""
    if not record.alive():
        return
    kill(record.pid, sig)
    deadline = time.monotonic() + timeout
    while record.alive() and time.monotonic() < deadline:
        time.sleep(POLL)
    if record.alive():
        kill(record.pid, signal.SIGKILL)
        deadline = time.monotonic() + timeout
        while record.alive() and time.monotonic() < deadline:
            time.sleep(POLL)
    if record.alive():
        raise RuntimeError('process %d survived SIGKILL' % record.pid)


def wait_for_path(path, timeout):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError('%s did not appear in %s s' % (path, timeout))
        time.sleep(POLL)


def wait_for_pid_file(path, timeout):
    """The PID a daemon wrote to ``path`` once the file is complete."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path) as f:
                pid = int(f.read().strip())
            if start_time(pid) is not None:
                return pid
        except (FileNotFoundError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError('no live PID in %s after %s s'
                               % (path, timeout))
        time.sleep(POLL)


def file_id(path):
    """(device, inode) of the file at ``path`` (followed), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def open_files(pid):
    """{(device, inode): path as the process sees it} of the regular
    files ``pid`` holds open, like ``lsof -p``: read from outside its
    mount namespace, so files are told apart by inode, never by path
    (every host of a cluster has the same ``instances_path``)."""
    found = {}
    fd_dir = '/proc/%d/fd' % pid
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return found
    for fd in fds:
        link = os.path.join(fd_dir, fd)
        try:
            st = os.stat(link)
            target = os.readlink(link)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            found[(st.st_dev, st.st_ino)] = target
    return found


@dataclasses.dataclass(frozen=True)
class FileLock:
    """One lock of ``/proc/locks``: ``kind`` POSIX (fcntl, what virtlockd
    takes) or OFDLCK (open file description locks, what QEMU takes; their
    pid is -1), ``mode`` READ or WRITE, bytes ``start`` to ``end``."""
    kind: str
    mode: str
    pid: int
    start: str
    end: str


def locks_on(path, proc_locks='/proc/locks'):
    """The locks the kernel holds on the file at ``path`` (followed)."""
    ident = file_id(path)
    if ident is None:
        return []
    device, inode = ident
    wanted = '%02x:%02x:%d' % (os.major(device), os.minor(device), inode)
    found = []
    with open(proc_locks) as f:
        for line in f:
            fields = line.split()
            # "1: POSIX  ADVISORY  WRITE 123 fe:00:2180724 0 0"; a lock
            # someone waits for has "->" after the number.
            if len(fields) > 1 and fields[1] == '->':
                continue
            if len(fields) >= 8 and fields[5] == wanted:
                found.append(FileLock(kind=fields[1], mode=fields[3],
                                      pid=int(fields[4]), start=fields[6],
                                      end=fields[7]))
    return found
