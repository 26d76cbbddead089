"""Choosing the compute host an evacuated instance goes to.

A candidate is a compute service that is up (``Service.is_up`` with
``service_down_time``), enabled, not the source, in the availability zone
the instance's create asked for (``instance.availability_zone``; any zone
when it asked for none), and has room for the instance's flavor. The zone
holds for new instances and evacuations alike, so an evacuated server stays
in the zone its owner chose.

Room: capacity (vCPUs, memory, disk) comes from a *capacity provider*,
``provider(context, host) -> HostResources | None``. The default,
``database_capacity``, reads the ``compute_nodes`` rows each compute host
records at start and every ``update_resources_interval`` seconds
(``nova/compute/resources.py``), so it works whatever process the conductor
runs in. Usage is not taken from the hypervisor, whose view lags behind
claims, nor from those rows (they may be a minute old), but read from the
database at choice time (``usage.py``: the usage counters kept with every
write of an instance row): the flavors of
the instances placed on the host plus those of evacuations to it still in
flight (``accepted``/``pre-migrating`` with that ``dest_compute``), against
the capacity times ``[conductor] cpu_allocation_ratio``,
``ram_allocation_ratio`` and ``disk_allocation_ratio`` (Nova's names and
defaults: 4.0, 1.0, 1.0).

A host whose capacity is unknown (no ``compute_nodes`` row: its driver
cannot report resources, or it runs a version that does not record them;
a host records its row in ``init_host``, before its first heartbeat makes
it count as up) is eligible but
ranked after every host known to have room: refusing it could leave an
evacuation with nowhere to go, while ranking it last never prefers a guess
to a known fit.

Claiming is writing the claim: a new instance's row on the host, or an
evacuation's ``dest_compute``. The claim is written under the chosen
host's lease (``nova.objects.host_lease``), which every process shares,
after reading the host's usage again: a host-evacuate running many choices
at once, nova-api placing new instances and any number of conductors
choosing evacuation targets never give away the same last slot. A host
that filled up meanwhile, or whose lease another process keeps too long,
is left out and the choice is made again. Claims on different hosts run
at once; those of one process on the same host (or for the same server
group) wait for each other in the process (a lock per lease) before they
take the lease, so they queue instead of polling the lease row and giving
up after its wait.

Among hosts with room the one with the most free memory wins (spreading),
then the host name, so the choice is deterministic. Choices running at
once in one process count each other's claims not yet written
(``in_flight.py``) when they rank hosts, so they spread rather than all
take the host that was roomiest when each read the database.

Server groups: an instance in a group (``instance_group.InstanceGroup``) is
placed only where the group's policy allows (``group_policy.py``): a hard
policy leaves hosts out (``GroupPolicyUnsatisfied`` when it leaves none
with room), a soft one ranks them first. Where the other members are is
read at choice time and again under the host's lease, counting the
targets of their evacuations in flight. Every claim of a group's member
also holds the group's own lease (a row of the same lease table, keyed
``server-group:<uuid>``), so two members placed at once by different
processes are placed one after the other: two anti-affinity members
never take the same host, and affinity members never start on two.
"""

import contextlib
import dataclasses
import functools
import threading
from typing import Callable

from oslo_log import log as logging
from oslo_utils import excutils

from nova.conf import CONF
from nova import exception
from nova.model import hardware
from nova import objects
from nova.objects import base as obj_base
from nova.objects import host_lease
from nova.objects import instance_group as group_obj
from nova.objects import service as service_obj
from nova.scheduler import group_policy
from nova.scheduler import in_flight
from nova.scheduler import usage as usage_mod
from nova.scheduler import zones

LOG = logging.getLogger(__name__)

CapacityProvider = Callable[[object, str], 'hardware.HostResources | None']


# The one definition of what instances take, shared with the compute hosts
# that record it (nova/compute/resources.py).
Need = usage_mod.Need
usage = usage_mod.usage
usages = usage_mod.usages


def database_capacity(context, host: str) -> hardware.HostResources | None:
    """The capacity ``host`` recorded in ``compute_nodes``, or None.

    The default capacity provider. Several nodes of one host are summed.
    """
    return database_capacities(context, [host])[host]


