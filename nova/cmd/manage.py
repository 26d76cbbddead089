"""nova-manage: administration of the database and of one host.

    nova-manage [--config-file F ...] db sync [VERSION]
    nova-manage [--config-file F ...] db version
    nova-manage [--config-file F ...] host audit [--host H]
    nova-manage [--config-file F ...] host cleanup [--host H] [--yes]
    nova-manage [--config-file F ...] host reap [--host H] [--yes]
    nova-manage [--config-file F ...] host init-storage [--existing]
                                                 [--mount-point] [--force]
    nova-manage [--config-file F ...] host record-storage-identity HOST
                                                      --from DIR [--force]
    nova-manage [--config-file F ...] host purge-quarantine
                                      [--older-than SECONDS] [--yes]
    nova-manage [--config-file F ...] network audit [--min-age SECONDS]
    nova-manage [--config-file F ...] network cleanup [--min-age SECONDS]
                                                      [--yes]
    nova-manage [--config-file F ...] ha alerts [--host H]
    nova-manage [--config-file F ...] ha recoveries
    nova-manage [--config-file F ...] ha instance-failures [--host H]

``host audit`` lists the orphaned artefacts (domains, VIFs, instance
directories) of this host: those of instances the database does not place
here (``nova.compute.audit``). ``host cleanup`` removes the ones that are
safe to remove and keeps and reports the rest; without ``--yes`` it is a
dry run that only says what it would remove. Both run on the compute host
itself, with its nova.conf: they use its ``compute_driver``, libvirt
``connection_uri`` and ``instances_path``; ``--host`` names the host in
the database when it is not ``[DEFAULT] host``.

``host reap`` runs the orphan reaper of this host once
(``nova.compute.reaper``, what the compute service's periodic task does):
the source-side cleanup of evacuations away from it that are done, the
domains of deleted instances and of failed evacuations to it stopped
(never their disks, never a domain the database does not know), stale
``.part-`` files and unused base images removed. It prints a table of
what it did and kept, and why; a dry run without ``--yes``. Like ``host
audit`` it runs on the compute host with its nova.conf.

``host init-storage`` gives this host's ``instances_path`` its storage
identity (``nova.virt.storage_identity``) and prints it; a marker that is
there already is reported, never replaced. ``--mount-point`` says the
storage is mounted at ``instances_path``: the marker (a new one, or the
one there, identity kept) records it, and the host then refuses its
storage whenever ``instances_path`` is not a mount point. It refuses,
writing nothing, when ``instances_path_must_be_mounted`` or
``--mount-point`` is given and ``instances_path`` is not a mount point,
and when ``instances_path`` already holds instance directories (their
storage may be another host's) unless ``--existing`` says the operator
vouches that it is this host's. It then records the identity in this
host's nova-compute service row, if there is one (the running service
takes it at its next heartbeat); replacing another identity recorded
there, or dropping a recorded "must be a mount point", needs ``--force``
(without it nothing is written): that is how an operator makes a host use
the directory it sees when its recorded mount is gone for good.

``host record-storage-identity HOST --from DIR`` reads the identity marker
in DIR (HOST's ``instances_path`` as mounted here; read only) and records
it in HOST's nova-compute service row: for a dead host that never recorded
an identity, or recorded a stale one, so that an evacuation from it can
tell whether storage is shared. It refuses when DIR holds no valid marker,
when HOST has no service row, while HOST's service is up (it records its
own), and when HOST recorded another identity (or recorded its storage
as a mount point and DIR's marker does not say so), unless ``--force``.
It prints the old and the new identity.

``host purge-quarantine`` lists the directories in
``<instances_path>/_quarantine`` and deletes those older than
``--older-than`` seconds (default ``[DEFAULT] quarantine_max_age``); a
dry run without ``--yes``.

``network audit`` lists the ports whose instance is gone (never created,
or deleted) and that are older than ``--min-age`` seconds (default 600);
they hold a MAC and a fixed IP (``nova.network.audit``). ``network
cleanup`` releases them, a dry run without ``--yes``. Both need only the
database.

``ha alerts`` lists what nova-hamonitor recorded about failed hosts it
did not recover (one needing fencing, a fence that failed), newest first;
``ha recoveries`` every recovery it started, with the step it reached and
its host-evacuate run or its Masakari notification (doc/source/ha.rst);
``ha instance-failures`` the guests that stopped without nova (recorded by
their compute host), newest first, with what the monitor did about each.
All three need only the database.

Exit codes: 0 success, 1 the command failed (the reason is printed on
stderr), 2 wrong usage.
"""

