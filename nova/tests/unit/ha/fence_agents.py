"""Fence agents for tests: real commands that record each call in a
file (one host name a line) and answer as told."""

import os
import stat


def recording_agent(directory, exit_code=0):
    """(the command line, the file it records the hosts it fenced in)."""
    record = os.path.join(directory, 'fenced-hosts')
    script = os.path.join(directory, 'fence-agent-%d' % exit_code)
    with open(script, 'w') as f:
        f.write('#!/bin/sh\necho "$1" >> "%s"\necho "powered off $1"\n'
                'exit %d\n' % (record, exit_code))
    os.chmod(script, stat.S_IRWXU)
    return script, record


def fenced(record):
    """The hosts the agent was called for, in order."""
    if not os.path.exists(record):
        return []
    with open(record) as f:
        return f.read().split()
