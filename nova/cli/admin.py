"""The CLI's administrator commands: services and migrations."""

from nova.api.openstack import api_version
from nova.cli import client as client_mod
from nova.cli import table

V211 = api_version.v('2.11')
V223 = api_version.v('2.23')
V253 = api_version.v('2.53')
COMPUTE_BINARY = 'nova-compute'


def _disk_leases(client, host) -> dict[str, str]:
    """This project's own resource: each compute host's disk leases in a
    sentence (with the warning when it shares storage without them), by
    host; only the hosts that report them."""
    found = client.get('/os-disk-leases', query={'host': host})
    return {entry['host']: entry['summary']
            for entry in found['disk_leases'] if entry.get('summary')}


def do_service_list(client, args, out) -> int:
    services = client.get('/os-services', query={
        'host': args.host, 'binary': args.binary})['services']
    headers = ['Id', 'Binary', 'Host', 'Zone', 'Status', 'State',
               'Updated_at', 'Disabled Reason']
    if client.version >= V211:
        headers.append('Forced down')
    leases = _disk_leases(client, args.host) if any(
        s.get('binary') == COMPUTE_BINARY for s in services) else {}
    if leases:
        headers.append('Disk Leases')
    rows = []
    for s in services:
        row = [s.get('id'), s.get('binary'), s.get('host'), s.get('zone'),
               s.get('status'), s.get('state'), s.get('updated_at'),
               s.get('disabled_reason') or '-']
        if client.version >= V211:
            row.append(s.get('forced_down'))
        if leases:
            row.append((leases.get(s.get('host')) or '-')
                       if s.get('binary') == COMPUTE_BINARY else '-')
        rows.append(row)
    print(table.render(headers, rows), file=out)
    return 0


def _find_service(client, host, binary) -> dict:
    services = client.get('/os-services', query={
        'host': host, 'binary': binary})['services']
    services = [s for s in services
                if s.get('host') == host and s.get('binary') == binary]
    if not services:
        raise client_mod.CommandError(
            'No service %s on host %s exists.' % (binary, host))
    return services[0]


def do_service_force_down(client, args, out) -> int:
    forced_down = not args.unset
    if client.version < V211:
        raise client_mod.CommandError(
            'service-force-down needs microversion 2.11 or later')
    if client.version >= V253:
        service = _find_service(client, args.host, args.binary)
        result = client.put('/os-services/%s' % service['id'],
                            {'forced_down': forced_down})['service']
    else:
        result = client.put('/os-services/force-down', {
            'host': args.host, 'binary': args.binary,
            'forced_down': forced_down})['service']
    print(table.render(['Host', 'Binary', 'Forced down'],
                       [[result.get('host'), result.get('binary'),
                         result.get('forced_down')]]), file=out)
    return 0


MIGRATION_COLUMNS = [
    ('Id', 'id'), ('Source Node', 'source_node'),
    ('Dest Node', 'dest_node'), ('Source Compute', 'source_compute'),
    ('Dest Compute', 'dest_compute'), ('Dest Host', 'dest_host'),
    ('Status', 'status'), ('Instance UUID', 'instance_uuid'),
    ('Old Flavor', 'old_instance_type_id'),
    ('New Flavor', 'new_instance_type_id'), ('Created At', 'created_at'),
    ('Updated At', 'updated_at'),
]


def do_migration_list(client, args, out) -> int:
    migrations = client.get('/os-migrations', query={
        'host': args.host, 'status': args.status,
        'instance_uuid': args.instance_uuid,
        'migration_type': args.migration_type})['migrations']
    columns = list(MIGRATION_COLUMNS)
    if client.version >= V223:
        columns.append(('Type', 'migration_type'))
    rows = [[m.get(key) for _header, key in columns] for m in migrations]
    print(table.render([header for header, _key in columns], rows),
          file=out)
    return 0
