"""Quotas: each resource's limit for a project or user, what it uses, and
the checks that refuse a request going over (403, nothing kept).

A limit is the first of: the user's own (``?user_id=`` in
``os-quota-sets``), the project's, the ``default`` quota class's, the
``[quota]`` option; -1 is unlimited. Usage is counted from the database
at every check, as Nova's counting driver does (``objects/
quota_usage.py``): no reservation can be left behind to drift.

The four nova-network resources (floating and fixed IPs, security groups
and their rules) are shown by the API below microversion 2.36 and can be
set, but nothing here has them: unlimited by default, never counted.
Server groups are counted by nobody yet: their usage is 0 until server
groups exist (``_server_group_usage``).

Example::

    quotas.check_instances(ctx, flavor)      # TooManyInstances (403)
    quotas.check_key_pairs(ctx, 'alice')     # KeypairLimitExceeded
    quotas.check_metadata_items(ctx, {'a': 'b'})
    quotas.project_limits('demo')['ram']
"""

import dataclasses

from nova.conf import CONF
from nova import exception
from nova.objects import base as obj_base
from nova.objects import quota as quota_obj
from nova.objects import quota_usage

NETWORK = ('fixed_ips', 'floating_ips', 'security_group_rules',
           'security_groups')
INJECTED = ('injected_file_content_bytes', 'injected_file_path_bytes',
            'injected_files')
SERVER_GROUPS = ('server_group_members', 'server_groups')
# Every resource the API knows, in the order it shows them.
RESOURCES = ('instances', 'cores', 'ram', 'metadata_items', 'key_pairs',
             *SERVER_GROUPS, *INJECTED, *NETWORK)
# The highest limit a database integer holds.
MAX_LIMIT = 0x7FFFFFFF
UNLIMITED = -1
_INSTANCE_RESOURCES = ('instances', 'cores', 'ram')


def _configured() -> dict[str, int]:
    limits = {name: getattr(CONF.quota, name) for name in RESOURCES
              if name not in NETWORK}
    limits.update((name, UNLIMITED) for name in NETWORK)
    return limits


def class_limits(class_name: str) -> dict[str, int]:
    """The limits of a quota class: its rows over the ``[quota]``
    options."""
    limits = _configured()
    limits.update(quota_obj.QuotaLimits.for_class(class_name).get())
    return limits


def default_limits() -> dict[str, int]:
    """What a project gets when no limit was set for it."""
    return class_limits(quota_obj.DEFAULT_CLASS)


def project_limits(project_id: str) -> dict[str, int]:
    limits = default_limits()
    limits.update(quota_obj.QuotaLimits.for_project(project_id).get())
    return limits


def user_limits(project_id: str, user_id: str,
                project: dict[str, int] | None = None) -> dict[str, int]:
    """The user's limits: the project's (``project``, when read already)
    with the user's own over them."""
    limits = dict(project) if project is not None else \
        project_limits(project_id)
    limits.update(quota_obj.QuotaLimits.for_user(project_id,
                                                 user_id).get())
    return limits


def limits_of(project_id: str, user_id: str | None) -> dict[str, int]:
    if user_id is None:
        return project_limits(project_id)
    return user_limits(project_id, user_id)


def _server_group_usage(project_id: str, user_id: str | None) -> int:
    # TODO(quotas22): count the project's (user's) server groups once
    # they exist.
    return 0


def usage_of(project_id: str, user_id: str | None) -> dict[str, int]:
    """What the project (or its user) uses of each resource, counted now.

    Key pairs belong to users: a project's view counts none (as Nova's
    does), a user's view counts that user's.
    """
    used = dict.fromkeys(RESOURCES, 0)
    instances = quota_usage.InstanceUsage.count(project_id, user_id)
    used.update(instances=instances.instances, cores=instances.cores,
                ram=instances.ram)
    if user_id is not None:
        used['key_pairs'] = quota_usage.count_key_pairs(user_id)
    used['server_groups'] = _server_group_usage(project_id, user_id)
    return used


def _over(limit: int, used: int, requested: int) -> bool:
    return limit != UNLIMITED and used + requested > limit


@dataclasses.dataclass(frozen=True)
class _Scope:
    project_id: str
    user_id: str | None
    limits: dict[str, int]

    @property
    def limits_instances(self) -> bool:
        return any(self.limits[name] != UNLIMITED
                   for name in _INSTANCE_RESOURCES)

    def check_instances(self, requested: dict[str, int],
                        used: quota_usage.InstanceUsage) -> None:
        limits = self.limits
        overs = sorted(name for name in _INSTANCE_RESOURCES
                       if _over(limits[name], getattr(used, name),
                                requested[name]))
        if not overs:
            return

        def each(values):
            return ', '.join(str(v) for v in values)
        raise exception.TooManyInstances(
            overs=each(overs), req=each(requested[n] for n in overs),
            used=each(getattr(used, n) for n in overs),
            allowed=each(limits[n] for n in overs))


def _scopes(context) -> list[_Scope]:
    # The project's limits first, then the user's within it; each level
    # read once (the user's are the project's with its own over them).
    project = project_limits(context.project_id)
    return [_Scope(context.project_id, None, project),
            _Scope(context.project_id, context.user_id,
                   user_limits(context.project_id, context.user_id,
                               project=project))]


