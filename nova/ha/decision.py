"""Whether a compute host failed and what the monitor does about it: a
pure function of typed evidence, the side effects elsewhere
(``nova.ha.recovery``).

The table, in the order it is read:

=============================================  ===========================
evidence                                       verdict
=============================================  ===========================
a recovery of the host not ended               CONTINUE it
heartbeat within service_down_time, not        HEALTHY
forced down
heartbeat missed, libvirtd reports guests      NOT_FAILED (only nova-
running                                        compute is gone)
recovered under the leases, not back since,    read on: evacuated
instances left on it, lease_retry_interval     again (below)
passed
recovered, not back since                      ALREADY_RECOVERED
recovered, back since, within flap_window      FLAPPED (not again)
fence agent configured                         FENCE (then ``after_fence``)
no agent, forced down by an operator           RECOVER (the operator
                                               vouches it is dead)
no agent, shared storage, working leases       RECOVER (to the hosts
                                               sharing its storage only:
                                               the leases keep a second
                                               QEMU off its disks there)
no agent otherwise                             ALERT (needs fencing)
=============================================  ===========================

``after_fence``: fenced, RECOVER; not fenced, FENCE_FAILED (nothing else
happens).
"""

import dataclasses
import enum


class Action(enum.Enum):
    HEALTHY = 'healthy'
    NOT_FAILED = 'not-failed'
    CONTINUE = 'continue'
    ALREADY_RECOVERED = 'already-recovered'
    FLAPPED = 'flapped'
    FENCE = 'fence'
    FENCE_FAILED = 'fence-failed'
    RECOVER = 'recover'
    ALERT = 'alert'


@dataclasses.dataclass(frozen=True)
class PriorRecovery:
    """The host's newest recovery (a failed fence is none)."""
    ended: bool
    # Seconds since it began.
    age: float
    # Whether the host's service heartbeat after it began (came back).
    host_back_since: bool
    # It evacuated an unfenced host to the hosts sharing its storage
    # (the disk leases were its guard, not a fence).
    lease_guarded: bool = False
    # Instances still recorded on the host, its evacuation ended (refused
    # by a lease held by a guest that may still run there, or failed).
    left_behind: int = 0


@dataclasses.dataclass(frozen=True)
class DiskLeaseReport:
    """The host's disk leases, as ``GET /os-disk-leases`` reports them."""
    # Another compute host records the same instance storage.
    shared_storage: bool
    # Its libvirt takes disk leases, and so does every host sharing it.
    leases_working: bool
    # The report's sentence (None: the host reported nothing).
    summary: str | None


@dataclasses.dataclass(frozen=True)
class HostEvidence:
    host: str
    # Seconds since the last heartbeat (since the service registered,
    # when it never sent one: ``never_reported``); None: not known.
    heartbeat_age: float | None
    forced_down: bool
    service_down_time: float
    # libvirtd's answer to "is anything running?"; None: not reachable,
    # or not asked.
    guests_running: bool | None
    disk_leases: DiskLeaseReport
    fence_agent: bool
    flap_window: float
    recovery: PriorRecovery | None = None
    lease_retry_interval: float = 60.0
    never_reported: bool = False


@dataclasses.dataclass(frozen=True)
class Verdict:
    action: Action
    reason: str
    # What an operator is to do, for ``nova-manage ha alerts`` (ALERT and
    # NOT_FAILED). Unlike ``reason`` it names no number of seconds: the
    # same failure gives the same text at every check, recorded once.
    alert: str | None = None


def _heartbeat_missed(evidence: HostEvidence) -> bool:
    return (evidence.heartbeat_age is None
            or evidence.heartbeat_age > evidence.service_down_time)


