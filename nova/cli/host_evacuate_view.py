"""What ``nova host-evacuate`` prints, and the command itself: the
progress line on a terminal and the table of outcomes. The workflow is
``host_evacuate.py``, which scripts use without any of this."""

import os
import shutil
import textwrap

from nova.cli import host_evacuate as workflow
from nova.cli import servers as servers_mod
from nova.cli import table

TABLE_COLUMNS = ['Server UUID', 'Outcome', 'Host', 'Status', 'Attempts',
                 'Message']
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
    rows = [[i.uuid, i.outcome, i.host, i.status, i.attempts_text(),
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
        summary += '; timed out'
    if report.interrupted:
        summary += '; interrupted'
    lines.append(summary + '; %s' % format_duration(report.elapsed))
    return '\n'.join(lines)


WAIT_OPTIONS = (('max_concurrent', '--max-concurrent'),
                ('poll_interval', '--poll-interval'),
                ('wait_timeout', '--timeout'))


def do_host_evacuate(client, args, out) -> int:
    """``nova host-evacuate``: with ``--wait`` this module's workflow,
    without it the one request per server it always made."""
    if not args.wait:
        given = [flag for dest, flag in WAIT_OPTIONS
                 if getattr(args, dest, None) is not None]
        if given:
            raise workflow.UsageError('%s only with --wait' % ', '.join(given))
        return servers_mod.do_host_evacuate(client, args, out)
    return do_host_evacuate_wait(client, args, out)


def do_host_evacuate_wait(client, args, out) -> int:
    """``nova host-evacuate HOST --wait``: exit 0 only if every instance
    ended done."""
    line = ProgressLine(out)
    evacuation = workflow.HostEvacuation(
        client, args.host,
        max_concurrent=(workflow.DEFAULT_MAX_CONCURRENT
                        if args.max_concurrent is None
                        else args.max_concurrent),
        poll_interval=(workflow.DEFAULT_POLL_INTERVAL
                       if args.poll_interval is None
                       else args.poll_interval),
        timeout=args.wait_timeout, target_host=args.target_host,
        on_shared_storage=args.on_shared_storage, force=args.force,
        on_progress=line.update)
    try:
        report = evacuation.run()
    except KeyboardInterrupt:
        report = evacuation.report(interrupted=True)
    finally:
        line.close()
    print(render_report(report), file=out)
    return 0 if report.succeeded else 1
