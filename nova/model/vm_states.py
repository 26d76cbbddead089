"""Stable states of an instance, Nova's names and string values.

A vm_state is where an instance rests between operations; what is being
done to it right now is its task_state (``task_states``).
"""

ACTIVE = 'active'
BUILDING = 'building'
PAUSED = 'paused'
SUSPENDED = 'suspended'
STOPPED = 'stopped'
RESCUED = 'rescued'
RESIZED = 'resized'
SOFT_DELETED = 'soft-delete'
DELETED = 'deleted'
ERROR = 'error'
SHELVED = 'shelved'
SHELVED_OFFLOADED = 'shelved_offloaded'

ALL = frozenset((ACTIVE, BUILDING, PAUSED, SUSPENDED, STOPPED, RESCUED,
                 RESIZED, SOFT_DELETED, DELETED, ERROR, SHELVED,
                 SHELVED_OFFLOADED))
