"""What a rebuild or an evacuation asks of the host that runs it.

The API (a rebuild) or the conductor (an evacuation) makes a
``RebuildRequest``; compute RPC 1.2 carries it whole
(``rebuild_instance(instance, request)``) to
``ComputeManager.rebuild_instance``, which hands it to the workflow
(``rebuild.RebuildWorkflow``). It holds only what that workflow reads.

RPC 1.0 and 1.1 sent Nova's keyword arguments instead, five of which
nothing here ever read (the original image, injected files, an admin
password, the original system metadata, block device mappings). A compute
still serves those messages (``from_legacy``), and a client capped below
1.2 for a rolling upgrade still sends them (``to_legacy``).
"""

import copy
import dataclasses
import typing

from nova import objects


@dataclasses.dataclass(frozen=True)
class RebuildRequest:
    """One rebuild (``recreate`` false: on the instance's own host) or
    evacuation (``recreate`` true: to the host it is sent to)."""
    recreate: bool = False
    # The image a rebuild boots from; None: the instance's own. An
    # evacuation always rebuilds from the instance's image.
    image_ref: str | None = None
    # The operator's word on shared storage (None: not given); checked
    # against the evidence, never trusted alone (shared_storage.py).
    on_shared_storage: bool | None = None
    # Refused: no ephemeral disk is kept by a rebuild here.
    preserve_ephemeral: bool = False
    # The evacuation's migration row (``accepted``); None makes the
    # target create one.
    migration: objects.Migration | None = None
    # The node the conductor claimed on the target; None: its first.
    scheduled_node: str | None = None
    # The vm_state an evacuation ends in: None keeps the one the instance
    # had (before microversion 2.95), ``stopped`` spawns the guest powered
    # off and ends STOPPED (2.95 and later).
    target_state: str | None = None


# The keyword arguments of RPC 1.0/1.1 that carry nothing read here, with
# the values every sender of those versions gave them.
_UNREAD: dict[str, typing.Any] = {
    'injected_files': [], 'new_pass': None, 'orig_sys_metadata': {},
    'bdms': None}
_ORIG_IMAGE_REF = 'orig_image_ref'
_FIELDS = frozenset(f.name for f in dataclasses.fields(RebuildRequest))


def from_legacy(**kwargs: typing.Any) -> RebuildRequest:
    """The request of an RPC 1.0/1.1 message (its keyword arguments after
    the instance). A name neither version had is a ``TypeError``, as the
    dispatcher's call of a method without that parameter would be."""
    unknown = set(kwargs) - _FIELDS - set(_UNREAD) - {_ORIG_IMAGE_REF}
    if unknown:
        raise TypeError('rebuild_instance() got unexpected keyword '
                        'arguments: %s' % ', '.join(sorted(unknown)))
    values = {k: v for k, v in kwargs.items() if k in _FIELDS}
    # 1.0 senders passed whatever was truthy or not; the workflow compares
    # with booleans.
    values['recreate'] = bool(values.get('recreate', False))
    values['preserve_ephemeral'] = bool(
        values.get('preserve_ephemeral', False))
    return RebuildRequest(**values)


def to_legacy(request: RebuildRequest) -> dict[str, typing.Any]:
    """The keyword arguments an RPC 1.0/1.1 message carries ``request``
    in; ``target_state`` (1.1) only when there is one, so that the
    message without it is one a 1.0 compute serves."""
    kwargs: dict[str, typing.Any] = {_ORIG_IMAGE_REF: request.image_ref}
    kwargs.update(copy.deepcopy(_UNREAD))
    for field in dataclasses.fields(RebuildRequest):
        kwargs[field.name] = getattr(request, field.name)
    if request.target_state is None:
        del kwargs['target_state']
    return kwargs
