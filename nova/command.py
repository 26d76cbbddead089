"""Running an external command (``qemu-img``, ``ip``) from a service.

``oslo_concurrency.processutils.execute`` always hands ``subprocess`` a
``preexec_fn`` (to reset ``SIGPIPE`` in the child), and a ``preexec_fn``
makes ``subprocess`` ``fork()`` the whole service instead of using
``vfork()``: measured here, 14 ms for ``true`` from a service-sized
process against 0.7 ms, paid by every disk a spawn creates and every
VIF it plugs. ``subprocess`` resets ``SIGPIPE`` itself
(``restore_signals``, in the child, vfork-safe), so this runs the same
command the cheap way with the same contract: the output on success,
``ProcessExecutionError`` (exit code, stdout, stderr) on a non-zero
exit, ``OSError`` when the program cannot be run.

Example::

    out, _err = command.execute('qemu-img', 'info', '--output=json', path)
"""

import subprocess

from oslo_concurrency import processutils
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def execute(*cmd: str) -> tuple[str, str]:
    """Run ``cmd`` (no shell, no input); (stdout, stderr) as text."""
    LOG.debug('Running cmd (subprocess): %s', ' '.join(cmd))
    result = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, close_fds=True,
                            check=False)
    if result.returncode != 0:
        raise processutils.ProcessExecutionError(
            stdout=result.stdout, stderr=result.stderr,
            exit_code=result.returncode, cmd=' '.join(cmd))
    return result.stdout, result.stderr
