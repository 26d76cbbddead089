"""Who may do what: the API's policy rules, by Nova's rule names, through
oslo.policy.

Four kinds of default: ``ADMIN`` (``rule:context_is_admin``: the ``admin``
role), ``OWNER`` (``rule:admin_or_owner``: an administrator, or a member of
the project that owns the target), ``USER`` (``rule:admin_or_user``: an
administrator, or the user who owns the target: key pairs belong to users,
not projects) and ``ANYONE`` (Nova's ``@``: any authenticated caller; the
default quotas and ``/limits``). The defaults are registered in code
(``RULES``); an operator overrides any of them in the policy file
(``[oslo_policy] policy_file``, ``policy.yaml`` in the configuration
directory; ``tox -e genpolicy`` writes ``etc/nova/policy.yaml.sample``
with every rule and its default), read again when it changes (looked at
once a second at most: ``RELOAD_CHECK_INTERVAL``).

A decision is remembered while the rules stay the same (``_Enforcer``):
oslo.policy spends about 0.3 ms on each, mostly inspecting its checks'
signatures and looking for the policy file, and every API request makes
one or more.

Example::

    policy.authorize(ctx, 'os_compute_api:os-evacuate')
    policy.authorize(ctx, 'os_compute_api:servers:show',
                     target_project_id=instance.project_id)
"""

import threading
import time

from oslo_policy import policy as oslo_policy

from nova.conf import CONF
from nova import exception

ADMIN = 'admin'
OWNER = 'admin_or_owner'
USER = 'admin_or_user'
ANYONE = 'anyone'

