"""nova-manage: administration of the database and of one host.

    nova-manage [--config-file F ...] db sync [VERSION]
    nova-manage [--config-file F ...] db version
    nova-manage [--config-file F ...] host audit [--host H]
    nova-manage [--config-file F ...] host cleanup [--host H] [--yes]
    nova-manage [--config-file F ...] network audit [--min-age SECONDS]
    nova-manage [--config-file F ...] network cleanup [--min-age SECONDS]
                                                      [--yes]

``host audit`` lists the orphaned artefacts (domains, VIFs, instance
directories) of this host: those of instances the database does not place
here (``nova.compute.audit``). ``host cleanup`` removes the ones that are
safe to remove and keeps and reports the rest; without ``--yes`` it is a
dry run that only says what it would remove. Both run on the compute host
itself, with its nova.conf: they use its ``compute_driver``, libvirt
``connection_uri`` and ``instances_path``; ``--host`` names the host in
the database when it is not ``[DEFAULT] host``.

``network audit`` lists the ports whose instance is gone (never created,
or deleted) and that are older than ``--min-age`` seconds (default 600);
they hold a MAC and a fixed IP (``nova.network.audit``). ``network
cleanup`` releases them, a dry run without ``--yes``. Both need only the
database.

Exit codes: 0 success, 1 the command failed (the reason is printed on
stderr), 2 wrong usage.
"""

import argparse
import sys

from oslo_config import cfg
from sqlalchemy import exc as sa_exc

from nova.compute import audit
from nova.compute import instance_events
from nova.conf import CONF
from nova.conf import host_settings
from nova import context as nova_context
from nova.db import api as db_api
from nova.db import migration
from nova import exception
from nova.network import audit as network_audit
from nova.virt import driver as virt_driver

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

    host_audit, host_cleanup = _audit_and_cleanup(
        categories, 'host', 'orphaned artefacts on this compute host',
        audit_help='list domains, VIFs and instance directories of '
                   'instances the database does not place here',
        cleanup_help='remove the orphans that are safe to remove',
        audit_func=host_audit_command, cleanup_func=host_cleanup_command)
    for action in (host_audit, host_cleanup):
        action.add_argument('--host', default=None,
                            help='this host\'s name in the database '
                                 '(default: [DEFAULT] host)')

    network_audit_parser, network_cleanup = _audit_and_cleanup(
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
    return parser


def _audit_and_cleanup(categories, name, help, audit_help, cleanup_help,
                       audit_func, cleanup_func):
    """A category with ``audit`` and ``cleanup [--yes]``; both parsers."""
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
    return audit_parser, cleanup


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
