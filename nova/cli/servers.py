"""The CLI's server commands: boot, list, show, the actions, evacuate.

Each command is ``do_<name>(client, args, out) -> exit code``; output goes
to ``out``. A SERVER argument is a name or an id, resolved as novaclient
does (``find_server``).
"""

import json
import re
import time
import urllib.parse

from nova.api.openstack import api_version
from nova.cli import client as client_mod
from nova.cli import table

POWER_STATES = {0: 'NOSTATE', 1: 'Running', 3: 'Paused', 4: 'Shutdown',
                6: 'Crashed', 7: 'Suspended'}
LIST_COLUMNS = ['ID', 'Name', 'Status', 'Task State', 'Power State',
                'Networks']
IMAGES_MAX_VERSION = api_version.v('2.35')
_UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                      r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')


def is_uuid(text: str) -> bool:
    return bool(_UUID_RE.match(text or ''))


# -- lookups ----------------------------------------------------------

def find_server(client, name_or_id: str) -> dict:
    """The server (detail view) named or identified by ``name_or_id``."""
    if is_uuid(name_or_id):
        try:
            return client.get('/servers/%s' % name_or_id)['server']
        except client_mod.NotFound:
            pass
    pattern = '^%s$' % re.escape(name_or_id)
    matches = _servers_named(client, name_or_id, pattern, {})
    if not matches:
        # An administrator may name a server of another project.
        try:
            matches = _servers_named(client, name_or_id, pattern,
                                     {'all_tenants': '1'})
        except client_mod.Forbidden:
            matches = []
    if not matches:
        raise client_mod.CommandError(
            "No server with a name or ID of '%s' exists." % name_or_id)
    if len(matches) > 1:
        raise client_mod.CommandError(
            "Multiple server matches found for '%s', use an ID to be more "
            "specific." % name_or_id)
    return matches[0]


def _servers_named(client, name, pattern, extra):
    found = client.get('/servers/detail',
                       query=dict(extra, name=pattern))['servers']
    return [s for s in found if s.get('name') == name]


def _find_in_list(items, name_or_id, what):
    by_id = [i for i in items if i.get('id') == name_or_id]
    if by_id:
        return by_id[0]
    by_name = [i for i in items if i.get('name') == name_or_id]
    if len(by_name) == 1:
        return by_name[0]
    if by_name:
        raise client_mod.CommandError(
            "Multiple %s matches found for '%s', use an ID to be more "
            "specific." % (what, name_or_id))
    raise client_mod.CommandError(
        "No %s with a name or ID of '%s' exists." % (what, name_or_id))


def find_image(client, name_or_id: str) -> dict:
    version = min(client.version, IMAGES_MAX_VERSION)
    if is_uuid(name_or_id):
        try:
            return client.get('/images/%s' % name_or_id,
                              version=version)['image']
        except client_mod.NotFound:
            pass
    images = client.get('/images', version=version)['images']
    return _find_in_list(images, name_or_id, 'image')


def find_flavor(client, name_or_id: str) -> dict:
    try:
        return client.get('/flavors/%s' % urllib.parse.quote(
            name_or_id, safe=''))['flavor']
    except (client_mod.NotFound, client_mod.BadRequest):
        pass
    flavors = client.get('/flavors')['flavors']
    return _find_in_list(flavors, name_or_id, 'flavor')


# -- formatting ----------------------------------------------------------

def power_state_name(value) -> str:
    return POWER_STATES.get(value, 'NOSTATE')


def networks_text(addresses: dict | None) -> str:
    """``public=172.24.4.8, 2001:db8::9; private=10.0.0.3``."""
    parts = []
    for label in sorted(addresses or {}):
        ips = ', '.join(a.get('addr', '') for a in addresses[label])
        parts.append('%s=%s' % (label, ips))
    return '; '.join(parts)


def list_row(server: dict) -> list:
    return [server.get('id'), server.get('name'), server.get('status'),
            server.get('OS-EXT-STS:task_state') or '-',
            power_state_name(server.get('OS-EXT-STS:power_state')),
            networks_text(server.get('addresses'))]


