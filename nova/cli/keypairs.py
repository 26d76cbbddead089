"""The CLI's key pair commands: keypair-add, -list, -show, -delete.

As novaclient shows them: ``keypair-add`` without ``--pub-key`` has the
API generate a pair and prints its private key (the only time it can be
read: the API keeps none); with ``--pub-key FILE`` it imports that
public key and prints nothing. ``--user`` (administrators, microversion
2.10 or later) acts on another user's key pairs.
"""

import urllib.parse

from nova.api.openstack import api_version
from nova.cli import client as client_mod
from nova.cli import table

V22 = api_version.v('2.2')
V210 = api_version.v('2.10')


def _path(name: str) -> str:
    return '/os-keypairs/%s' % urllib.parse.quote(name, safe='')


def _user_query(client, args) -> dict:
    if args.user is None:
        return {}
    if client.version < V210:
        raise client_mod.CommandError(
            '--user needs microversion 2.10 or later')
    return {'user_id': args.user}


def _read_public_key(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise client_mod.CommandError(
            "Can't open or read '%s': %s" % (path, e.strerror))


def do_keypair_add(client, args, out) -> int:
    keypair = {'name': args.name}
    if args.pub_key:
        keypair['public_key'] = _read_public_key(args.pub_key)
    if args.key_type is not None:
        if client.version < V22:
            raise client_mod.CommandError(
                '--key-type needs microversion 2.2 or later')
        keypair['type'] = args.key_type
    keypair.update(_user_query(client, args))
    created = client.post('/os-keypairs', {'keypair': keypair})['keypair']
    if not args.pub_key:
        print(created['private_key'], file=out)
    return 0


def do_keypair_list(client, args, out) -> int:
    query = _user_query(client, args)
    keypairs = [k['keypair'] for k in
                client.get('/os-keypairs', query=query)['keypairs']]
    columns = ['Name', 'Type', 'Fingerprint'] if client.version >= V22 \
        else ['Name', 'Fingerprint']
    rows = [[k.get(c.lower()) for c in columns] for k in keypairs]
    print(table.render(columns, rows), file=out)
    return 0


def do_keypair_show(client, args, out) -> int:
    keypair = client.get(_path(args.keypair),
                         query=_user_query(client, args))['keypair']
    public_key = keypair.pop('public_key')
    print(table.render_dict(keypair), file=out)
    print('Public key: %s' % public_key.rstrip('\n'), file=out)
    return 0


def do_keypair_delete(client, args, out) -> int:
    query = _user_query(client, args)
    path = _path(args.keypair)
    if query:
        path += '?' + urllib.parse.urlencode(query)
    client.delete(path)
    return 0