def database_capacities(context, hosts
                        ) -> dict[str, hardware.HostResources | None]:
    """``database_capacity`` of each of ``hosts``, in one read."""
    nodes: dict[str, list[hardware.HostResources]] = {h: [] for h in hosts}
    for host, capacity in objects.ComputeNode.capacities_by_hosts(
            context, hosts):
        nodes[host].append(capacity)
    return {host: usage_mod.combined(found) for host, found in nodes.items()}


@dataclasses.dataclass(frozen=True)
class AllocationRatios:
    """``[conductor] cpu_allocation_ratio``, ``ram_allocation_ratio`` and
    ``disk_allocation_ratio``, read once per choice: a choice weighs every
    host of the region, and an option read costs more than the rest of a
    host's arithmetic."""
    cpu: float
    ram: float
    disk: float

    @classmethod
    def configured(cls) -> 'AllocationRatios':
        conf = CONF.conductor
        return cls(conf.cpu_allocation_ratio, conf.ram_allocation_ratio,
                   conf.disk_allocation_ratio)


@dataclasses.dataclass(frozen=True)
class Candidate:
    host: str
    capacity: hardware.HostResources | None
    used: Need
    # None: the configured ones.
    ratios: AllocationRatios | None = None
    # What the host may hold, after the allocation ratios; None when its
    # capacity is unknown. Made with the candidate: a choice asks it of
    # every host, several times.
    limit: Need | None = dataclasses.field(init=False, repr=False,
                                           compare=False)

    def __post_init__(self):
        limit = None
        if self.capacity is not None:
            ratios = self.ratios or AllocationRatios.configured()
            limit = Need(
                vcpus=int(self.capacity.vcpus * ratios.cpu),
                memory_mb=int(self.capacity.memory_mb * ratios.ram),
                disk_gb=int(self.capacity.local_gb * ratios.disk))
        # A frozen dataclass's own field, set once here.
        object.__setattr__(self, 'limit', limit)

    def free_memory_mb(self) -> int | None:
        limit = self.limit
        return None if limit is None else limit.memory_mb - self.used.memory_mb

    def fits(self, need: Need) -> bool | None:
        """True/False when capacity is known, None when it is not."""
        limit = self.limit
        if limit is None:
            return None
        used = self.used
        return (used.vcpus + need.vcpus <= limit.vcpus
                and used.memory_mb + need.memory_mb <= limit.memory_mb
                and used.disk_gb + need.disk_gb <= limit.disk_gb)


def _contradicts(service, source_identity, on_shared_storage) -> bool:
    """Whether an explicit ``on_shared_storage`` says the opposite of what
    the recorded storage identities of the source and ``service`` say (a
    target would refuse the evacuation)."""
    if on_shared_storage is None or not source_identity or \
            not service.storage_identity:
        return False
    shared = source_identity == service.storage_identity
    return shared != bool(on_shared_storage)


# The key of a group's lease in the host lease table (never a host name:
# those hold no ':').
GROUP_LEASE = 'server-group:%s'


def group_rule(context, instance, group) -> 'group_policy.GroupRule | None':
    """The policy of ``group`` (None: none) for placing ``instance``, with
    where its other members are now."""
    if group is None:
        return None
    return group_policy.GroupRule.of(
        group, group_obj.InstanceGroup.member_hosts(
            context, group.uuid, exclude_instance=instance.uuid),
        ignored_host=instance.host)


def compute_services(context) -> list[service_obj.ServiceState]:
    return objects.Service.states(context, service_obj.COMPUTE_BINARY)


def _identity_of(services: list[service_obj.ServiceState],
                 host: str | None) -> str | None:
    """The storage identity ``host``'s compute service recorded (None:
    none, or no such service), from ``compute_services``: a choice reads
    every service anyway, the source's among them."""
    for service in services:
        if service.host == host:
            return service.storage_identity or None
    return None


def get_compute_service(context, host: str):
    try:
        return objects.Service.get_by_host_and_binary(
            context, host, service_obj.COMPUTE_BINARY)
    except exception.ServiceNotFound:
        raise exception.ComputeHostNotFound(host=host)


