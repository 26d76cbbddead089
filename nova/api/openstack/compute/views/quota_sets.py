"""How quota sets, quota class sets and ``/limits`` look, by
microversion.

A quota set shows every resource below 2.36, no nova-network resource
from 2.36 and no injected file from 2.57. A quota class set shows no
server group resource below 2.50, no nova-network resource from 2.50
and no injected file from 2.57. ``/limits`` maps the resources to its
own names (``maxTotalRAMSize``, ``totalRAMUsed`` ...) and drops the
nova-network ones at 2.36, ``maxImageMeta`` at 2.39 and the injected
files at 2.57; ``rate`` is always empty, as in Nova.
"""

from nova.compute import quotas


def _hidden_in_quota_sets(req) -> tuple[str, ...]:
    if req.is_version('2.57'):
        return quotas.NETWORK + quotas.INJECTED
    if req.is_version('2.36'):
        return quotas.NETWORK
    return ()


def _hidden_in_quota_classes(req) -> tuple[str, ...]:
    if req.is_version('2.57'):
        return quotas.NETWORK + quotas.INJECTED
    if req.is_version('2.50'):
        return quotas.NETWORK
    return quotas.SERVER_GROUPS


def _shown(values: dict, hidden, id_: str | None) -> dict:
    view = {} if id_ is None else {'id': id_}
    view.update((name, values[name]) for name in quotas.RESOURCES
                if name not in hidden)
    return view


def quota_set(req, limits: dict[str, int], id_: str | None = None) -> dict:
    return {'quota_set': _shown(limits, _hidden_in_quota_sets(req), id_)}


def quota_set_detail(req, limits: dict[str, int], used: dict[str, int],
                     id_: str) -> dict:
    # No reservations are ever held (usage is counted): reserved is 0.
    detail = {name: {'limit': limits[name], 'in_use': used[name],
                     'reserved': 0} for name in quotas.RESOURCES}
    return {'quota_set': _shown(detail, _hidden_in_quota_sets(req), id_)}


def quota_class_set(req, limits: dict[str, int],
                    id_: str | None = None) -> dict:
    return {'quota_class_set': _shown(limits,
                                      _hidden_in_quota_classes(req), id_)}


# resource -> its max* names in /limits.
_LIMIT_NAMES = {
    'ram': ('maxTotalRAMSize',),
    'instances': ('maxTotalInstances',),
    'cores': ('maxTotalCores',),
    'key_pairs': ('maxTotalKeypairs',),
    'floating_ips': ('maxTotalFloatingIps',),
    'metadata_items': ('maxServerMeta', 'maxImageMeta'),
    'injected_files': ('maxPersonality',),
    'injected_file_content_bytes': ('maxPersonalitySize',),
    'security_groups': ('maxSecurityGroups',),
    'security_group_rules': ('maxSecurityGroupRules',),
    'server_groups': ('maxServerGroups',),
    'server_group_members': ('maxServerGroupMembers',),
}
# resource -> its total*Used name in /limits.
_USED_NAMES = {
    'ram': 'totalRAMUsed',
    'cores': 'totalCoresUsed',
    'instances': 'totalInstancesUsed',
    'floating_ips': 'totalFloatingIpsUsed',
    'security_groups': 'totalSecurityGroupsUsed',
    'server_groups': 'totalServerGroupsUsed',
}


def _hidden_in_limits(req) -> tuple[str, ...]:
    hidden: tuple[str, ...] = ()
    if req.is_version('2.36'):
        hidden += ('floating_ips', 'security_groups', 'security_group_rules')
    if req.is_version('2.57'):
        hidden += ('injected_files', 'injected_file_content_bytes')
    return hidden


def limits(req, limits_: dict[str, int], used: dict[str, int]) -> dict:
    hidden = _hidden_in_limits(req)
    absolute = {}
    for resource, names in _LIMIT_NAMES.items():
        if resource in hidden:
            continue
        for name in names:
            if name == 'maxImageMeta' and req.is_version('2.39'):
                continue
            absolute[name] = limits_[resource]
    for resource, name in _USED_NAMES.items():
        if resource not in hidden:
            absolute[name] = used[resource]
    return {'limits': {'rate': [], 'absolute': absolute}}
