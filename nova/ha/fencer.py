"""Runs the fence agent (``[ha] fence_command``) on a failed host.

The command is split as a shell would split it (and never run through
one), the host's name appended as its last argument. Exit status 0 within
the timeout is the only answer that counts as fenced: a non-zero exit, a
timeout or a command that cannot run is "not fenced", and then nothing
else happens to the host::

    fencer = Fencer('/usr/local/bin/fence-host --bmc', timeout=120)
    result = fencer.fence('compute1')   # runs: fence-host --bmc compute1
    if result.fenced: ...
"""

import dataclasses
import shlex
import subprocess

from oslo_concurrency import processutils
from oslo_log import log as logging

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class FenceResult:
    fenced: bool
    # What the agent said (its output, or why it did not fence).
    detail: str


class Fencer:

    def __init__(self, command: str | None, timeout: float):
        self.argv = shlex.split(command) if command else []
        self.timeout = timeout

    @property
    def configured(self) -> bool:
        return bool(self.argv)

    def fence(self, host: str) -> FenceResult:
        if not self.configured:
            return FenceResult(False, 'no fence agent is configured')
        if not host or host.startswith('-'):
            # It would read as an option of the agent, not a host.
            return FenceResult(False, 'refused to fence a host named %r'
                               % host)
        LOG.warning('Fencing host %s: %s', host,
                    shlex.join(self.argv + [host]))
        try:
            out, _err = processutils.execute(*self.argv, host,
                                             timeout=self.timeout)
        except processutils.ProcessExecutionError as e:
            said = (e.stderr or e.stdout or '').strip()
            return self._not_fenced(host, 'the fence agent exited with %s%s'
                                    % (e.exit_code,
                                       ': ' + said if said else ''))
        except subprocess.TimeoutExpired:
            return self._not_fenced(host, 'the fence agent did not answer '
                                    'within %s s' % self.timeout)
        except OSError as e:
            return self._not_fenced(host, 'the fence agent could not run: %s'
                                    % e)
        detail = out.strip() or 'the fence agent exited with 0'
        LOG.warning('Fenced host %s: %s', host, detail)
        return FenceResult(True, detail)

    @staticmethod
    def _not_fenced(host: str, detail: str) -> FenceResult:
        LOG.error('Host %s was not fenced: %s', host, detail)
        return FenceResult(False, detail)