def _silence(evidence: HostEvidence, timed: bool = True) -> str:
    """Why the host looks down; ``timed``: for how long."""
    if evidence.forced_down:
        return 'its compute service is forced down'
    if evidence.heartbeat_age is None or (evidence.never_reported
                                          and not timed):
        return 'its compute service never reported'
    if evidence.never_reported:
        return ('its compute service never reported in the %d s since it '
                'registered' % evidence.heartbeat_age)
    if not timed:
        return 'its compute service missed its heartbeats'
    return ('its compute service missed heartbeats for %d s'
            % evidence.heartbeat_age)


def _retry_due(evidence: HostEvidence, prior: PriorRecovery) -> bool:
    """Whether to evacuate again what an evacuation under the disk leases
    left on the host: the leases may have been held by guests that still
    ran there then, and may be free now (the host really died)."""
    return (prior.lease_guarded and prior.left_behind > 0
            and prior.age >= evidence.lease_retry_interval)


def _recovered(evidence: HostEvidence, prior: PriorRecovery) -> str:
    said = 'recovered %d s ago and not back since' % prior.age
    if prior.lease_guarded and prior.left_behind:
        said += ('; %d instances still on it, evacuated again %d s after '
                 'that recovery' % (prior.left_behind,
                                    evidence.lease_retry_interval))
    return said


def decide(evidence: HostEvidence) -> Verdict:
    prior = evidence.recovery
    if prior is not None and not prior.ended:
        return Verdict(Action.CONTINUE, 'a recovery of %s is under way'
                       % evidence.host)
    if not evidence.forced_down and not _heartbeat_missed(evidence):
        return Verdict(Action.HEALTHY, 'its compute service is up')
    silence = _silence(evidence)
    if not evidence.forced_down and evidence.guests_running:
        return Verdict(
            Action.NOT_FAILED,
            '%s, but libvirtd reports guests running: only nova-compute '
            'is gone' % silence,
            alert='nova-compute of host %s is down but its libvirtd reports '
                  'guests running: the host is not failed, nothing is '
                  'fenced or evacuated; start nova-compute there again'
                  % evidence.host)
    retry = None
    if prior is not None:
        if not prior.host_back_since:
            if not _retry_due(evidence, prior):
                return Verdict(Action.ALREADY_RECOVERED, _recovered(
                    evidence, prior))
            retry = ('%d instances still on it (their evacuation was '
                     'refused %d s ago)' % (prior.left_behind, prior.age))
        elif prior.age <= evidence.flap_window:
            return Verdict(Action.FLAPPED,
                           '%s again %d s after its recovery (flap_window '
                           '%d s): not recovered twice'
                           % (silence, prior.age, evidence.flap_window))
    if retry is not None:
        silence = '%s; %s' % (silence, retry)
    if evidence.fence_agent:
        return Verdict(Action.FENCE, silence)
    if evidence.forced_down:
        return Verdict(Action.RECOVER, '%s by an operator, with no fence '
                       'agent configured' % silence)
    leases = evidence.disk_leases
    if leases.shared_storage and leases.leases_working:
        return Verdict(Action.RECOVER,
                       '%s; its disks are on shared storage under working '
                       'disk leases (%s)' % (silence, leases.summary))
    if not leases.shared_storage:
        why = 'its instances\' disks are not on shared storage'
    else:
        why = ('its shared storage is not guarded by working disk leases '
               '(%s)' % (leases.summary or 'not reported'))
    text = ('host %s needs fencing: %s, no fence agent is configured '
            '([ha] fence_command) and %s; fence it, force its service down, '
            'then evacuate it')
    return Verdict(Action.ALERT, text % (evidence.host, silence, why),
                   alert=text % (evidence.host,
                                 _silence(evidence, timed=False), why))


def after_fence(evidence: HostEvidence, fenced: bool,
                detail: str) -> Verdict:
    """What follows the fence agent's answer."""
    if fenced:
        return Verdict(Action.RECOVER, '%s; fenced (%s)'
                       % (_silence(evidence), detail))
    return Verdict(Action.FENCE_FAILED,
                   'host %s was not fenced (%s): not recovered'
                   % (evidence.host, detail))
