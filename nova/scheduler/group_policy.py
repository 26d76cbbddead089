"""What a server group's policy says about one host: a pure decision.

The target choice (``target.py``) asks, for each host with room, whether
the policy allows it and how much it prefers it, given how many other
members each host has or is receiving (``InstanceGroup.member_hosts``):

* ``anti-affinity``: only hosts with fewer than ``max_server_per_host``
  (default 1) other members;
* ``affinity``: only hosts that already have members; any host when no
  other member is placed yet;
* ``soft-anti-affinity`` / ``soft-affinity``: every host, the ones with
  fewest (most) members first.

``ignored_host``: a host whose members do not count for affinity (the
host an evacuation leaves: the members still on it are about to leave
too, and it is never a candidate).

Example::

    rule = GroupRule.of(group, member_hosts, ignored_host=instance.host)
    [h for h in hosts if rule.allows(h)]
    sorted(hosts, key=rule.preference)
"""

import dataclasses

from nova.objects import instance_group as group_obj

HARD = (group_obj.AFFINITY, group_obj.ANTI_AFFINITY)


@dataclasses.dataclass(frozen=True)
class GroupRule:
    group_uuid: str
    policy: str
    max_server_per_host: int
    # Other members per host (placed there, or arriving).
    members: dict[str, int]

    @classmethod
    def of(cls, group, member_hosts: dict[str, int],
           ignored_host: str | None = None) -> 'GroupRule':
        members = {host: count for host, count in member_hosts.items()
                   if host != ignored_host}
        return cls(group_uuid=group.uuid, policy=group.policy,
                   max_server_per_host=group.max_server_per_host or 1,
                   members=members)

    @property
    def hard(self) -> bool:
        return self.policy in HARD

    def allows(self, host: str) -> bool:
        count = self.members.get(host, 0)
        if self.policy == group_obj.ANTI_AFFINITY:
            return count < self.max_server_per_host
        if self.policy == group_obj.AFFINITY:
            return not self.members or count > 0
        return True

    def preference(self, host: str) -> int:
        """Lower is preferred (soft policies); 0 for hard ones."""
        count = self.members.get(host, 0)
        if self.policy == group_obj.SOFT_ANTI_AFFINITY:
            return count
        if self.policy == group_obj.SOFT_AFFINITY:
            return -count
        return 0

    def refusal(self, hosts_with_room: list[str]) -> str:
        """Why no host with room is allowed: for the fault an owner and
        an operator read."""
        if self.policy == group_obj.AFFINITY:
            where = ', '.join(sorted(self.members))
            return ('its other members are on %s, and none of those hosts '
                    'is up, enabled and has room (hosts with room: %s)'
                    % (where, ', '.join(sorted(hosts_with_room)) or 'none'))
        taken = sorted(h for h in hosts_with_room if not self.allows(h))
        return ('every host with room already has %d member(s) of the '
                'group (%s)' % (self.max_server_per_host,
                                ', '.join(taken) or 'none'))