RULES = {
    'os_compute_api:servers:index': OWNER,
    'os_compute_api:servers:index:get_all_tenants': ADMIN,
    'os_compute_api:servers:allow_all_filters': ADMIN,
    'os_compute_api:servers:show': OWNER,
    'os_compute_api:servers:create': OWNER,
    'os_compute_api:servers:create:requested_destination': ADMIN,
    'os_compute_api:servers:delete': OWNER,
    'os_compute_api:servers:start': OWNER,
    'os_compute_api:servers:stop': OWNER,
    'os_compute_api:servers:reboot': OWNER,
    'os_compute_api:servers:update': OWNER,
    'os_compute_api:servers:rebuild': OWNER,
    'os_compute_api:os-lock-server:lock': OWNER,
    'os_compute_api:os-lock-server:unlock': OWNER,
    'os_compute_api:os-lock-server:unlock:unlock_override': ADMIN,
    'os_compute_api:server-metadata:index': OWNER,
    'os_compute_api:server-metadata:show': OWNER,
    'os_compute_api:server-metadata:create': OWNER,
    'os_compute_api:server-metadata:update': OWNER,
    'os_compute_api:server-metadata:update_all': OWNER,
    'os_compute_api:server-metadata:delete': OWNER,
    'os_compute_api:os-suspend-server:suspend': OWNER,
    'os_compute_api:os-suspend-server:resume': OWNER,
    'os_compute_api:os-pause-server:pause': OWNER,
    'os_compute_api:os-pause-server:unpause': OWNER,
    'os_compute_api:servers:create_image': OWNER,
    'os_compute_api:os-create-backup': OWNER,
    'os_compute_api:os-extended-server-attributes': ADMIN,
    'os_compute_api:os-evacuate': ADMIN,
    'os_compute_api:os-migrate-server:migrate': ADMIN,
    'os_compute_api:os-deferred-delete:restore': OWNER,
    'os_compute_api:os-deferred-delete:force': OWNER,
    'os_compute_api:os-admin-actions:reset_state': ADMIN,
    'os_compute_api:os-services:list': ADMIN,
    'os_compute_api:os-services:update': ADMIN,
    'os_compute_api:os-disk-leases:list': ADMIN,
    'os_compute_api:os-migrations:index': ADMIN,
    'os_compute_api:os-server-external-events:create': ADMIN,
    'os_compute_api:os-instance-actions:list': OWNER,
    'os_compute_api:os-instance-actions:show': OWNER,
    'os_compute_api:os-instance-actions:events': ADMIN,
    'os_compute_api:os-instance-actions:events:details': ADMIN,
    'os_compute_api:os-flavors': OWNER,
    'os_compute_api:os-flavor-manage:create': ADMIN,
    'os_compute_api:os-flavor-manage:update': ADMIN,
    'os_compute_api:os-flavor-manage:delete': ADMIN,
    'os_compute_api:os-flavor-access': ADMIN,
    'os_compute_api:os-flavor-access:add_tenant_access': ADMIN,
    'os_compute_api:os-flavor-access:remove_tenant_access': ADMIN,
    'os_compute_api:os-flavor-extra-specs:index': OWNER,
    'os_compute_api:os-flavor-extra-specs:show': OWNER,
    'os_compute_api:os-flavor-extra-specs:create': ADMIN,
    'os_compute_api:os-flavor-extra-specs:update': ADMIN,
    'os_compute_api:os-flavor-extra-specs:delete': ADMIN,
    'os_compute_api:images': OWNER,
    'os_compute_api:os-networks:view': OWNER,
    'os_compute_api:os-keypairs:index': USER,
    'os_compute_api:os-keypairs:show': USER,
    'os_compute_api:os-keypairs:create': USER,
    'os_compute_api:os-keypairs:delete': USER,
    'os_compute_api:os-server-groups:index': OWNER,
    'os_compute_api:os-server-groups:index:all_projects': ADMIN,
    'os_compute_api:os-server-groups:show': OWNER,
    'os_compute_api:os-server-groups:create': OWNER,
    'os_compute_api:os-server-groups:delete': OWNER,
    'os_compute_api:os-aggregates:index': ADMIN,
    'os_compute_api:os-aggregates:create': ADMIN,
    'os_compute_api:os-aggregates:show': ADMIN,
    'os_compute_api:os-aggregates:update': ADMIN,
    'os_compute_api:os-aggregates:delete': ADMIN,
    'os_compute_api:os-aggregates:add_host': ADMIN,
    'os_compute_api:os-aggregates:remove_host': ADMIN,
    'os_compute_api:os-aggregates:set_metadata': ADMIN,
    'os_compute_api:os-availability-zone:list': OWNER,
    'os_compute_api:os-availability-zone:detail': ADMIN,
    'os_compute_api:os-hosts:list': ADMIN,
    'os_compute_api:os-hosts:show': ADMIN,
    'os_compute_api:os-hosts:update': ADMIN,
    'os_compute_api:os-hosts:reboot': ADMIN,
    'os_compute_api:os-hosts:shutdown': ADMIN,
    'os_compute_api:os-hosts:start': ADMIN,
    'os_compute_api:servers:create:forced_host': ADMIN,
    'os_compute_api:os-quota-sets:show': OWNER,
    'os_compute_api:os-quota-sets:detail': OWNER,
    'os_compute_api:os-quota-sets:defaults': ANYONE,
    'os_compute_api:os-quota-sets:update': ADMIN,
    'os_compute_api:os-quota-sets:delete': ADMIN,
    'os_compute_api:os-quota-class-sets:show': ADMIN,
    'os_compute_api:os-quota-class-sets:update': ADMIN,
    'os_compute_api:limits': ANYONE,
    'os_compute_api:limits:other_project': ADMIN,
    'os_compute_api:os-host-evacuations:create': ADMIN,
    'os_compute_api:os-host-evacuations:show': ADMIN,
    'os_compute_api:os-server-diagnostics': ADMIN,
    'os_compute_api:extensions': OWNER,
    'os_compute_api:os-simple-tenant-usage:list': ADMIN,
    'os_compute_api:os-simple-tenant-usage:show': OWNER,
    'os_compute_api:os-instance-usage-audit-log:list': ADMIN,
    'os_compute_api:os-instance-usage-audit-log:show': ADMIN,
    'os_compute_api:os-hypervisors:list': ADMIN,
    'os_compute_api:os-hypervisors:list-detail': ADMIN,
    'os_compute_api:os-hypervisors:show': ADMIN,
    'os_compute_api:os-hypervisors:statistics': ADMIN,
    'os_compute_api:os-hypervisors:uptime': ADMIN,
    'os_compute_api:os-hypervisors:search': ADMIN,
    'os_compute_api:os-hypervisors:servers': ADMIN,
    # Below 2.51 only administrators see the events of an action; from
    # 2.51 the owner sees them too (without tracebacks).
    'os_compute_api:os-instance-actions:events:2.51': OWNER,
}


