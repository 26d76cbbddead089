"""What ``nova host-evacuate`` prints, and the command itself: without
``--wait`` novaclient's table (accepted or not, per server); with it the
progress line on a terminal and the table of outcomes. The run is the
conductor's; ``host_evacuate.py`` starts and reads it, and scripts use it
without any of this."""

import os
import shutil
import textwrap

from nova.cli import client as client_mod
from nova.cli import host_evacuate as workflow
from nova.cli import table

TABLE_COLUMNS = ['Server UUID', 'Outcome', 'Host', 'Attempts', 'Message']
ACCEPTED_COLUMNS = ['Server UUID', 'Evacuate Accepted', 'Error Message']
# Message cells are wrapped to lines this long.
MESSAGE_WIDTH = 72


def format_duration(seconds) -> str:
    if seconds is None:
        return '?'
    seconds = int(round(seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return '%d:%02d:%02d' % (hours, minutes, seconds)
    return '%d:%02d' % (minutes, seconds)


def progress_text(p: workflow.Progress) -> str:
    """``host1: 7/20 ended, ETA 1:05 | 6 done, 1 failed, 4 in progress, 9
    waiting`` (then refused and retried, when there are some)."""
    text = '%s: %d/%d ended, ETA %s | %d done, %d failed, %d in progress, ' \
        '%d waiting' % (p.host, p.ended, p.total, format_duration(p.eta),
                        p.done, p.failed, p.in_progress, p.waiting)
    if p.refused:
        text += ', %d refused' % p.refused
    if p.retried:
        text += ', %d retried' % p.retried
    return text


class ProgressLine:
    """One line on a terminal, rewritten in place (``\\r``); nothing at all
    when ``out`` is not a terminal."""

    def __init__(self, out):
        self.out = out
        try:
            self.enabled = bool(out.isatty())
        except (AttributeError, ValueError):
            self.enabled = False
        self._width = 0

    def _columns(self):
        """The terminal's width; 0 when unknown."""
        try:
            return os.get_terminal_size(self.out.fileno()).columns
        except (AttributeError, OSError, ValueError):
            return shutil.get_terminal_size((0, 0)).columns

    def update(self, progress: workflow.Progress):
        if not self.enabled:
            return
        text = progress_text(progress)
        columns = self._columns()
        if columns > 1:
            # A longer line would wrap, and \r return to its last part.
            text = text[:columns - 1]
        self.out.write('\r' + text.ljust(self._width))
        self.out.flush()
        self._width = len(text)

    def close(self):
        """End the line (before the table)."""
        if self.enabled and self._width:
            self.out.write('\n')
            self.out.flush()
            self._width = 0


def _cell(message):
    """The message wrapped to lines of at most ``MESSAGE_WIDTH``."""
    if not message:
        return ''
    return '\n'.join(textwrap.fill(line, MESSAGE_WIDTH,
                                   break_long_words=True)
                     for line in message.splitlines())


def render_report(report: workflow.Report) -> str:
    rows = [[i.uuid, i.outcome, i.host, i.attempts_text(),
             _cell(i.message)] for i in report.instances]
    lines = [table.render(TABLE_COLUMNS, rows)]
    summary = ('host-evacuate %s: %d instances: %d done, %d failed, %d '
               'refused' % (report.host, len(report.instances),
                            report.count(workflow.DONE),
                            report.count(workflow.FAILED),
                            report.count(workflow.REFUSED)))
    for outcome in (workflow.IN_PROGRESS, workflow.NOT_STARTED):
        if report.count(outcome):
            summary += ', %d %s' % (report.count(outcome), outcome)
    retried = sum(1 for i in report.instances if i.retried)
    summary += '; %d retried' % retried
    if report.skipped_targets:
        summary += '; skipped targets: %s' % ', '.join(
            '%s (%s)' % item for item in sorted(
                report.skipped_targets.items()))
    if report.timed_out:
        summary += '; timed out (the run goes on: host-evacuation-show %s)' \
            % report.id
    elif report.stopped_waiting:
        summary += '; stopped waiting (the run goes on: ' \
            'host-evacuation-show %s)' % report.id
    elif report.interrupted:
        summary += '; interrupted'
    lines.append(summary + '; %s; run %s'
                 % (format_duration(report.elapsed), report.id))
    return '\n'.join(lines)


def render_accepted(report: workflow.Report) -> str:
    """novaclient's table: was each server's evacuation accepted?"""
    rows = [[i.uuid, i.outcome != workflow.REFUSED,
             '' if i.outcome != workflow.REFUSED
             else 'Error while evacuating instance: %s' % i.message]
            for i in report.instances]
    return table.render(ACCEPTED_COLUMNS, rows)


WAIT_OPTIONS = (('poll_interval', '--poll-interval'),
                ('wait_timeout', '--timeout'))


def _start(client, args) -> dict:
    try:
        return workflow.start(client, args.host, args.target_host,
                              args.on_shared_storage)
    except client_mod.NotFound as e:
        # The API names what does not exist; for the command line it is
        # a wrong argument.
        raise workflow.UsageError('No compute host named %s: %s'
                                  % (args.host, e.message))


def do_host_evacuate(client, args, out) -> int:
    """``nova host-evacuate``: start the run; without ``--wait`` print
    whether each first request was accepted (exit 1 if one was not),
    with it follow the run to its end (exit 1 unless every server ended
    done)."""
    poll_interval = (workflow.DEFAULT_POLL_INTERVAL
                     if args.poll_interval is None else args.poll_interval)
    if not args.wait:
        given = [flag for dest, flag in WAIT_OPTIONS
                 if getattr(args, dest, None) is not None]
        if given:
            raise workflow.UsageError('%s only with --wait' % ', '.join(given))
        run = _start(client, args)
        report = workflow.follow(client, run['id'],
                                 lambda r: r.requested, poll_interval)
        print(render_accepted(report), file=out)
        return 0 if report.count(workflow.REFUSED) == 0 else 1
    line = ProgressLine(out)
    run = _start(client, args)
    try:
        report = workflow.follow(client, run['id'], lambda r: r.ended,
                                 poll_interval, timeout=args.wait_timeout,
                                 on_progress=line.update)
    except KeyboardInterrupt:
        report = workflow.show(client, run['id'])
        report.stopped_waiting = True
    finally:
        line.close()
    print(render_report(report), file=out)
    return 0 if report.succeeded else 1


def do_host_evacuation_show(client, args, out) -> int:
    """``nova host-evacuation-show ID``: a run's outcome table now."""
    report = workflow.show(client, args.evacuation_id)
    print(render_report(report), file=out)
    return 0 if report.succeeded else 1