import argparse
import os
import sys
import types

from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import timeutils
from sqlalchemy import exc as sa_exc

from nova.compute import audit
from nova.compute import instance_events
from nova.compute import locks
from nova.compute import reap_report
from nova.compute import reaper
from nova.compute import storage_report
from nova.conf import CONF
from nova.conf import host_settings
from nova import context as nova_context
from nova.db import api as db_api
from nova.db import migration
from nova import exception
from nova.network import audit as network_audit
from nova import objects
from nova.objects import ha_alert
from nova.objects import ha_recovery
from nova.virt import driver as virt_driver
from nova.virt import instancedir
from nova.virt import storage_identity

LOG = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='nova-manage', description='Administer the compute service.')
    parser.add_argument('--config-file', action='append', default=[],
                        metavar='PATH',
                        help='configuration file (may be repeated); '
                             'default: the usual nova.conf locations')
    parser.add_argument('--config-dir', action='append', default=[],
                        metavar='DIR')
    categories = parser.add_subparsers(dest='category', required=True,
                                       metavar='CATEGORY')
    db = categories.add_parser('db', help='database schema')
    db_actions = db.add_subparsers(dest='action', required=True,
                                   metavar='ACTION')
    sync = db_actions.add_parser(
        'sync', help='create the schema or upgrade it')
    sync.add_argument('version', nargs='?', default=None,
                      help='schema version to reach (default: newest)')
    sync.set_defaults(func=db_sync)
    version = db_actions.add_parser(
        'version', help='print the schema version of the database')
    version.set_defaults(func=db_version)

    host_audit, host_cleanup, host_actions = _audit_and_cleanup(
        categories, 'host', 'orphaned artefacts and the instance storage '
                            'of this compute host',
        audit_help='list domains, VIFs and instance directories of '
                   'instances the database does not place here',
        cleanup_help='remove the orphans that are safe to remove',
        audit_func=host_audit_command, cleanup_func=host_cleanup_command)
    host_reap = host_actions.add_parser(
        'reap', help='run the orphan reaper once: stop domains this host '
                     'no longer owns, remove stale .part- files and '
                     'unused base images (a dry run without --yes)')
    host_reap.add_argument('--yes', action='store_true',
                           help='really do it')
    host_reap.set_defaults(func=host_reap_command)
    for action in (host_audit, host_cleanup, host_reap):
        action.add_argument('--host', default=None,
                            help='this host\'s name in the database '
                                 '(default: [DEFAULT] host)')
    _storage_actions(host_actions)

    network_audit_parser, network_cleanup, _ = _audit_and_cleanup(
        categories, 'network', 'ports left behind by failed boots and '
                               'deletes',
        audit_help='list ports whose instance is gone',
        cleanup_help='release ports whose instance is gone',
        audit_func=network_audit_command,
        cleanup_func=network_cleanup_command)
    for action in (network_audit_parser, network_cleanup):
        action.add_argument(
            '--min-age', type=_seconds, default=network_audit.DEFAULT_MIN_AGE,
            metavar='SECONDS',
            help='only ports older than this; a younger one may belong to '
                 'a boot in progress (default: %(default)s)')
    _ha_actions(categories)
    return parser


def _ha_actions(categories):
    ha = categories.add_parser('ha', help='what nova-hamonitor did')
    actions = ha.add_subparsers(dest='action', required=True,
                                metavar='ACTION')
    alerts = actions.add_parser(
        'alerts', help='failed hosts the monitor did not recover, and why')
    alerts.add_argument('--host', default=None,
                        help='only the alerts of this host')
    alerts.set_defaults(func=ha_alerts_command)
    recoveries = actions.add_parser(
        'recoveries', help='the recoveries of failed hosts it started')
    recoveries.set_defaults(func=ha_recoveries_command)
    failures = actions.add_parser(
        'instance-failures',
        help='guests that stopped without nova, and what the monitor did')
    failures.add_argument('--host', default=None,
                          help='only the failures recorded by this host')
    failures.set_defaults(func=ha_instance_failures_command)