# What each rule guards, for the sample policy file.
DESCRIPTIONS = {
    'os_compute_api:servers:index': 'List servers (GET /servers, '
                                    '/servers/detail).',
    'os_compute_api:servers:index:get_all_tenants':
        'List the servers of every project (all_tenants=1).',
    'os_compute_api:servers:allow_all_filters':
        'Filter server lists by any field (host, node, ...).',
    'os_compute_api:servers:show': 'Show a server.',
    'os_compute_api:servers:create': 'Create a server.',
    'os_compute_api:servers:create:requested_destination':
        'Create a server on a named host or hypervisor (host, '
        'hypervisor_hostname; microversion 2.74).',
    'os_compute_api:servers:delete': 'Delete a server.',
    'os_compute_api:servers:start': 'Start a server (os-start).',
    'os_compute_api:servers:stop': 'Stop a server (os-stop).',
    'os_compute_api:servers:reboot': 'Reboot a server.',
    'os_compute_api:servers:update':
        'Update a server (name, description, access addresses).',
    'os_compute_api:servers:rebuild':
        'Rebuild a server from an image on its own host.',
    'os_compute_api:os-lock-server:lock': 'Lock a server.',
    'os_compute_api:os-lock-server:unlock': 'Unlock a server.',
    'os_compute_api:os-lock-server:unlock:unlock_override':
        'Unlock a server an administrator locked.',
    'os_compute_api:server-metadata:index':
        'List the metadata of a server.',
    'os_compute_api:server-metadata:show':
        'Show one metadata item of a server.',
    'os_compute_api:server-metadata:create':
        'Set metadata items of a server, keeping the others (POST).',
    'os_compute_api:server-metadata:update':
        'Set one metadata item of a server (PUT .../metadata/{key}).',
    'os_compute_api:server-metadata:update_all':
        'Replace the whole metadata of a server (PUT .../metadata).',
    'os_compute_api:server-metadata:delete':
        'Delete one metadata item of a server.',
    'os_compute_api:os-suspend-server:suspend': 'Suspend a server.',
    'os_compute_api:servers:create_image': 'Create an image of a server.',
    'os_compute_api:os-create-backup': 'Create a backup of a server.',
    'os_compute_api:os-suspend-server:resume': 'Resume a server.',
    'os_compute_api:os-pause-server:pause': 'Pause a server.',
    'os_compute_api:os-pause-server:unpause': 'Unpause a server.',
    'os_compute_api:os-extended-server-attributes':
        'See the OS-EXT-SRV-ATTR attributes (host, instance name).',
    'os_compute_api:os-migrate-server:migrate':
        'Cold migrate a server (not supported here: 501).',
    'os_compute_api:os-deferred-delete:restore':
        'Restore a soft-deleted server (none is ever soft-deleted here).',
    'os_compute_api:os-deferred-delete:force':
        'Force-delete a soft-deleted server (none is ever soft-deleted '
        'here).',
    'os_compute_api:os-evacuate':
        'Evacuate a server from a failed host.',
    'os_compute_api:os-admin-actions:reset_state':
        'Reset the state of a server (os-resetState).',
    'os_compute_api:os-services:list': 'List compute services.',
    'os_compute_api:os-services:update':
        'Enable, disable or force down a compute service.',
    'os_compute_api:os-disk-leases:list':
        'List the disk leases of the compute hosts, their storage '
        'identities and whom to fence before evacuating (this '
        'project\'s own resource, /os-disk-leases).',
    'os_compute_api:os-migrations:index': 'List migrations.',
    'os_compute_api:os-server-external-events:create':
        'Send external events (network-vif-plugged, ...) to servers.',
    'os_compute_api:os-instance-actions:list':
        'List the actions of a server.',
    'os_compute_api:os-instance-actions:show': 'Show an action of a server.',
    'os_compute_api:os-instance-actions:events':
        'See the events of an action (before microversion 2.51).',
    'os_compute_api:os-instance-actions:events:details':
        'See the tracebacks, hosts and messages of the events of an '
        'action (others read the sentence kept for the owner).',
    'os_compute_api:os-instance-actions:events:2.51':
        'See the events of an action (microversion 2.51 and later).',
    'os_compute_api:os-flavors': 'List and show flavors.',
    'os_compute_api:os-flavor-manage:create': 'Create a flavor.',
    'os_compute_api:os-flavor-manage:update':
        'Change the description of a flavor (microversion 2.55).',
    'os_compute_api:os-flavor-manage:delete': 'Delete a flavor.',
    'os_compute_api:os-flavor-access':
        'List the projects granted a private flavor.',
    'os_compute_api:os-flavor-access:add_tenant_access':
        'Grant a project a private flavor (addTenantAccess).',
    'os_compute_api:os-flavor-access:remove_tenant_access':
        'Revoke a project\'s access to a private flavor '
        '(removeTenantAccess).',
    'os_compute_api:os-flavor-extra-specs:index':
        'List the extra specs of a flavor (and see them in flavor '
        'details, microversion 2.61).',
    'os_compute_api:os-flavor-extra-specs:show':
        'Show one extra spec of a flavor.',
    'os_compute_api:os-flavor-extra-specs:create':
        'Set extra specs of a flavor.',
    'os_compute_api:os-flavor-extra-specs:update':
        'Change one extra spec of a flavor.',
    'os_compute_api:os-flavor-extra-specs:delete':
        'Unset one extra spec of a flavor.',
    'os_compute_api:images': 'List and show images (image proxy API, '
                             'and /image, the Image service view).',
    'os_compute_api:os-networks:view':
        'List and show networks (os-networks, before microversion 2.36).',
    'os_compute_api:os-keypairs:index':
        'List the key pairs of a user (another user\'s: user_id, '
        'microversion 2.10).',
    'os_compute_api:os-keypairs:show': 'Show a key pair of a user.',
    'os_compute_api:os-keypairs:create':
        'Create or import a key pair (for another user: user_id, '
        'microversion 2.10).',
    'os_compute_api:os-keypairs:delete': 'Delete a key pair of a user.',
    'os_compute_api:os-server-groups:index':
        'List the server groups of the project.',
    'os_compute_api:os-server-groups:index:all_projects':
        'List the server groups of every project (all_projects).',
    'os_compute_api:os-server-groups:show': 'Show a server group.',
    'os_compute_api:os-server-groups:create': 'Create a server group.',
    'os_compute_api:os-server-groups:delete': 'Delete a server group.',
    'os_compute_api:os-aggregates:index': 'List host aggregates.',
    'os_compute_api:os-aggregates:create':
        'Create a host aggregate (and its availability zone).',
    'os_compute_api:os-aggregates:show': 'Show a host aggregate.',
    'os_compute_api:os-aggregates:update':
        'Rename a host aggregate or change its availability zone.',
    'os_compute_api:os-aggregates:delete': 'Delete an empty aggregate.',
    'os_compute_api:os-aggregates:add_host':
        'Add a compute host to an aggregate.',
    'os_compute_api:os-aggregates:remove_host':
        'Remove a compute host from an aggregate.',
    'os_compute_api:os-aggregates:set_metadata':
        'Set or delete the metadata of an aggregate.',
    'os_compute_api:os-availability-zone:list':
        'List the availability zones servers may be created in.',
    'os_compute_api:os-availability-zone:detail':
        'List every availability zone with its hosts and services.',
    'os_compute_api:os-hosts:list':
        'List the hosts of the enabled services (os-hosts, before '
        'microversion 2.43).',
    'os_compute_api:os-hosts:show':
        'Show the resources of a compute host and what its servers take.',
    'os_compute_api:os-hosts:update':
        'Enable a host or set its maintenance mode (not supported by the '
        'libvirt driver: 501).',
    'os_compute_api:os-hosts:reboot': 'Reboot a host (501 with libvirt).',
    'os_compute_api:os-hosts:shutdown':
        'Shut a host down (501 with libvirt).',
    'os_compute_api:os-hosts:start': 'Start a host up (501 with libvirt).',
    'os_compute_api:servers:create:forced_host':
        'Create a server on a named host through its availability zone '
        '(availability_zone "zone:host").',
    'os_compute_api:os-quota-sets:show':
        'Show the quota limits of a project (or of one of its users: '
        'user_id).',
    'os_compute_api:os-quota-sets:detail':
        'Show the quota limits of a project with what it uses '
        '(/os-quota-sets/{tenant_id}/detail).',
    'os_compute_api:os-quota-sets:defaults':
        'Show the default quota limits (/os-quota-sets/{tenant_id}/'
        'defaults).',
    'os_compute_api:os-quota-sets:update':
        'Set the quota limits of a project or of one of its users.',
    'os_compute_api:os-quota-sets:delete':
        'Revert the quota limits of a project (or of one of its users) '
        'to the defaults.',
    'os_compute_api:os-quota-class-sets:show':
        'Show the quota limits of a quota class (default: every '
        'project\'s defaults).',
    'os_compute_api:os-quota-class-sets:update':
        'Set the quota limits of a quota class.',
    'os_compute_api:limits': 'Show the absolute limits of the caller\'s '
                             'project and what it uses (GET /limits).',
    'os_compute_api:limits:other_project':
        'Show the limits of another project (GET /limits?tenant_id=).',
    'os_compute_api:os-host-evacuations:create':
        'Evacuate every server of a failed host (POST '
        '/os-host-evacuations, this project\'s own resource).',
    'os_compute_api:os-host-evacuations:show':
        'List and show host-evacuate runs and the outcome of each of '
        'their servers.',
    'os_compute_api:os-server-diagnostics':
        'Show the diagnostics of a server (what its hypervisor reads).',
    'os_compute_api:os-simple-tenant-usage:list':
        'Show the usage of every project over a period.',
    'os_compute_api:os-simple-tenant-usage:show':
        'Show the usage of one project over a period.',
    'os_compute_api:extensions':
        'List and show the legacy API extensions (/extensions).',
    'os_compute_api:os-instance-usage-audit-log:list':
        'Show the instance usage audit of the last period.',
    'os_compute_api:os-instance-usage-audit-log:show':
        'Show the instance usage audit of the period before a time.',
    'os_compute_api:os-hypervisors:list': 'List hypervisors.',
    'os_compute_api:os-hypervisors:list-detail':
        'List hypervisors with their details.',
    'os_compute_api:os-hypervisors:show': 'Show a hypervisor.',
    'os_compute_api:os-hypervisors:statistics':
        'Show the hypervisors\' figures summed (before microversion '
        '2.88).',
    'os_compute_api:os-hypervisors:uptime':
        'Show the uptime of a hypervisor\'s host (before microversion '
        '2.88).',
    'os_compute_api:os-hypervisors:search':
        'Search hypervisors by name (before microversion 2.53).',
    'os_compute_api:os-hypervisors:servers':
        'List the servers of hypervisors (before microversion 2.53).',
}

