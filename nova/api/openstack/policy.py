"""Who may do what: the API's policy rules, by Nova's rule names.

Two kinds of rule: ``ADMIN`` (administrators only) and ``OWNER``
(administrators, or members of the project that owns the target). There is
no policy file; the table below is the policy.

Example::

    policy.authorize(ctx, 'os_compute_api:os-evacuate')
    policy.authorize(ctx, 'os_compute_api:servers:show',
                     target_project_id=instance.project_id)
"""

from nova import exception

ADMIN = 'admin'
OWNER = 'admin_or_owner'

RULES = {
    'os_compute_api:servers:index': OWNER,
    'os_compute_api:servers:index:get_all_tenants': ADMIN,
    'os_compute_api:servers:allow_all_filters': ADMIN,
    'os_compute_api:servers:show': OWNER,
    'os_compute_api:servers:create': OWNER,
    'os_compute_api:servers:delete': OWNER,
    'os_compute_api:servers:start': OWNER,
    'os_compute_api:servers:stop': OWNER,
    'os_compute_api:servers:reboot': OWNER,
    'os_compute_api:os-suspend-server:suspend': OWNER,
    'os_compute_api:os-suspend-server:resume': OWNER,
    'os_compute_api:os-extended-server-attributes': ADMIN,
    'os_compute_api:os-evacuate': ADMIN,
    'os_compute_api:os-admin-actions:reset_state': ADMIN,
    'os_compute_api:os-services:list': ADMIN,
    'os_compute_api:os-services:update': ADMIN,
    'os_compute_api:os-migrations:index': ADMIN,
    'os_compute_api:os-server-external-events:create': ADMIN,
    'os_compute_api:os-instance-actions:list': OWNER,
    'os_compute_api:os-instance-actions:show': OWNER,
    'os_compute_api:os-instance-actions:events': ADMIN,
    'os_compute_api:os-instance-actions:events:details': ADMIN,
    'os_compute_api:os-flavors': OWNER,
    'os_compute_api:images': OWNER,
    # Below 2.51 only administrators see the events of an action; from
    # 2.51 the owner sees them too (without tracebacks).
    'os_compute_api:os-instance-actions:events:2.51': OWNER,
}


def check(context, rule: str, target_project_id: str | None = None) -> bool:
    kind = RULES[rule]  # KeyError: a rule name typo is a bug, not a 403
    if context.is_admin:
        return True
    if kind == ADMIN:
        return False
    return target_project_id is None or (
        target_project_id == context.project_id)


def authorize(context, rule: str,
              target_project_id: str | None = None) -> None:
    """Raise PolicyNotAuthorized (403) unless ``check`` allows it."""
    if not check(context, rule, target_project_id):
        raise exception.PolicyNotAuthorized(action=rule)
