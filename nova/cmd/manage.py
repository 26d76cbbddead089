"""nova-manage: administration of the database.

    nova-manage [--config-file F ...] db sync [VERSION]
    nova-manage [--config-file F ...] db version

Exit codes: 0 success, 1 the command failed (the reason is printed on
stderr), 2 wrong usage.
"""

import argparse
import sys

from oslo_config import cfg
from sqlalchemy import exc as sa_exc

from nova.conf import CONF
from nova.db import api as db_api
from nova.db import migration
from nova import exception

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
    return parser


def db_sync(args) -> int:
    version = migration.db_sync(args.version)
    print('Database schema is at version %s' % version)
    return EXIT_OK


def db_version(args) -> int:
    print(migration.db_version())
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
