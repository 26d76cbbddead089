"""Every performance figure of the project, each against its baseline
measured in the same run, printed as one table.

Run (``benchmarks/run`` is this with the project's ``.venv``)::

    benchmarks/run [--quick] [--only ROW[,ROW]] [--skip-cluster] [--list]

Each row is the ``run(quick)`` function of a module of
``benchmarks/rows/`` (its docstring says what is measured and how), run
in a child process of its own, so that no row inherits another's
configuration, database, RPC transport or memory; a row that fails or
runs longer than ``ROW_TIMEOUT`` prints ``not measured: <why>`` and the
others go on. The rows marked *cluster* bring up a real
``nova.testing.cluster`` (libvirtd + QEMU per simulated host, PostgreSQL,
RabbitMQ; root needed) and bring it down again; ``--skip-cluster`` skips
them, and they are skipped, saying why, where a cluster cannot run.

The table prints medians and p95 (nearest rank), the ratio of the
project's median to the baseline's, the target and whether it is met.
Timings are wall-clock (``time.perf_counter``) on this machine, with
whatever else it runs: read them against the baseline next to them. Not
part of CI; no test asserts on time.
"""

import argparse
import dataclasses
import importlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

# name, module under rows/, whether it needs the real cluster
ROWS = (
    ('post_servers', 'api_post', False),
    ('boot_rate', 'boot_rate', False),
    ('init_host', 'init_host_scaling', False),
    ('qemu_boot', 'qemu_boot', True),
    ('qemu_host_evacuate', 'qemu_host_evacuate', True),
    ('ha_recovery', 'ha_recovery', True),
    ('evacuate', 'evacuate_embedded', False),
    ('failed_spawn', 'failed_spawn', True),
    ('failed_spawn_embedded', 'failed_spawn_embedded', False),
    ('memory', 'memory', False),
    ('region', 'region', False),
)
ROW_TIMEOUT = 45 * 60
COLUMNS = ('row', 'project', 'baseline', 'ratio', 'target', 'met')


def cluster_unavailable():
    """Why the cluster rows cannot run here, or None."""
    from nova.testing import cluster as cluster_mod
    reason = cluster_mod.unavailable_reason()
    if reason:
        return reason
    if shutil.which('qemu-system-x86_64') is None:
        return 'qemu-system-x86_64 is not installed'
    return None


def run_child(name, module, quick):
    """Run one row in a child process; its lines (as dicts)."""
    from rows import common
    scratch = tempfile.mkdtemp(prefix='nova-bench-row-')
    result = os.path.join(scratch, 'result.json')
    log = os.path.join(scratch, 'output.log')
    argv = [sys.executable, os.path.abspath(__file__), '--child', module,
            '--result', result] + (['--quick'] if quick else [])
    try:
        with open(log, 'wb') as out:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=out)
            try:
                child.wait(timeout=ROW_TIMEOUT)
            except subprocess.TimeoutExpired:
                # SIGTERM: the child's finally clauses bring down what it
                # started (a cluster by its own teardown).
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(timeout=180)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
                return [dataclasses.asdict(common.not_measured(
                    name, 'ran longer than %d s' % ROW_TIMEOUT))]
        if child.returncode == 0 and os.path.exists(result):
            with open(result) as f:
                return json.load(f)
        tail = common.cluster_services.log_tail(log, 2000)
        sys.stderr.write('--- %s failed (exit %s); end of its output:\n%s\n'
                         % (name, child.returncode, tail))
        last = [line for line in tail.strip().splitlines() if line.strip()]
        return [dataclasses.asdict(common.not_measured(
            name, last[-1].strip()[:120] if last else 'exit status %s'
            % child.returncode))]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def child_main(module, result, quick):
    """In the child: run ``rows.<module>.run(quick)``, write its lines."""
    # A SIGTERM from the parent unwinds the row (finally clauses run).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    import logging
    import warnings
    warnings.filterwarnings('ignore', module='oslo_service')
    logging.basicConfig(level=logging.WARNING)
    for noisy in ('nova', 'oslo_messaging', 'oslo.messaging'):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    row = importlib.import_module('rows.' + module)
    lines = row.run(quick)
    with open(result, 'w') as f:
        json.dump([dataclasses.asdict(line) for line in lines], f)
    return 0


