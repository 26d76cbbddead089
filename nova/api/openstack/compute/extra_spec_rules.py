"""What the API checks of flavor extra specs from microversion 2.86.

A key whose namespace (the part before the first ``:``) is one this
module knows must be one of that namespace's keys, with a value of the
right kind; a key of any other namespace, or of none, is stored as given
(operators and other services keep their own specs in flavors). Below
2.86 nothing is checked.

The known namespaces are ``hw``, ``hw_rng``, ``hw_video``, ``quota``,
``resources`` (with an optional group suffix: ``resources1``) and
``trait`` (likewise).
"""

import dataclasses
import re
from typing import Callable

from oslo_utils import strutils

from nova import exception


def _enum(*allowed: str) -> Callable[[str], bool]:
    return lambda value: value in allowed


def _int(minimum: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        return bool(re.fullmatch(r'-?[0-9]+', value)) and \
            int(value) >= minimum
    return check


def _bool(value: str) -> bool:
    try:
        strutils.bool_from_string(value, strict=True)
    except ValueError:
        return False
    return True


def _any(value: str) -> bool:
    return True


def _page_size(value: str) -> bool:
    return value in ('small', 'large', 'any') or bool(
        re.fullmatch(r'[0-9]+([KMGT]i?B?)?', value, re.IGNORECASE))


@dataclasses.dataclass(frozen=True)
class Rule:
    # The whole key, as a regular expression.
    key: str
    valid: Callable[[str], bool]
    expected: str


_HW = [
    Rule('hw:cpu_policy', _enum('shared', 'dedicated', 'mixed'),
         'one of shared, dedicated, mixed'),
    Rule('hw:cpu_thread_policy', _enum('prefer', 'isolate', 'require'),
         'one of prefer, isolate, require'),
    Rule('hw:emulator_threads_policy', _enum('share', 'isolate'),
         'one of share, isolate'),
    Rule('hw:cpu_dedicated_mask', _any, 'a CPU mask'),
    Rule('hw:cpu_realtime', _bool, 'a boolean'),
    Rule('hw:cpu_realtime_mask', _any, 'a CPU mask'),
    Rule('hw:cpu_(max_)?(sockets|cores|threads)', _int(1),
         'an integer of at least 1'),
    Rule('hw:numa_nodes', _int(1), 'an integer of at least 1'),
    Rule(r'hw:numa_cpus\.[0-9]+', _any, 'a CPU list'),
    Rule(r'hw:numa_mem\.[0-9]+', _int(0), 'an integer of at least 0'),
    Rule('hw:mem_page_size', _page_size,
         'small, large, any or a page size'),
    Rule('hw:boot_menu', _bool, 'a boolean'),
    Rule('hw:watchdog_action',
         _enum('none', 'pause', 'poweroff', 'reset', 'disabled'),
         'one of none, pause, poweroff, reset, disabled'),
    Rule('hw:serial_port_count', _int(0), 'an integer of at least 0'),
    Rule('hw:(pmu|vif_multiqueue_enabled|locked_memory|mem_encryption|'
         'hide_hypervisor_id|virtio_packed_ring|ephemeral_encryption)',
         _bool, 'a boolean'),
    Rule('hw:pci_numa_affinity_policy',
         _enum('required', 'legacy', 'preferred', 'socket'),
         'one of required, legacy, preferred, socket'),
    Rule('hw:tpm_version', _enum('1.2', '2.0'), 'one of 1.2, 2.0'),
    Rule('hw:tpm_model', _enum('tpm-tis', 'tpm-crb'),
         'one of tpm-tis, tpm-crb'),
    Rule('hw:viommu_model',
         _enum('intel', 'smmuv3', 'virtio', 'auto', 'none'),
         'one of intel, smmuv3, virtio, auto, none'),
    Rule('hw:maxphysaddr_mode', _enum('passthrough', 'emulate'),
         'one of passthrough, emulate'),
    Rule('hw:maxphysaddr_bits', _int(1), 'an integer of at least 1'),
    Rule('hw:ephemeral_encryption_format', _enum('luks'), 'luks'),
]
_HW_RNG = [
    Rule('hw_rng:allowed', _bool, 'a boolean'),
    Rule('hw_rng:rate_(bytes|period)', _int(0), 'an integer of at least 0'),
]
_HW_VIDEO = [
    Rule('hw_video:ram_max_mb', _int(0), 'an integer of at least 0'),
]
_QUOTA = [
    Rule('quota:cpu_(shares|period|quota)', _int(0),
         'an integer of at least 0'),
    Rule('quota:disk_(read|write|total)_(bytes|iops)_sec', _int(0),
         'an integer of at least 0'),
    Rule('quota:vif_(inbound|outbound)_(average|peak|burst)', _int(0),
         'an integer of at least 0'),
]
_RESOURCES = [Rule(r'resources[a-zA-Z0-9_-]*:[A-Z0-9_]+', _int(0),
                   'an integer of at least 0')]
_TRAIT = [Rule(r'trait[a-zA-Z0-9_-]*:[A-Z0-9_]+',
               _enum('required', 'forbidden'), 'required or forbidden')]

_NAMESPACES = {'hw': _HW, 'hw_rng': _HW_RNG, 'hw_video': _HW_VIDEO,
               'quota': _QUOTA}
# Namespaces a group suffix may follow (``resources1``, ``trait_gpu``).
_GROUPED = {'resources': _RESOURCES, 'trait': _TRAIT}


def _rules_for(key: str) -> list[Rule] | None:
    namespace = key.split(':', 1)[0] if ':' in key else None
    if namespace is None:
        return None
    if namespace in _NAMESPACES:
        return _NAMESPACES[namespace]
    for prefix, rules in _GROUPED.items():
        if re.fullmatch(prefix + r'[a-zA-Z0-9_-]*', namespace):
            return rules
    return None


def check(key: str, value: str) -> None:
    """ValidationError (400) unless ``key`` of a known namespace is one of
    its keys with a valid ``value``."""
    rules = _rules_for(key)
    if rules is None:
        return
    for rule in rules:
        if re.fullmatch(rule.key, key):
            if not rule.valid(value):
                raise exception.ValidationError(
                    detail='Validation failed; extra spec %s must be %s, '
                           'not %r.' % (key, rule.expected, value[:100]))
            return
    raise exception.ValidationError(
        detail='Validation failed; extra spec %s is not a known key of '
               'its namespace.' % key)
