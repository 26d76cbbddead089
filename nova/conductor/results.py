"""Typed results the conductor returns (they cross RPC as dataclasses)."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class EvacuationResult:
    """The outcome of requesting the evacuation of one instance.

    ``accepted`` means the evacuation was requested and handed to a target
    (its migration then shows how it ends); ``error`` says why not.
    """
    instance_uuid: str
    accepted: bool
    error: str | None = None
    migration_uuid: str | None = None
    target_host: str | None = None