def print_table(lines, out=sys.stdout):
    widths = [max(len(c), *(len(str(line[c])) for line in lines))
              for c in COLUMNS]
    rule = '+' + '+'.join('-' * (w + 2) for w in widths) + '+'

    def row(cells):
        return '| ' + ' | '.join(str(c).ljust(w)
                                 for c, w in zip(cells, widths)) + ' |'
    print(rule, file=out)
    print(row(COLUMNS), file=out)
    print(rule.replace('-', '='), file=out)
    for line in lines:
        print(row([line[c] for c in COLUMNS]), file=out)
    print(rule, file=out)
    for line in lines:
        if line.get('phases'):
            print_phases(line, out)


def print_phases(line, out=sys.stdout):
    """A row's phase table (each phase named by the mark that ends it),
    and for a row that misses its target its three biggest phases."""
    phases = line['phases']
    width = max(len(p['phase']) for p in phases)
    print('\nphases of %s:' % line['row'], file=out)
    for p in phases:
        print('  %s  median %9s  p95 %9s  (n %d)' % (
            p['phase'].ljust(width), p['median'], p['p95'], p['n']),
            file=out)
    if line.get('met') == 'NO':
        biggest = sorted(phases, key=lambda p: -p['median_s'])[:3]
        print('  biggest: %s' % ', '.join(
            '%s (%s)' % (p['phase'], p['median']) for p in biggest),
            file=out)


def main():
    parser = argparse.ArgumentParser(
        prog='benchmarks/run', description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='small N and few repetitions (a smoke run '
                             'of a few minutes)')
    parser.add_argument('--only', metavar='ROW[,ROW]',
                        help='run only these rows (see --list)')
    parser.add_argument('--skip-cluster', action='store_true',
                        help='skip the rows that need the real QEMU '
                             'cluster')
    parser.add_argument('--list', action='store_true',
                        help='list the rows and exit')
    parser.add_argument('--child', help=argparse.SUPPRESS)
    parser.add_argument('--result', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child_main(args.child, args.result, args.quick)

    from rows import common
    if args.list:
        for name, module, cluster in ROWS:
            doc = importlib.import_module('rows.' + module).__doc__
            summary = ' '.join(doc.strip().split('\n\n')[0].split())
            print('%s%s\n    %s' % (name, ' (cluster)' if cluster else '',
                                    summary))
        return 0
    names = [name for name, _module, _cluster in ROWS]
    selected = names
    if args.only:
        selected = [n.strip() for n in args.only.split(',') if n.strip()]
        unknown = sorted(set(selected) - set(names))
        if unknown:
            parser.error('unknown row(s) %s; rows: %s'
                         % (', '.join(unknown), ', '.join(names)))
    cluster_reason = None
    if args.skip_cluster:
        cluster_reason = 'skipped (--skip-cluster)'
    elif any(cluster for name, _m, cluster in ROWS if name in selected):
        reason = cluster_unavailable()
        if reason:
            cluster_reason = 'skipped: no QEMU cluster here (%s)' % reason

    began = time.perf_counter()
    lines = []
    for name, module, cluster in ROWS:
        if name not in selected:
            continue
        if cluster and cluster_reason:
            sys.stderr.write('%s: %s\n' % (name, cluster_reason))
            lines.append(dataclasses.asdict(common.Line(
                name, cluster_reason)))
            continue
        sys.stderr.write('%s: running ...\n' % name)
        sys.stderr.flush()
        started = time.perf_counter()
        lines += run_child(name, module, args.quick)
        sys.stderr.write('%s: %.0f s\n'
                         % (name, time.perf_counter() - started))
    elapsed = time.perf_counter() - began
    print('benchmarks/run%s on %s (%d CPUs, Python %s), %s'
          % (' --quick' if args.quick else '', platform.node(),
             os.cpu_count(), platform.python_version(),
             time.strftime('%Y-%m-%d %H:%M')))
    print_table(lines)
    print('total %.0f s; not part of CI. Rows: benchmarks/rows/*.py'
          % elapsed)
    return 0


if __name__ == '__main__':
    sys.exit(main())