def _audit_and_cleanup(categories, name, help, audit_help, cleanup_help,
                       audit_func, cleanup_func):
    """A category with ``audit`` and ``cleanup [--yes]``: both parsers,
    and the category's actions to add others to."""
    category = categories.add_parser(name, help=help)
    actions = category.add_subparsers(dest='action', required=True,
                                      metavar='ACTION')
    audit_parser = actions.add_parser('audit', help=audit_help)
    audit_parser.set_defaults(func=audit_func)
    cleanup = actions.add_parser(
        'cleanup', help=cleanup_help + ' (a dry run without --yes)')
    cleanup.add_argument('--yes', action='store_true',
                         help='really do it')
    cleanup.set_defaults(func=cleanup_func)
    return audit_parser, cleanup, actions


def _storage_actions(host_actions):
    init = host_actions.add_parser(
        'init-storage', help='create the storage identity marker of this '
                             'host\'s instances_path')
    init.add_argument(
        '--existing', action='store_true',
        help='instances_path holds instance directories already: create '
             'it anyway, vouching that this storage is this host\'s own')
    init.add_argument(
        '--mount-point', action='store_true',
        help='the storage is mounted at instances_path: record that in '
             'the marker, so that the host refuses the directory it sees '
             'whenever the mount is missing')
    init.add_argument(
        '--force', action='store_true',
        help='replace the storage identity this host\'s service row '
             'records (or its "must be a mount point") with this one')
    init.set_defaults(func=host_init_storage_command)

    record = host_actions.add_parser(
        'record-storage-identity',
        help='record the storage identity marker found in DIR as the '
             'storage identity of HOST, a down host')
    record.add_argument('target_host', metavar='HOST',
                        help='the host whose nova-compute service row to '
                             'update')
    record.add_argument('--from', dest='source', required=True,
                        metavar='DIR',
                        help='a directory holding HOST\'s storage identity '
                             'marker (its instances_path as mounted here)')
    record.add_argument('--force', action='store_true',
                        help='replace an identity HOST recorded already')
    record.set_defaults(func=host_record_storage_identity_command)

    purge = host_actions.add_parser(
        'purge-quarantine', help='delete quarantined instance directories '
                                 'older than --older-than (a dry run '
                                 'without --yes)')
    purge.add_argument('--older-than', type=_seconds, default=None,
                       metavar='SECONDS',
                       help='age in seconds (default: [DEFAULT] '
                            'quarantine_max_age)')
    purge.add_argument('--yes', action='store_true', help='really do it')
    purge.set_defaults(func=host_purge_quarantine_command)


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError('not a number of seconds: %r'
                                         % text)
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError('must be 0 or more: %r' % text)
    return value


def db_sync(args) -> int:
    version = migration.db_sync(args.version)
    print('Database schema is at version %s' % version)
    return EXIT_OK


def db_version(args) -> int:
    print(migration.db_version())
    return EXIT_OK


def _open_host(args):
    """This host's settings and its connected virt driver."""
    settings = host_settings.HostSettings.from_conf(CONF)
    if args.host:
        settings = settings.replace(host=args.host)
    driver = virt_driver.load_compute_driver(
        instance_events.ComputeVirtAPI(), settings, CONF.compute_driver)
    driver.init_host(settings.host)
    return settings, driver


def _audit(args):
    settings, driver = _open_host(args)
    context = nova_context.get_admin_context()
    try:
        report = audit.audit(context, settings, driver)
        print('Host %s, instances_path %s, storage identity %s'
              % (report.host, report.instances_path,
                 report.storage_identity or 'unknown'))
        if report.storage_problem:
            print('Storage problem: %s; no instance directory is removed'
                  % report.storage_problem)
        if report.orphans:
            print(audit.format_table(report.orphans))
        else:
            print('No orphans.')
        return context, settings, driver, report
    except BaseException:
        driver.cleanup_host(settings.host)
        raise


def host_audit_command(args) -> int:
    _context, settings, driver, report = _audit(args)
    driver.cleanup_host(settings.host)
    print('%d to remove, %d to keep' % (len(report.removable),
                                        len(report.kept)))
    return EXIT_OK


