"""The process that holds one simulated host's mount namespace.

Run as a script (stdlib only, no ``nova`` import) under
``unshare -m --propagation private``::

    python nsholder.py LOG SRC1 TARGET1 [SRC2 TARGET2 ...]

It bind-mounts each SRC over its TARGET, prints ``ready``, then serves
line commands on stdin:

* ``run <json argv>``: run argv here (in the namespace) as its child and
  answer ``exit <status>`` when it ends; its output goes to LOG.
* end of input (the owner closed the pipe, or died): stop every process
  in the namespace (SIGTERM, then SIGKILL after ``GRACE`` s) and exit.

NOTE: it is a child subreaper (``PR_SET_CHILD_SUBREAPER``). Daemons that
detach (``libvirtd -d``) and the QEMU processes libvirtd detaches are
reparented to it instead of to PID 1, and it reaps them the moment they
exit. In containers whose PID 1 reaps zombies late (about 1.5 s here),
libvirt otherwise waits that long in every destroy for QEMU's zombie to
go away. And a host whose owner died without stopping it stops itself.
"""

import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE = 5.0


def _set_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_CHILD_SUBREAPER)')


def _reap(statuses):
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = os.waitstatus_to_exitcode(status)


def _namespace_members():
    mine = os.stat('/proc/self/ns/mnt').st_ino
    found = []
    for entry in os.listdir('/proc'):
        if entry.isdigit() and int(entry) not in (os.getpid(), 1):
            try:
                if os.stat('/proc/%s/ns/mnt' % entry).st_ino == mine:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def _stop_everything(statuses):
    for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, GRACE)):
        for pid in _namespace_members():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            _reap(statuses)
            if not _namespace_members():
                return
            time.sleep(0.02)


def _spawn(argv, log):
    with open(log, 'ab') as out:
        return os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
            (os.POSIX_SPAWN_DUP2, out.fileno(), 2)])


def main(argv):
    log, pairs = argv[0], argv[1:]
    # Stopping "every process in the namespace" must never mean every
    # process of the machine: the namespace must differ from the one of
    # the process that started us (unshare exec'd into us).
    try:
        parent_ns = os.stat('/proc/%d/ns/mnt' % os.getppid()).st_ino
    except OSError:
        parent_ns = None
    if parent_ns in (None, os.stat('/proc/self/ns/mnt').st_ino):
        print('refusing: not in a private mount namespace', flush=True)
        return 2
    _set_subreaper()
    for src, target in zip(pairs[::2], pairs[1::2]):
        subprocess.run(['mount', '--bind', src, target], check=True)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    statuses = {}
    waiting_for = None
    stdin = sys.stdin.buffer
    print('ready', flush=True)
    while True:
        ready, _, _ = select.select([stdin, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(statuses)
        if waiting_for is not None and waiting_for in statuses:
            print('exit %d' % statuses.pop(waiting_for), flush=True)
            waiting_for = None
        if stdin in ready:
            line = stdin.readline()
            if not line:
                _stop_everything(statuses)
                return 0
            command, _, rest = line.decode().strip().partition(' ')
            if command == 'run' and waiting_for is None:
                try:
                    waiting_for = _spawn(json.loads(rest), log)
                except OSError as e:
                    print('exit 127 %s' % e, flush=True)
            else:
                print('error unknown or overlapping command', flush=True)
        if waiting_for is None:
            statuses.clear()    # exits of detached daemons and QEMU


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