_CHECK_STRINGS = {
    ADMIN: 'rule:context_is_admin',
    OWNER: 'rule:admin_or_owner',
    USER: 'rule:admin_or_user',
    # Nova's '@': whoever the API authenticated.
    ANYONE: '@',
}

_BASE_RULES = (
    oslo_policy.RuleDefault(
        'context_is_admin', 'role:admin or is_admin:True',
        description='Who is an administrator: the admin role (or a '
                    'context the service elevated itself).'),
    oslo_policy.RuleDefault(
        'admin_or_owner',
        'rule:context_is_admin or project_id:%(project_id)s',
        description='An administrator, or a member of the project that '
                    'owns the target.'),
    oslo_policy.RuleDefault(
        'admin_or_user',
        'rule:context_is_admin or user_id:%(user_id)s',
        description='An administrator, or the user who owns the target.'),
)


def list_rules() -> list:
    """Every rule with its default (the ``oslo.policy.policies`` entry
    point, for ``oslopolicy-sample-generator --namespace nova``)."""
    return list(_BASE_RULES) + [
        oslo_policy.RuleDefault(
            name, _CHECK_STRINGS[kind],
            description=DESCRIPTIONS.get(name, name))
        for name, kind in sorted(RULES.items())]


# How often a check looks whether the policy file (or a policy.d file)
# changed, in seconds: a changed file applies from the next request at
# most this long after it was written.
RELOAD_CHECK_INTERVAL = 1.0
# Decisions remembered at most (a bound on the callers and targets seen).
_DECISIONS_MAX = 10000
# Checks defined by oslo.policy itself (role:, rule:, field:value, @, !,
# and, or, not) decide from the target and the credentials alone. Any
# other (http:, an extension's) may answer differently for the same
# question: with one in the rules, nothing is remembered.
_PURE_CHECKS_MODULE = oslo_policy.AndCheck.__module__