def host_cleanup_command(args) -> int:
    context, settings, driver, report = _audit(args)
    try:
        if not args.yes:
            print('Dry run: %d would be removed, %d kept; run again '
                  'with --yes to remove them.'
                  % (len(report.removable), len(report.kept)))
            return EXIT_OK
        result = audit.cleanup(context, settings, driver, report)
    finally:
        driver.cleanup_host(settings.host)
    for orphan in result.removed:
        print('Removed %s %s (%s)' % (orphan.kind, orphan.name,
                                      orphan.reason))
    for orphan, message in result.errors:
        print('nova-manage: error: could not remove %s %s: %s'
              % (orphan.kind, orphan.name, message), file=sys.stderr)
    print('%d removed, %d kept, %d failed'
          % (len(result.removed), len(result.kept), len(result.errors)))
    return EXIT_FAILED if result.errors else EXIT_OK


def host_reap_command(args) -> int:
    settings, driver = _open_host(args)
    context = nova_context.get_admin_context()
    try:
        # Not the compute service's own locks (another process): the
        # reaper relies on task states and migrations, as host cleanup.
        report = reaper.reap(context, settings, driver,
                             locks.InstanceLocks(), dry_run=not args.yes)
    finally:
        driver.cleanup_host(settings.host)
    print('Host %s, instances_path %s' % (report.host,
                                          report.instances_path))
    if report.findings:
        print(audit.format_table(report.findings, reap_report.COLUMNS))
    else:
        print('Nothing to reap.')
    for finding in report.errors:
        print('nova-manage: error: %s %s: %s' % (
            finding.kind, finding.name, finding.reason), file=sys.stderr)
    if report.dry_run:
        print('Dry run: %d would be stopped or removed, %d kept, %d '
              'failed; run again with --yes to do it.'
              % (len(report.acted), len(report.kept), len(report.errors)))
    else:
        print('%d stopped or removed, %d kept, %d failed'
              % (len(report.acted), len(report.kept), len(report.errors)))
    return EXIT_FAILED if report.errors else EXIT_OK


def _describe_record(identity, must_be_mounted) -> str:
    return '%s%s' % (identity or 'none',
                     ' (must be a mount point)' if must_be_mounted else '')


def _replacing(old, old_mounted, new, new_mounted) -> bool:
    """Whether recording (new, new_mounted) over what a service row holds
    takes evidence away: another identity, or a "must be a mount point"
    dropped. Recording a first identity, or adding the flag, does not."""
    if not old:
        return False
    return old != new or (bool(old_mounted) and not new_mounted)


def _own_service_row(host):
    try:
        return objects.Service.get_by_host_and_binary(
            nova_context.get_admin_context(), host,
            storage_report.COMPUTE_BINARY)
    except exception.ServiceNotFound:
        return None


def host_init_storage_command(args) -> int:
    settings = host_settings.HostSettings.from_conf(CONF)
    path = settings.instances_path
    marker = storage_identity.marker_path(path)
    if settings.instances_path_must_be_mounted and \
            not storage_identity.is_mount_point(path):
        return _fail('instances_path %s is not a mount point and '
                     'instances_path_must_be_mounted is set: mount its '
                     'storage first; nothing written' % path)
    if args.mount_point and not storage_identity.is_mount_point(path):
        return _fail('instances_path %s is not a mount point: mount its '
                     'storage first (--mount-point says it is mounted '
                     'there); nothing written' % path)
    status = storage_identity.read(path)
    if not status.identity:
        if os.path.lexists(marker):
            return _fail('%s; not replacing it (look at it, and remove it '
                         'yourself if it is not a marker of this '
                         'storage); nothing written' % status.unknown_reason)
        if storage_identity.holds_instance_directories(path) and \
                not args.existing:
            return _fail(
                '%s already holds instance directories: it may be storage '
                'of another host (a copy, or a shared file system that is '
                'not mounted as it should be); nothing written. If you '
                'know that this storage is this host\'s own, run again '
                'with --existing' % path)
    mounted = bool(args.mount_point or status.must_be_mounted)
    # Checked before anything is written: a host that recorded another
    # storage may be looking at a bare mount point or at the directory
    # under a missing mount, which must not become its storage by
    # accident.
    row = _own_service_row(settings.host)
    if row is not None and not args.force and _replacing(
            row.storage_identity, row.storage_must_be_mounted,
            status.identity, mounted):
        return _fail(
            'host %s records storage identity %s, but %s has %s: is its '
            'storage mounted? Pass --force to make this its storage '
            'instead; nothing written'
            % (settings.host, _describe_record(
                row.storage_identity, row.storage_must_be_mounted),
               path, _describe_record(status.identity, mounted)
               if status.identity else 'none'))
    if status.identity:
        identity = status.identity
        if args.mount_point and not status.must_be_mounted:
            storage_identity.mark_mount_point(path)
            print('Storage identity %s at %s now says instances_path is a '
                  'mount point' % (identity, marker))
        else:
            print('%s already has storage identity %s (%s); not replaced'
                  % (path, _describe_record(identity, mounted), marker))
    else:
        if storage_identity.holds_instance_directories(path):
            warning = (
                'WARNING: %s holds instance directories and had no storage '
                'identity. Creating one because you vouch (--existing) '
                'that this storage is this host\'s own. If it is in fact '
                'shared with other hosts or a copy of another host\'s, '
                'decisions about these instances\' disks will rest on a '
                'wrong identity.' % path)
            print(warning, file=sys.stderr)
            LOG.warning('%s', warning)
        identity = storage_identity.create(path, mount_point=mounted)
        print('Created storage identity %s at %s'
              % (_describe_record(identity, mounted), marker))
    _record_own(settings.host, row, identity, mounted)
    return EXIT_OK


