"""The ``nova`` command line: an operator's client of the REST API.

    nova [--os-endpoint URL] [--os-token TOKEN]
         [--os-compute-api-version VERSION] COMMAND [ARGS]

The endpoint comes from ``--os-endpoint``, else ``$OS_COMPUTE_API``, else
``$NOVA_ENDPOINT``; the token from ``--os-token`` or ``$OS_TOKEN``. With
``$OS_AUTH_URL`` and no token, both come from Keystone as for the
OpenStack clients (``keystone_auth.py``: ``OS_USERNAME``, ``OS_PASSWORD``,
``OS_PROJECT_NAME``, ...). Otherwise the defaults are
``http://127.0.0.1:8774/v2.1`` and ``admin:admin``, the embedded default's
noauth2 administrator. The microversion defaults to the newest
both sides know (``latest``).

Exit codes: 0 success, 1 the request or command failed (``ERROR
(<kind>): <message>`` on stderr), 2 wrong usage (also ``ERROR
(UsageError): ...`` when the API says an argument names nothing, e.g. an
unknown host).
"""

import argparse
import os
import sys

from nova.cli import admin
from nova.cli import client as client_mod
from nova.cli import host_evacuate
from nova.cli import host_evacuate_view
from nova.cli import keypairs
from nova.cli import keystone_auth
from nova.cli import servers

DEFAULT_TOKEN = keystone_auth.DEFAULT_TOKEN
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _env(environ, *names, default=None):
    for name in names:
        if environ.get(name):
            return environ[name]
    return default


def _positive(kind, what):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError('%s: %r' % (what, text))
        if not value > 0:
            raise argparse.ArgumentTypeError('%s: %r' % (what, text))
        return value
    return parse


def _add_servers_arg(parser, many=False):
    if many:
        parser.add_argument('server', nargs='+', metavar='SERVER',
                            help='name or ID of a server')
    else:
        parser.add_argument('server', metavar='SERVER',
                            help='name or ID of the server')