class TargetChooser:
    """Chooses evacuation targets; one per conductor process."""

    def __init__(self, capacity_provider: CapacityProvider | None = None):
        """``capacity_provider(context, host)``; by default the
        ``compute_nodes`` rows, read for all candidates at once
        (``database_capacities``)."""
        self._provider = capacity_provider
        self._in_flight = in_flight.InFlight()
        # One lock per lease key (a host, a server group) that this
        # process's claims queue on before they take the lease itself.
        self._lease_locks: dict[str, threading.Lock] = {}

    def _capacities(self, context, hosts):
        """The capacity of each of ``hosts``; None for a host that cannot
        tell (it counts as "unknown")."""
        if self._provider is not None:
            return {host: self._provided(context, host) for host in hosts}
        try:
            return database_capacities(context, hosts)
        except Exception as e:
            LOG.warning('Capacity of hosts %(hosts)s unknown: %(err)s',
                        {'hosts': ', '.join(hosts), 'err': e})
            return dict.fromkeys(hosts)

    def _provided(self, context, host):
        try:
            return self._provider(context, host)
        except Exception as e:
            LOG.warning('Capacity of host %(host)s unknown: %(err)s',
                        {'host': host, 'err': e})
            return None

    def candidates(self, context, instance, on_shared_storage=None,
                   exclude=()) -> list[Candidate]:
        """Up, enabled hosts other than the source (and ``exclude``), with
        their usage.

        With an explicit ``on_shared_storage``, hosts whose recorded
        storage identity says the opposite are left out (the target would
        refuse them anyway).
        """
        services = compute_services(context)
        source_identity = _identity_of(services, instance.host)
        hosts = [service.host
                 for service in self._usable(context, instance, exclude,
                                             services)
                 if not _contradicts(service, source_identity,
                                     on_shared_storage)]
        # NOTE: a fixed number of reads for all the hosts, not one per
        # host: a choice's cost must not grow with the region. Usage is
        # read before capacity; TestClaimsAcrossProcesses relies on it to
        # hold two choosers between their usage read and their claim.
        used = usages(context, hosts, exclude_instance=instance.uuid)
        capacities = self._capacities(context, hosts)
        ratios = AllocationRatios.configured()
        return [Candidate(host=host, used=used[host],
                          capacity=capacities[host], ratios=ratios)
                for host in hosts]

    @staticmethod
    def _usable(context, instance, exclude, services):
        """Of ``services`` (``compute_services``), the up, enabled ones
        other than the source's and ``exclude``, in the zone the
        instance's create asked for (if it asked for one)."""
        zone = instance.availability_zone
        zone_map = zones.ZoneMap.read(context) if zone else None
        # Read once for every host (an option read and the clock cost
        # more than the rest of a host's test).
        down_time = CONF.service_down_time
        now = obj_base.utcnow()
        return [service for service in services
                if service.host != instance.host and not service.disabled
                and service.host not in exclude
                and (zone_map is None
                     or zone_map.of_host(service.host) == zone)
                and service.is_up(down_time, now)]

    def _left_out_by_storage(self, context, instance, on_shared_storage,
                             exclude) -> list[str]:
        """The usable hosts an explicit ``on_shared_storage`` left out."""
        services = compute_services(context)
        source_identity = _identity_of(services, instance.host)
        return sorted(
            service.host
            for service in self._usable(context, instance, exclude,
                                        services)
            if _contradicts(service, source_identity, on_shared_storage))

    def choose(self, context, instance, on_shared_storage=None,
               exclude=(), group=None) -> str:
        """The best candidate for ``instance``; ``NoValidHost`` if none.

        ``exclude``: hosts not to consider (already found full or busy).
        ``group``: the instance's server group, whose policy the choice
        keeps (``GroupPolicyUnsatisfied`` when hosts have room but the
        policy allows none of them).
        """
        def first(candidates, order):
            return min(candidates, key=lambda c: order(c, 0)).host
        return self._choose(context, instance, on_shared_storage, exclude,
                            group, first)

    def _choose(self, context, instance, on_shared_storage, exclude, group,
                pick):
        """``choose``, whose last step, ``pick(candidates, order)``,
        returns what ``_choose`` returns: the first of the hosts with room
        (or else of those of unknown capacity) by ``order(candidate,
        memory_mb_counted_on_it)``.
        """
        need = Need.of(instance.flavor)
        # NOTE: the choice's reads share one read-only transaction
        # (nothing in it waits): one BEGIN and COMMIT instead of one per
        # read, round trips that queue behind every other process of a
        # busy host.
        with obj_base.reads_together():
            candidates = self.candidates(context, instance,
                                         on_shared_storage, exclude)
            rule = group_rule(context, instance, group)
        if rule is not None:
            fitting = [c.host for c in candidates
                       if c.fits(need) is not False]
            candidates = [c for c in candidates if rule.allows(c.host)]
            if fitting and not any(rule.allows(h) for h in fitting):
                raise exception.GroupPolicyUnsatisfied(
                    group=rule.group_uuid, policy=rule.policy,
                    reason=rule.refusal(fitting))

        def preference(candidate):
            return 0 if rule is None else rule.preference(candidate.host)
        fit = [(c, c.fits(need)) for c in candidates]
        roomy = [c for c, fits in fit if fits]
        unknown = [c for c, fits in fit if fits is None]
        if roomy:
            return pick(roomy, lambda c, counted: (
                preference(c), counted - c.free_memory_mb(), c.host))
        if unknown:
            return pick(unknown, lambda c, counted: (
                preference(c), c.used.memory_mb + counted, c.host))
        left_out = (' (left out: %s)' % ', '.join(sorted(exclude))
                    if exclude else '')
        contradicted = []
        if on_shared_storage is not None:
            contradicted = self._left_out_by_storage(
                context, instance, on_shared_storage, exclude)
        if contradicted:
            # NOTE: "0 candidates checked" alone would be false: these
            # hosts are up, and left out only because the operator's
            # onSharedStorage contradicts their recorded storage.
            left_out += ('; left out because onSharedStorage=%s '
                         'contradicts their recorded storage identity: %s'
                         % (bool(on_shared_storage),
                            ', '.join(contradicted)))
        if instance.availability_zone:
            left_out += ('; only hosts of availability zone %s were '
                         'considered' % instance.availability_zone)
        raise exception.NoValidHost(
            reason='no up, enabled compute host other than %s has room for '
                   '%s (%d candidates checked)%s' % (
                       instance.host, need, len(candidates), left_out))

    def _claim(self, context, instance, write, on_shared_storage=None,
               left_out=(), group=None, group_lease=None):
        """Choose a host and ``write(host, given_back)`` the claim under
        its lease, giving the lease (and ``group_lease``) back in the
        claim's own transaction (``host_lease.end_together``).

        Returns the host. Under the lease the host's usage (and where the
        group's members are) is read again: a claim another process wrote
        since the choice is counted now. A host that no longer fits, or
        whose lease stays taken, or was lost before the claim was written
        (this claim stalled), is left out of the next choice; each round
        leaves one more out, so this ends, at the latest with
        ``NoValidHost``. The caller holds ``group``'s lease
        (``group_lease``); when that was lost, the claim is not written
        and ``HostClaimLeaseLost`` is raised: the members were read under
        a lease another claimer of the group holds now, so no other host
        would do better.
        """
        need = Need.of(instance.flavor)
        left_out = set(left_out)
        while True:
            with self._in_flight.reading() as read:
                host, claim = self._choose(
                    context, instance, on_shared_storage, left_out, group,
                    lambda candidates, order: self._in_flight.pick(
                        read, candidates, order, need.memory_mb))
            try:
                with self._lease(context, host) as lease:
                    # One read transaction, as the choice's (_choose).
                    with obj_base.reads_together():
                        fresh = Candidate(
                            host=host,
                            capacity=self._capacities(context, [host])[host],
                            used=usage(context, host,
                                       exclude_instance=instance.uuid))
                        rule = group_rule(context, instance, group)
                    if fresh.fits(need) is not False and (
                            rule is None or rule.allows(host)):
                        host_lease.end_together(
                            functools.partial(write, host), lease,
                            group_lease)
                        return host
                LOG.info('Host %(host)s filled up since it was chosen '
                         '(another claim took it); choosing again',
                         {'host': host}, instance=instance)
            except (exception.HostClaimBusy,
                    exception.HostClaimLeaseLost) as e:
                if e.kwargs.get('host') != host:
                    raise     # the group's lease, not the host's
                LOG.warning('%s; choosing another host', e,
                            instance=instance)
            finally:
                self._in_flight.done(claim)
            left_out.add(host)

    @contextlib.contextmanager
    def _lease(self, context, key: str):
        """Hold the lease ``key`` (a host, or ``GROUP_LEASE``) for the
        body. This process's claims on one key queue on a lock of the
        process first: they wait for each other however long their
        claims take, instead of polling the lease row and giving up
        after its wait (``HostClaimBusy``), which is for other processes.
        """
        # setdefault is atomic: two threads get the same lock.
        lock = self._lease_locks.setdefault(key, threading.Lock())
        with lock, host_lease.hold(context, key) as lease:
            yield lease

    def _group_claims(self, context, group):
        """Hold ``group``'s lease for the body (as ``host_lease.Lease``;
        nothing, None, when ``group`` is None)."""
        if group is None:
            return contextlib.nullcontext()
        return self._lease(context, GROUP_LEASE % group.uuid)

    def place_new(self, context, instance, only: str | None = None,
                  group=None, action=None, bind=None) -> str:
        """Choose a host for a new instance and create its row there.

        Creating the row under the host's lease makes the next choice
        count this instance. ``only``: the one host to consider (a create that
        names its host); ``NoValidHost`` when it is not usable or full.
        ``group``: the server group the instance joins, as part of the
        same claim (``GroupPolicyUnsatisfied`` when its policy leaves no
        host; the instance is then neither created nor a member).
        ``action``: the ``InstanceAction`` that creates it, written with
        the row (``Instance.create(and_action=...)``). ``bind(host)``:
        called once a host is chosen, before the row is written (again
        for another host when that claim is lost); the ``Port`` objects
        it returns are written with the row (``and_ports``).
        """
        others: set[str] = set()
        if only is not None:
            others = {service.host for service in compute_services(context)
                      if service.host != only}

        def write(host, given_back):
            instance.host = host
            instance.node = host
            ports = () if bind is None else bind(host)
            if group is None:
                instance.create(and_action=action, and_give_back=given_back,
                                and_ports=ports)
                return
            # NOTE: the member row first: the group's lease is held, and
            # a member without an instance row counts nowhere.
            group_obj.InstanceGroup.add_member(context, group.uuid,
                                               instance.uuid)
            try:
                instance.create(and_action=action,
                                and_give_back=given_back, and_ports=ports)
            except Exception:
                with excutils.save_and_reraise_exception():
                    objects.Instance.leave_group(context, instance.uuid)

        with self._group_claims(context, group) as group_lease:
            host = self._claim(context, instance, write, left_out=others,
                               group=group, group_lease=group_lease)
        LOG.info('Placed on %s', host, instance=instance)
        return host

    def choose_and_claim(self, context, instance, migration,
                         host: str | None = None,
                         on_shared_storage=None, exclude=()) -> str:
        """Choose (unless ``host`` is given) and record it in ``migration``.

        The claim is the migration's ``dest_compute``; ``usage`` counts it,
        so the next choice sees this one. ``exclude``: hosts the choice
        leaves out (host-evacuate's retry: the targets that failed).
        """
        def write(host, given_back):
            migration.dest_compute = host
            migration.dest_node = host
            migration.save(and_give_back=given_back)

        group = group_obj.InstanceGroup.get_by_instance_uuid(context,
                                                             instance.uuid)
        with self._group_claims(context, group) as group_lease:
            if host is None:
                host = self._claim(context, instance, write,
                                   on_shared_storage, left_out=exclude,
                                   group=group, group_lease=group_lease)
            else:
                # An operator's named target is taken as told (Nova's
                # force), whatever it holds, except a hard group policy
                # it would break: that is never this project's to break.
                validate_named_target(context, instance, host, force=True)
                rule = group_rule(context, instance, group)
                if rule is not None and rule.hard and \
                        not rule.allows(host):
                    raise exception.GroupPolicyUnsatisfied(
                        group=rule.group_uuid, policy=rule.policy,
                        reason='the named target %s: %s' % (
                            host, rule.refusal([host])))
                # The group's members were read under its lease.
                host_lease.end_together(functools.partial(write, host),
                                        group_lease)
        LOG.info('Evacuation target is %s', host, instance=instance)
        return host


def validate_named_target(context, instance, host: str, force: bool):
    """Check an operator-named target: it exists, is not the source, and
    (unless ``force``) its compute service is up.

    Raises ``ComputeHostNotFound``, ``InvalidInput`` or
    ``ComputeServiceUnavailable``.
    """
    service = get_compute_service(context, host)
    if host == instance.host:
        raise exception.InvalidInput(
            reason='the target host %s is the instance\'s own host' % host)
    if not force and not service.is_up(CONF.service_down_time):
        raise exception.ComputeServiceUnavailable(host=host)
    return service
