"""A compute host's start (``init_host``) with N instances on it: time and
SQL statements.

``benchmarks/init_host.py``'s ``measure(N, runs)``: one host on libvirt's
test driver whose node file holds N running domains, and a new SQLite
database whose N instance rows on that host are idle and recorded as
running; it times the reconciliation ``init_host`` runs (the query of the
host's instances, ``driver.get_power_states()``, then
``host_init.init_instances``) and counts its SQL statements. Here the
driver calls it makes (``get_power_states``, ``list_instance_uuids``) are
timed as well, by wrapping them on ``LibvirtDriver`` while it runs, so
that the time *besides hypervisor calls* is the total minus theirs.
Median of 3 runs (``--quick``: N = 0, 500, 2,000, one run).

Baseline: N = 0, in the same run. Targets: at most 2 s at 10,000 besides
hypervisor calls; statements the same as at N = 0.
"""

import statistics

from rows import common

import init_host  # noqa: E402  (benchmarks/init_host.py)

from nova.virt.libvirt import driver as libvirt_driver  # noqa: E402

SECONDS_AT_MOST = 2.0
HYPERVISOR_CALLS = ('get_power_states', 'list_instance_uuids')


def measure(count, runs):
    """(median total s, median besides hypervisor s, statements)."""
    with common.MethodTimer(libvirt_driver.LibvirtDriver,
                            HYPERVISOR_CALLS) as meter:
        times, statements = init_host.measure(count, runs)
    # The meter saw every run; their hypervisor time is shared evenly.
    besides = [t - meter.seconds / runs for t in times]
    return statistics.median(times), statistics.median(besides), statements


def run(quick):
    levels = (500, 2000) if quick else (1000, 5000, 10000)
    runs = 1 if quick else 3
    total0, besides0, statements0 = measure(0, runs)
    lines = [common.Line(
        'init_host, 0 instances (test driver, SQLite)',
        '%s (%s besides hypervisor), %d statements'
        % (common.seconds(total0), common.seconds(besides0), statements0),
        '(baseline)')]
    for count in levels:
        total, besides, statements = measure(count, runs)
        ok = besides <= SECONDS_AT_MOST and statements <= statements0
        lines.append(common.Line(
            'init_host, %d instances (test driver, SQLite)' % count,
            '%s (%s besides hypervisor), %d statements'
            % (common.seconds(total), common.seconds(besides), statements),
            '0 instances: %s, %d statements'
            % (common.seconds(total0), statements0),
            '%.1fx, %+d stmts'
            % (common.ratio(total, total0), statements - statements0),
            '<= %g s w/o hypervisor at 10k; stmts flat'
            % SECONDS_AT_MOST, common.verdict(ok)))
    return lines