def server_properties(server: dict) -> dict:
    """The rows ``show`` prints: flat, no links, addresses per network."""
    shown = {}
    for key, value in server.items():
        if key in ('links', 'addresses'):
            continue
        if key == 'image':
            value = value.get('id') if isinstance(value, dict) else value
        if key == 'flavor' and isinstance(value, dict):
            if 'id' in value:
                value = value['id']
            else:
                for sub_key, sub_value in value.items():
                    shown['flavor:%s' % sub_key] = sub_value
                continue
        shown[key] = value
    for label, entries in (server.get('addresses') or {}).items():
        shown['%s network' % label] = ', '.join(
            e.get('addr', '') for e in entries)
    return shown


def print_server(out, server: dict) -> None:
    print(table.render_dict(server_properties(server)), file=out)


# -- commands ----------------------------------------------------------

def _nics(client, specs) -> list | str | None:
    if not specs:
        return 'auto' if client.version >= api_version.v('2.37') else None
    if specs in (['none'], ['auto']):
        if client.version < api_version.v('2.37'):
            raise client_mod.CommandError(
                '--nic %s needs microversion 2.37 or later' % specs[0])
        return specs[0]
    networks = []
    for spec in specs:
        fields = dict(item.partition('=')[::2] for item in spec.split(','))
        if set(fields) != {'net-id'} or not is_uuid(fields['net-id']):
            raise client_mod.CommandError(
                "Invalid nic argument '%s': only net-id=<network UUID> is "
                "supported" % spec)
        networks.append({'uuid': fields['net-id']})
    return networks


def _poll(client, server_id, out, interval, timeout) -> dict:
    deadline = time.monotonic() + timeout
    last_status = None
    while True:
        server = client.get('/servers/%s' % server_id)['server']
        status = server.get('status')
        if status != last_status:
            print('Server building... status %s' % status, file=out)
            last_status = status
        if status == 'ACTIVE':
            print('Finished', file=out)
            return server
        if status == 'ERROR':
            fault = server.get('fault') or {}
            raise client_mod.CommandError(
                'Error building server %s: %s'
                % (server_id, fault.get('message', 'no fault recorded')))
        if time.monotonic() > deadline:
            raise client_mod.CommandError(
                'Server %s is still %s after %s seconds'
                % (server_id, status, timeout))
        time.sleep(interval)


def do_boot(client, args, out) -> int:
    image = find_image(client, args.image)
    flavor = find_flavor(client, args.flavor)
    server = {'name': args.name, 'imageRef': image['id'],
              'flavorRef': flavor['id'], 'min_count': 1, 'max_count': 1}
    networks = _nics(client, args.nic)
    if networks is not None:
        server['networks'] = networks
    if args.key_name:
        server['key_name'] = args.key_name
    created = client.post('/servers', {'server': server})['server']
    if args.poll:
        shown = _poll(client, created['id'], out, args.poll_interval,
                      args.poll_timeout)
    else:
        shown = client.get('/servers/%s' % created['id'])['server']
    print_server(out, shown)
    return 0


def do_list(client, args, out) -> int:
    query = {'all_tenants': '1' if args.all_tenants else None,
             'host': args.host, 'status': args.status,
             'name': args.name}
    servers = client.get('/servers/detail', query=query)['servers']
    # novaclient sorts the list by name.
    servers = sorted(servers, key=lambda s: (s.get('name') or '',
                                             s.get('id')))
    print(table.render(LIST_COLUMNS, [list_row(s) for s in servers]),
          file=out)
    return 0


def do_show(client, args, out) -> int:
    print_server(out, find_server(client, args.server))
    return 0


def _on_each(client, args, out, verb, send) -> int:
    failed = False
    for name in args.server:
        try:
            server = find_server(client, name)
            send(server)
            print('Request to %s server %s has been accepted.'
                  % (verb, name), file=out)
        except client_mod.ClientException as e:
            failed = True
            print(e, file=out)
    if failed:
        raise client_mod.CommandError(
            'Unable to %s the specified server(s).' % verb)
    return 0