def _record_own(host, row, identity, mounted):
    if row is None:
        print('Host %s has no %s service row yet: its first start records '
              'this identity' % (host, storage_report.COMPUTE_BINARY))
        return
    old = (row.storage_identity, bool(row.storage_must_be_mounted))
    if old == (identity, mounted):
        return
    row.storage_identity = identity
    row.storage_must_be_mounted = mounted
    row.save()
    LOG.warning('Host %s: recorded storage identity %s -> %s', host,
                _describe_record(*old), _describe_record(identity, mounted))
    print('Host %s: recorded storage identity %s -> %s'
          % (host, _describe_record(*old),
             _describe_record(identity, mounted)))


def host_record_storage_identity_command(args) -> int:
    status = storage_identity.read(args.source)
    if status.identity is None:
        return _fail('%s holds no valid storage identity marker (%s); '
                     'nothing recorded' % (args.source,
                                           status.unknown_reason))
    context = nova_context.get_admin_context()
    try:
        service = objects.Service.get_by_host_and_binary(
            context, args.target_host, storage_report.COMPUTE_BINARY)
    except exception.ServiceNotFound:
        return _fail('host %s has no %s service row; nothing recorded'
                     % (args.target_host, storage_report.COMPUTE_BINARY))
    if service.is_up(CONF.service_down_time):
        return _fail('the %s service of host %s is up: it records its own '
                     'storage identity with every heartbeat; only a down '
                     'or forced-down host\'s can be recorded here; nothing '
                     'recorded' % (storage_report.COMPUTE_BINARY,
                                   args.target_host))
    old = (service.storage_identity, bool(service.storage_must_be_mounted))
    new = (status.identity, bool(status.must_be_mounted))
    if old == new:
        print('Host %s records storage identity %s already'
              % (args.target_host, _describe_record(*old)))
        return EXIT_OK
    if _replacing(*old, *new) and not args.force:
        return _fail('host %s records storage identity %s, not the %s '
                     'found in %s; pass --force to replace it; nothing '
                     'recorded' % (args.target_host, _describe_record(*old),
                                   _describe_record(*new),
                                   status.instances_path))
    service.storage_identity, service.storage_must_be_mounted = new
    service.save()
    print('Host %s: storage identity %s -> %s (read from %s)'
          % (args.target_host, _describe_record(*old),
             _describe_record(*new),
             storage_identity.marker_path(status.instances_path)))
    return EXIT_OK


_QUARANTINE_COLUMNS = (('INSTANCE', 'instance_uuid'), ('PATH', 'path'),
                       ('AGE', 'age'), ('BYTES', 'size'),
                       ('ACTION', 'action'), ('REASON', 'reason'))