def _pure(check) -> bool:
    if type(check).__module__ != _PURE_CHECKS_MODULE:
        return False
    if isinstance(check, (oslo_policy.AndCheck, oslo_policy.OrCheck)):
        return all(_pure(sub) for sub in check.rules)
    if isinstance(check, oslo_policy.NotCheck):
        return _pure(check.rule)
    return True


class _Enforcer(oslo_policy.Enforcer):
    """oslo.policy's enforcer, remembering its decisions while its rules
    stay the same: any change of them (the file read again, ``set_rules``,
    ``clear``) forgets them all."""

    def __init__(self, conf):
        self._decisions: dict = {}
        self._generation = 0
        self._cacheable = False
        self._looked_at = None
        self._decisions_lock = threading.Lock()
        super().__init__(conf)

    def _rules_changed(self) -> None:
        with self._decisions_lock:
            self._generation += 1
            self._decisions = {}
            self._cacheable = False

    def set_rules(self, *args, **kwargs) -> None:
        super().set_rules(*args, **kwargs)
        self._rules_changed()

    def clear(self) -> None:
        super().clear()
        self._rules_changed()

    def load_rules(self, force_reload: bool = False) -> None:
        before = (self.rules, len(self.rules))
        super().load_rules(force_reload)
        if (self.rules, len(self.rules)) != before or force_reload:
            self._rules_changed()
        if not self._cacheable:
            pure = all(_pure(check) for check in self.rules.values())
            with self._decisions_lock:
                self._cacheable = pure

    def decide(self, rule: str, target: dict, credentials: dict) -> bool:
        """``enforce(rule, target, credentials)``, remembered."""
        now = time.monotonic()
        if self._looked_at is None or (
                now - self._looked_at >= RELOAD_CHECK_INTERVAL):
            self.load_rules()
            self._looked_at = now
        key = (rule, tuple(sorted(target.items())),
               credentials['user_id'], credentials['project_id'],
               tuple(sorted(credentials['roles'])),
               credentials['is_admin'])
        with self._decisions_lock:
            generation = self._generation
            found = self._decisions.get(key)
            cacheable = self._cacheable
        if found is not None:
            return found
        decision = bool(self.enforce(rule, target, credentials))
        if cacheable:
            with self._decisions_lock:
                # Not when the rules changed while this one was decided.
                if generation == self._generation:
                    if len(self._decisions) >= _DECISIONS_MAX:
                        self._decisions = {}
                    self._decisions[key] = decision
        return decision


