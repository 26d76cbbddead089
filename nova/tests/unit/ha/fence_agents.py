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


def waiting_agent(directory, waits_for, other, seconds=20):
    """An agent that fences ``other`` at once, and ``waits_for`` only once
    ``other`` was fenced (giving up, unfenced, after ``seconds``): it
    succeeds for both only when the monitor fences two hosts at once.
    (command line, record)."""
    record = os.path.join(directory, 'fenced-hosts')
    marker = os.path.join(directory, 'fenced-%s' % other)
    script = os.path.join(directory, 'fence-agent-waiting')
    with open(script, 'w') as f:
        f.write('#!/bin/sh\n'
                'if [ "$1" = "%(waits_for)s" ]; then\n'
                '  n=0\n'
                '  while [ ! -e "%(marker)s" ]; do\n'
                '    n=$((n + 1)); [ $n -gt %(tries)d ] && exit 1\n'
                '    sleep 0.1\n'
                '  done\n'
                'fi\n'
                'echo "$1" >> "%(record)s"\n'
                '[ "$1" = "%(other)s" ] && touch "%(marker)s"\n'
                'echo "powered off $1"\n'
                'exit 0\n' % {'waits_for': waits_for, 'other': other,
                              'marker': marker, 'record': record,
                              'tries': seconds * 10})
    os.chmod(script, stat.S_IRWXU)
    return script, record