def host_purge_quarantine_command(args) -> int:
    path = host_settings.HostSettings.from_conf(CONF).instances_path
    older_than = (CONF.quarantine_max_age if args.older_than is None
                  else args.older_than)
    now = timeutils.utcnow(with_timezone=True)
    found, other = instancedir.list_quarantine(path)
    due = {e.path for e in instancedir.purge_quarantine(
        path, older_than, now=now, dry_run=True)}
    rows = [types.SimpleNamespace(
        instance_uuid=e.instance_uuid, path=e.path,
        age='%ds' % e.age(now), size=e.size,
        action='purge' if e.path in due else 'keep',
        reason=e.reason or 'no reason recorded') for e in found]
    print('Quarantine of %s: directories older than %ss are purged'
          % (instancedir.quarantine_dir(path), '%g' % older_than))
    if rows:
        print(audit.format_table(rows, _QUARANTINE_COLUMNS))
    else:
        print('Nothing in quarantine.')
    for entry in other:
        print('Not touched (not named as quarantined directories are): %s'
              % entry)
    if not args.yes:
        print('Dry run: %d would be purged, %d kept; run again with --yes '
              'to purge them.' % (len(due), len(found) - len(due)))
        return EXIT_OK
    try:
        purged = instancedir.purge_quarantine(path, older_than, now=now)
    except OSError as e:
        return _fail('purging the quarantine failed: %s' % e)
    for entry in purged:
        print('Purged %s (%d bytes)' % (entry.path, entry.size))
    print('%d purged, %d kept' % (len(purged), len(found) - len(purged)))
    return EXIT_OK


def _port_audit(args):
    context = nova_context.get_admin_context()
    orphans = network_audit.orphaned_ports(context, args.min_age)
    if orphans:
        print(audit.format_table(orphans, network_audit.COLUMNS))
    else:
        print('No orphaned ports.')
    return context, orphans


def network_audit_command(args) -> int:
    _port_audit(args)
    return EXIT_OK


def network_cleanup_command(args) -> int:
    context, orphans = _port_audit(args)
    if not args.yes:
        print('Dry run: %d would be released; run again with --yes to '
              'release them.' % len(orphans))
        return EXIT_OK
    released = network_audit.release(context, orphans, args.min_age)
    for orphan in released:
        print('Released port %s (%s, %s)' % (
            orphan.port_id, orphan.mac_address, orphan.ip_address or '-'))
    print('%d released, %d kept' % (len(released),
                                    len(orphans) - len(released)))
    return EXIT_OK


def _print_records(records, nothing: str, columns) -> int:
    """``records`` as a table of ``columns`` (``(header, field)``), or the
    sentence ``nothing`` when there are none."""
    if not records:
        print(nothing)
    else:
        print(audit.format_table(records, columns))
    return EXIT_OK


def ha_alerts_command(args) -> int:
    context = nova_context.get_admin_context()
    return _print_records(
        ha_alert.HaAlert.get_all(context, host=args.host), 'No alerts.',
        (('created_at', 'created_at'), ('host', 'host'),
         ('reason', 'reason')))


def ha_recoveries_command(args) -> int:
    context = nova_context.get_admin_context()
    # A recovery that fenced nothing shows "-" under fenced.
    return _print_records(
        ha_recovery.HaHostRecovery.get_all(context), 'No recoveries.', (
            ('created_at', 'created_at'), ('host', 'host'),
            ('step', 'step'), ('fenced', 'fenced'),
            ('host-evacuate', 'evacuation_uuid'),
            ('masakari', 'notification_uuid'), ('monitor', 'monitor'),
            ('reason', 'reason')))


def ha_instance_failures_command(args) -> int:
    context = nova_context.get_admin_context()
    # Newest first, as the other two.
    failures = objects.HaInstanceFailure.get_all(context, host=args.host)
    return _print_records(
        list(reversed(failures)), 'No instance failures.', (
            ('created_at', 'created_at'), ('host', 'host'),
            ('instance', 'instance_uuid'), ('event', 'event'),
            ('step', 'step'), ('masakari', 'notification_uuid'),
            ('monitor', 'monitor'), ('reason', 'reason')))


def _load_config(args) -> None:
    config_args = []
    for path in args.config_file:
        config_args += ['--config-file', path]
    for path in args.config_dir:
        config_args += ['--config-dir', path]
    CONF(config_args, project='nova', prog='nova-manage')


def _fail(message: str) -> int:
    print('nova-manage: error: %s' % message, file=sys.stderr)
    return EXIT_FAILED


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else EXIT_OK
    try:
        _load_config(args)
    except cfg.Error as e:
        return _fail('configuration: %s' % e)
    try:
        db_api.configure()
        return args.func(args)
    except exception.NovaException as e:
        return _fail(e.format_message())
    except sa_exc.DBAPIError as e:
        return _fail('database %s: %s' % (
            db_api.safe_url(db_api.configured_url()), e.orig))
    except sa_exc.SQLAlchemyError as e:
        return _fail('database: %s' % e)
    finally:
        db_api.dispose()


if __name__ == '__main__':
    sys.exit(main())