def _requested(flavor, count: int) -> dict[str, int]:
    return {'instances': count, 'cores': flavor.vcpus * count,
            'ram': flavor.memory_mb * count}


def _check_scopes(context, requested: dict[str, int]) -> None:
    # The limits of each level and the usage: one transaction, one
    # snapshot.
    with obj_base.reads_together():
        scopes = _scopes(context)
        if not any(scope.limits_instances for scope in scopes):
            # Nothing limits them (an administrator's project, often):
            # there is nothing to count.
            return
        # Both scopes' usage in one read.
        used = quota_usage.InstanceUsage.count_with_user(
            context.project_id, context.user_id)
    for scope, scope_used in zip(scopes, used):
        scope.check_instances(requested, scope_used)


def check_instances(context, flavor, count: int = 1) -> None:
    """``TooManyInstances`` unless ``count`` more instances of ``flavor``
    fit the project's and the user's instances, cores and ram."""
    _check_scopes(context, _requested(flavor, count))


def recheck_instances(context) -> None:
    """After the rows are written: ``TooManyInstances`` if the project or
    user is over now (creates that raced past ``check_instances``
    together). Nothing when ``[quota] recheck_quota`` is off."""
    if not CONF.quota.recheck_quota:
        return
    _check_scopes(context, dict.fromkeys(_INSTANCE_RESOURCES, 0))


def check_key_pairs(context, user_id: str, recheck: bool = False) -> None:
    """``KeypairLimitExceeded`` unless the user may have one more key
    pair (``recheck``: after the pair was written, unless it went over)."""
    if recheck and not CONF.quota.recheck_quota:
        return
    project_id = context.project_id
    limit = (user_limits(project_id, user_id) if project_id
             else default_limits())['key_pairs']
    if _over(limit, quota_usage.count_key_pairs(user_id),
             0 if recheck else 1):
        raise exception.KeypairLimitExceeded()


def check_metadata_items(context, metadata: dict) -> None:
    """``MetadataLimitExceeded`` when ``metadata`` has more items than
    the project's ``metadata_items`` allows (for server create and the
    metadata calls)."""
    limit = limits_of(context.project_id,
                      context.user_id)['metadata_items']
    if _over(limit, 0, len(metadata)):
        raise exception.MetadataLimitExceeded(allowed=limit)


def parse_limits(values: dict) -> dict[str, int]:
    """Limits as a request gives them (integers, or strings of one) as
    ints; ``InvalidQuotaValue`` (400) for one outside -1 .. ``MAX_LIMIT``
    (a schema cannot bound the value of a string)."""
    limits = {name: int(value) for name, value in values.items()}
    for name, limit in sorted(limits.items()):
        if not UNLIMITED <= limit <= MAX_LIMIT:
            raise exception.InvalidQuotaValue(reason=(
                'Quota limit %s for %s must be between %d and %d.'
                % (str(limit)[:20], name, UNLIMITED, MAX_LIMIT)))
    return limits


def _settable_bounds(project_id: str, user_id: str | None
                     ) -> tuple[dict[str, int], dict[str, int]]:
    """(minimum, maximum) of each limit an administrator may set without
    ``force``: no lower than what is used now, and a user's no higher
    than the project's."""
    minimum = usage_of(project_id, user_id)
    if user_id is None:
        maximum = dict.fromkeys(RESOURCES, UNLIMITED)
    else:
        maximum = project_limits(project_id)
    return minimum, maximum


def _as_bound(value: int) -> float:
    return float('inf') if value == UNLIMITED else value


def set_limits(project_id: str, user_id: str | None,
               limits: dict[str, int], force: bool = False) -> None:
    """Set the project's (or its user's) limits; ``InvalidQuotaValue``
    (400) and nothing written when one is below what is used, or a
    user's above the project's, unless ``force``."""
    if not force:
        minimum, maximum = _settable_bounds(project_id, user_id)
        for name, limit in sorted(limits.items()):
            if _as_bound(limit) < _as_bound(minimum[name]):
                raise exception.InvalidQuotaValue(reason=(
                    'Quota limit %s for %s must be greater than or equal '
                    'to already used and reserved %s.'
                    % (limit, name, minimum[name])))
            if _as_bound(limit) > _as_bound(maximum[name]):
                raise exception.InvalidQuotaValue(reason=(
                    'Quota limit %s for %s must be less than or equal to '
                    '%s.' % (limit, name, maximum[name])))
    if user_id is None:
        quota_obj.QuotaLimits.for_project(project_id).set(limits)
    else:
        quota_obj.QuotaLimits.for_user(project_id, user_id).set(limits)


def delete_limits(project_id: str, user_id: str | None) -> None:
    """Back to the defaults: the project's limits and its users' (or
    only the one user's)."""
    if user_id is None:
        quota_obj.QuotaLimits.for_project(project_id).delete()
    else:
        quota_obj.QuotaLimits.for_user(project_id, user_id).delete()


def set_class_limits(class_name: str, limits: dict[str, int]) -> None:
    quota_obj.QuotaLimits.for_class(class_name).set(limits)