def _action(client, body):
    def send(server):
        client.post('/servers/%s/action' % server['id'], body)
    return send


def do_start(client, args, out) -> int:
    return _on_each(client, args, out, 'start',
                    _action(client, {'os-start': None}))


def do_stop(client, args, out) -> int:
    return _on_each(client, args, out, 'stop',
                    _action(client, {'os-stop': None}))


def do_suspend(client, args, out) -> int:
    return _on_each(client, args, out, 'suspend',
                    _action(client, {'suspend': None}))


def do_resume(client, args, out) -> int:
    return _on_each(client, args, out, 'resume',
                    _action(client, {'resume': None}))


def do_pause(client, args, out) -> int:
    return _on_each(client, args, out, 'pause',
                    _action(client, {'pause': None}))


def do_unpause(client, args, out) -> int:
    return _on_each(client, args, out, 'unpause',
                    _action(client, {'unpause': None}))


def do_reboot(client, args, out) -> int:
    kind = 'HARD' if args.hard else 'SOFT'
    return _on_each(client, args, out, 'reboot',
                    _action(client, {'reboot': {'type': kind}}))


def do_delete(client, args, out) -> int:
    def send(server):
        client.delete('/servers/%s' % server['id'])
    return _on_each(client, args, out, 'delete', send)


def do_reset_state(client, args, out) -> int:
    state = 'active' if args.active else 'error'
    failed = False
    for name in args.server:
        try:
            server = find_server(client, name)
            client.post('/servers/%s/action' % server['id'],
                        {'os-resetState': {'state': state}})
            print('Reset state for server %s succeeded; new state is %s'
                  % (name, state), file=out)
        except client_mod.ClientException as e:
            failed = True
            print('Reset state for server %s failed: %s' % (name, e),
                  file=out)
    if failed:
        raise client_mod.CommandError(
            'Unable to reset the state for the specified server(s).')
    return 0


def evacuate_body(client, host, on_shared_storage, force) -> dict:
    body = {}
    if host:
        body['host'] = host
    if client.version < api_version.v('2.14'):
        body['onSharedStorage'] = bool(on_shared_storage)
    elif on_shared_storage:
        raise client_mod.CommandError(
            '--on-shared-storage is only supported below microversion '
            '2.14; from 2.14 the hosts find out themselves (use '
            '--os-compute-api-version 2.13 to state it)')
    if force:
        if client.version < api_version.v('2.29'):
            raise client_mod.CommandError(
                '--force needs microversion 2.29 or later')
        body['force'] = True
    return {'evacuate': body}


def do_evacuate(client, args, out) -> int:
    server = find_server(client, args.server)
    body = evacuate_body(client, args.host, args.on_shared_storage,
                         args.force)
    result = client.post('/servers/%s/action' % server['id'], body)
    print('Request to evacuate server %s has been accepted.' % args.server,
          file=out)
    if isinstance(result, dict) and result:
        print(table.render_dict(result), file=out)
    return 0


def _server_id_for_actions(client, name_or_id) -> str:
    # From 2.21 the actions of a deleted server are still listed; it can
    # only be named by id then.
    if is_uuid(name_or_id) and client.version >= api_version.v('2.21'):
        return name_or_id
    return find_server(client, name_or_id)['id']


def do_instance_action_list(client, args, out) -> int:
    server_id = _server_id_for_actions(client, args.server)
    actions = client.get('/servers/%s/os-instance-actions'
                         % server_id)['instanceActions']
    rows = [[a.get('action'), a.get('request_id'), a.get('message'),
             a.get('start_time')] for a in actions]
    print(table.render(['Action', 'Request_ID', 'Message', 'Start_Time'],
                       rows), file=out)
    return 0


def do_instance_action(client, args, out) -> int:
    server_id = _server_id_for_actions(client, args.server)
    action = client.get('/servers/%s/os-instance-actions/%s' % (
        server_id, urllib.parse.quote(args.request_id, safe=''))
    )['instanceAction']
    if 'events' in action:
        action['events'] = json.dumps(action['events'], indent=2,
                                      sort_keys=True)
    print(table.render_dict(action), file=out)
    return 0