def build_parser(environ=None) -> argparse.ArgumentParser:
    environ = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(
        prog='nova', description='Command line client of the compute '
                                 'service REST API.')
    parser.add_argument(
        '--os-endpoint', metavar='URL',
        default=_env(environ, 'OS_COMPUTE_API', 'NOVA_ENDPOINT'),
        help='Compute API endpoint (env OS_COMPUTE_API or NOVA_ENDPOINT; '
             'default: the catalog\'s with OS_AUTH_URL, else %s)'
             % client_mod.DEFAULT_ENDPOINT)
    parser.add_argument(
        '--os-token', metavar='TOKEN',
        default=_env(environ, 'OS_TOKEN'),
        help='token sent as X-Auth-Token (env OS_TOKEN; default: one from '
             'Keystone with OS_AUTH_URL, else %s)' % DEFAULT_TOKEN)
    keystone = parser.add_argument_group(
        'Keystone', 'password authentication, as the OpenStack clients '
                    '(used when an auth URL is set and no token given)')
    for name, env_names, default in (
            ('auth-url', ('OS_AUTH_URL',), None),
            ('username', ('OS_USERNAME',), None),
            ('password', ('OS_PASSWORD',), None),
            ('project-name', ('OS_PROJECT_NAME', 'OS_TENANT_NAME'), None),
            ('user-domain-name', ('OS_USER_DOMAIN_NAME',), 'Default'),
            ('project-domain-name', ('OS_PROJECT_DOMAIN_NAME',), 'Default'),
            ('region-name', ('OS_REGION_NAME',), None)):
        keystone.add_argument(
            '--os-' + name, default=_env(environ, *env_names,
                                         default=default),
            help='env %s' % ' or '.join(env_names))
    parser.add_argument(
        '--os-compute-api-version', metavar='VERSION',
        default=_env(environ, 'OS_COMPUTE_API_VERSION', default='latest'),
        help='microversion: 2.X, 2 or latest (env OS_COMPUTE_API_VERSION; '
             'default latest)')
    parser.add_argument('--timeout', type=float, default=60.0,
                        help='seconds to wait for each HTTP response')
    commands = parser.add_subparsers(dest='command', metavar='COMMAND',
                                     required=True)

    def command(name, func, help_text):
        sub = commands.add_parser(name, help=help_text,
                                  description=help_text)
        sub.set_defaults(func=func)
        return sub

    boot = command('boot', servers.do_boot, 'Boot a new server.')
    boot.add_argument('--image', required=True,
                      help='name or ID of the image')
    boot.add_argument('--flavor', required=True,
                      help='name or ID of the flavor')
    boot.add_argument('--nic', action='append', default=[],
                      metavar='net-id=NETWORK_UUID',
                      help='attach a port on a network (repeatable); '
                           '"none" or "auto" from microversion 2.37')
    boot.add_argument('--key-name', dest='key_name', metavar='KEY_NAME',
                      help='the key pair to boot with (keypair-add)')
    boot.add_argument('--poll', action='store_true',
                      help='wait until the server is ACTIVE (or ERROR)')
    boot.add_argument('--poll-interval', type=float, default=1.0,
                      help=argparse.SUPPRESS)
    boot.add_argument('--poll-timeout', type=float, default=600.0,
                      help='seconds --poll waits at most')
    boot.add_argument('name', metavar='NAME', help='name of the server')

    lister = command('list', servers.do_list, 'List servers.')
    lister.add_argument('--all-tenants', action='store_true',
                        help='servers of every project (admin)')
    lister.add_argument('--host', help='only servers on this host (admin)')
    lister.add_argument('--status', help='only servers with this status')
    lister.add_argument('--name', help='only servers whose name matches '
                                       'this regular expression')

    show = command('show', servers.do_show, 'Show details of a server.')
    _add_servers_arg(show)

    for name, func, text in (
            ('start', servers.do_start, 'Start servers.'),
            ('stop', servers.do_stop, 'Stop servers.'),
            ('suspend', servers.do_suspend, 'Suspend servers.'),
            ('resume', servers.do_resume, 'Resume servers.'),
            ('pause', servers.do_pause, 'Pause servers.'),
            ('unpause', servers.do_unpause, 'Unpause servers.'),
            ('delete', servers.do_delete, 'Delete servers.')):
        _add_servers_arg(command(name, func, text), many=True)

    reboot = command('reboot', servers.do_reboot, 'Reboot servers.')
    reboot.add_argument('--hard', action='store_true',
                        help='hard reboot (power cycle) instead of soft')
    _add_servers_arg(reboot, many=True)

    reset = command('reset-state', servers.do_reset_state,
                    'Reset the state of servers (error unless --active).')
    reset.add_argument('--active', action='store_true',
                       help="set 'active' instead of 'error'")
    _add_servers_arg(reset, many=True)

    evacuate = command('evacuate', servers.do_evacuate,
                       'Evacuate a server from its failed host.')
    evacuate.add_argument('--on-shared-storage', action='store_true',
                          help='state that the instance files are on '
                               'shared storage (below microversion 2.14)')
    evacuate.add_argument('--force', action='store_true',
                          help='skip the checks of the named target host '
                               '(microversion 2.29 or later)')
    _add_servers_arg(evacuate)
    evacuate.add_argument('host', nargs='?', metavar='HOST',
                          help='target host (default: the conductor '
                               'chooses)')

    host_evac = command('host-evacuate', host_evacuate_view.do_host_evacuate,
                        'Evacuate every server of a failed host.')
    host_evac.description = (
        'Evacuate every server of a failed host. The conductor runs it '
        '(POST /os-host-evacuations): at most [conductor] '
        'host_evacuate_workers servers at a time, each to a target the '
        'conductor chooses (or --target-host); a server whose target '
        'failed is retried once on another target the conductor chooses '
        '(never one that already failed for it), and a target that fails '
        'twice in a row is skipped for the rest of the run. Without '
        '--wait: once every first request is made, one row per server, '
        'accepted or not (exit 1 if one was not). With --wait: follow the '
        'run to its end; on a terminal a progress line (done / failed / '
        'in progress, ETA), then a table of each server\'s outcome, host, '
        'attempts and fault message. Exit status 1 unless every server '
        'ended done.')
    host_evac.add_argument('--target_host', '--target-host',
                           dest='target_host', metavar='HOST',
                           help='target host of every first attempt '
                                '(default: chosen per server)')
    host_evac.add_argument('--on-shared-storage', action='store_true',
                           help='state that the instance files are on '
                                'shared storage (below microversion 2.14)')
    host_evac.add_argument('--wait', action='store_true',
                           help='wait for every evacuation to end and '
                                'report each outcome (exit 1 if any did '
                                'not end done)')
    host_evac.add_argument('--poll-interval', dest='poll_interval',
                           metavar='SECONDS',
                           type=_positive(float, 'seconds > 0'),
                           help='with --wait: seconds between reads of '
                                'the run (default %g)'
                                % host_evacuate.DEFAULT_POLL_INTERVAL)
    host_evac.add_argument('--timeout', dest='wait_timeout',
                           metavar='SECONDS',
                           type=_positive(float, 'seconds > 0'),
                           help='with --wait: stop waiting after this '
                                'many seconds; the run goes on, servers '
                                'still evacuating are reported '
                                'in-progress, those not yet requested '
                                'not-started (exit 1). Default: no limit. '
                                '(The --timeout before the command is the '
                                'HTTP timeout.)')
    host_evac.add_argument('host', metavar='HOST', help='the failed host')

    evac_show = command('host-evacuation-show',
                        host_evacuate_view.do_host_evacuation_show,
                        'Show a host-evacuate run: each server\'s outcome.')
    evac_show.add_argument('evacuation_id', metavar='ID',
                           help='the run\'s id (host-evacuate prints it)')

    actions = command('instance-action-list',
                      servers.do_instance_action_list,
                      'List the actions recorded for a server.')
    _add_servers_arg(actions)
    action = command('instance-action', servers.do_instance_action,
                     'Show one action of a server, with its events.')
    _add_servers_arg(action)
    action.add_argument('request_id', metavar='REQUEST_ID')

    services = command('service-list', admin.do_service_list,
                       'List services.')
    services.add_argument('--host', help='only services of this host')
    services.add_argument('--binary', help='only services of this binary')

    force_down = command('service-force-down', admin.do_service_force_down,
                         'Force a service down (or, with --unset, clear '
                         'it).')
    force_down.add_argument('--unset', action='store_true',
                            help='clear the forced_down flag')
    force_down.add_argument('host', metavar='HOST')
    force_down.add_argument('binary', metavar='BINARY')

    keypair_add = command('keypair-add', keypairs.do_keypair_add,
                          'Create a key pair (printing its private key) '
                          'or, with --pub-key, import a public key.')
    keypair_add.add_argument('--pub-key', dest='pub_key', metavar='FILE',
                             help='the public key to import')
    keypair_add.add_argument('--key-type', dest='key_type',
                             choices=('ssh', 'x509'),
                             help='ssh (default) or x509 (microversion '
                                  '2.2 or later)')
    keypair_add.add_argument('name', metavar='NAME',
                             help='name of the key pair')
    command('keypair-list', keypairs.do_keypair_list, 'List key pairs.')
    for name, func, text in (
            ('keypair-show', keypairs.do_keypair_show, 'Show a key pair.'),
            ('keypair-delete', keypairs.do_keypair_delete,
             'Delete a key pair.')):
        sub = command(name, func, text)
        sub.add_argument('keypair', metavar='KEYPAIR',
                         help='name of the key pair')
    for sub_name in ('keypair-add', 'keypair-list', 'keypair-show',
                     'keypair-delete'):
        commands.choices[sub_name].add_argument(
            '--user', metavar='USER_ID',
            help="another user's key pairs (administrators; microversion "
                 "2.10 or later)")

    migrations = command('migration-list', admin.do_migration_list,
                         'List migrations (evacuations).')
    migrations.add_argument('--host', help='source or destination host')
    migrations.add_argument('--status')
    migrations.add_argument('--instance-uuid', dest='instance_uuid')
    migrations.add_argument('--migration-type', dest='migration_type')
    return parser


def main(argv=None, stdout=None, stderr=None, environ=None) -> int:
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    args = build_parser(environ).parse_args(argv)
    try:
        endpoint, token = keystone_auth.resolve(args)
        client = client_mod.Client(endpoint, token, timeout=args.timeout)
        client.negotiate(args.os_compute_api_version)
        return args.func(client, args, stdout)
    except client_mod.ClientException as e:
        print('ERROR (%s): %s' % (type(e).__name__, e), file=stderr)
        if isinstance(e, client_mod.UsageError):
            return EXIT_USAGE
        return EXIT_FAILED