_lock = threading.Lock()
_enforcer: _Enforcer | None = None


def get_enforcer() -> _Enforcer:
    """The process's enforcer (the ``oslo.policy.enforcer`` entry point)."""
    global _enforcer
    with _lock:
        if _enforcer is None:
            enforcer = _Enforcer(CONF)
            enforcer.register_defaults(list_rules())
            _enforcer = enforcer
        return _enforcer


def validate() -> None:
    """Read the policy file now: ``InvalidConfiguration`` when it cannot
    be parsed, or names a rule's check that does not exist."""
    enforcer = get_enforcer()
    try:
        enforcer.load_rules(force_reload=True)
        enforcer.check_rules(raise_on_violation=True)
    except Exception as e:
        reset()
        raise exception.InvalidConfiguration(
            reason='policy file %s: %s' % (
                enforcer.policy_path or CONF.oslo_policy.policy_file, e))


def reset() -> None:
    """Forget the enforcer (the next check reads the configuration and
    the policy file again)."""
    global _enforcer
    with _lock:
        _enforcer = None


def check(context, rule: str, target_project_id: str | None = None,
          target_user_id: str | None = None) -> bool:
    """Whether ``context`` may do ``rule`` on a target owned by
    ``target_project_id`` and ``target_user_id`` (None: the caller's
    own)."""
    if rule not in RULES:
        raise KeyError(rule)    # a rule name typo is a bug, not a 403
    target = {'project_id': (context.project_id if target_project_id is None
                             else target_project_id),
              'user_id': (context.user_id if target_user_id is None
                          else target_user_id)}
    credentials = {'user_id': context.user_id,
                   'project_id': context.project_id,
                   'roles': list(context.roles),
                   'is_admin': bool(context.is_admin)}
    return get_enforcer().decide(rule, target, credentials)


def authorize(context, rule: str, target_project_id: str | None = None,
              target_user_id: str | None = None) -> None:
    """Raise PolicyNotAuthorized (403) unless ``check`` allows it."""
    if not check(context, rule, target_project_id, target_user_id):
        raise exception.PolicyNotAuthorized(action=rule)
