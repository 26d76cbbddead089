"""Host-evacuate runs: one row per run, one per instance of the host.

The API records a run with every instance of the failed host
``not-started`` (``HostEvacuation.create``) and casts it to a conductor,
which takes it (``take``: ``queued`` -> ``running``, owned by that
conductor), writes each instance's outcome as it learns it, and ends it
(``finished``). A conductor that starts again marks the runs it owned and
never ended ``interrupted`` (``interrupt_owned_by``): nothing else would
ever end them. Clients poll the rows (``GET /os-host-evacuations/{id}``).

Example::

    run = host_evacuation.HostEvacuation.create(ctx, 'compute1', instances)
    if run.take(ctx, 'conductor1'):
        for item in run.instances():
            item.outcome = host_evacuation.DONE
            item.save()
        run.end(host_evacuation.FINISHED)
"""

import dataclasses
import datetime

from oslo_utils import uuidutils
import sqlalchemy as sa

from nova.db import control_models
from nova import exception
from nova.objects import base
from nova.objects import fields

# A run's status.
QUEUED = 'queued'
RUNNING = 'running'
FINISHED = 'finished'
INTERRUPTED = 'interrupted'
ENDED_STATUSES = (FINISHED, INTERRUPTED)

# An instance's (and an attempt's) outcome.
DONE = 'done'
FAILED = 'failed'
REFUSED = 'refused'
IN_PROGRESS = 'in-progress'
NOT_STARTED = 'not-started'
OUTCOMES = (DONE, FAILED, REFUSED, IN_PROGRESS, NOT_STARTED)
ENDED_OUTCOMES = (DONE, FAILED, REFUSED)


@dataclasses.dataclass
class Attempt:
    """One evacuation request made for an instance."""
    target: str | None            # None: the conductor found none
    outcome: str = IN_PROGRESS    # DONE, FAILED, REFUSED or IN_PROGRESS
    migration_uuid: str | None = None
    message: str | None = None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> 'Attempt':
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


class HostEvacuationInstance(base.NovaObject):
    model = control_models.HostEvacuationInstance
    fields = {
        'id': fields.Integer(),
        'evacuation_uuid': fields.String(nullable=False),
        'instance_uuid': fields.String(nullable=False),
        'outcome': fields.String(default=NOT_STARTED, nullable=False),
        'host': fields.String(),
        'vm_state_before': fields.String(),
        'attempts': fields.List(),
        'message': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    id: int | None
    evacuation_uuid: str
    instance_uuid: str
    outcome: str
    host: str | None
    vm_state_before: str | None
    attempts: list
    message: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    def attempt_list(self) -> list[Attempt]:
        return [Attempt.from_dict(a) for a in self.attempts]

    def set_attempts(self, attempts: list[Attempt]) -> None:
        self.attempts = [a.to_dict() for a in attempts]

    @property
    def ended(self) -> bool:
        return self.outcome in ENDED_OUTCOMES

    def save(self) -> None:
        if self.obj_what_changed():
            self._db_update()

    @classmethod
    def get_by_evacuation(cls, context, evacuation_uuid: str
                          ) -> list['HostEvacuationInstance']:
        """The instances of a run, by instance uuid."""
        table = control_models.HostEvacuationInstance
        return cls._db_get_all(context,
                               table.evacuation_uuid == evacuation_uuid,
                               order_by=[table.instance_uuid])


class HostEvacuation(base.NovaObject):
    model = control_models.HostEvacuation
    fields = {
        'id': fields.Integer(),
        'uuid': fields.String(default=uuidutils.generate_uuid),
        'source_host': fields.String(nullable=False),
        'target_host': fields.String(),
        'on_shared_storage': fields.Boolean(),
        'status': fields.String(default=QUEUED, nullable=False),
        'conductor': fields.String(),
        'user_id': fields.String(),
        'project_id': fields.String(),
        'skipped_targets': fields.Dict(),
        'message': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    id: int | None
    uuid: str
    source_host: str
    target_host: str | None
    on_shared_storage: bool | None
    status: str
    conductor: str | None
    user_id: str | None
    project_id: str | None
    skipped_targets: dict
    message: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @property
    def ended(self) -> bool:
        return self.status in ENDED_STATUSES

    @classmethod
    def create(cls, context, source_host: str, instances,
               target_host: str | None = None,
               on_shared_storage: bool | None = None) -> 'HostEvacuation':
        """Record a run and every one of ``instances``, ``not-started``,
        in one transaction: a client never sees a run without them."""
        now = base.utcnow()
        run = cls(context, source_host=source_host, target_host=target_host,
                  on_shared_storage=on_shared_storage, status=QUEUED,
                  user_id=context.user_id, project_id=context.project_id,
                  created_at=now, updated_at=now)
        items = [HostEvacuationInstance(
            context, evacuation_uuid=run.uuid, instance_uuid=i.uuid,
            outcome=NOT_STARTED, host=i.host, vm_state_before=i.vm_state,
            created_at=now, updated_at=now) for i in instances]

        def insert_items(session, _values):
            for item in items:
                session.execute(sa.insert(item.model).values(
                    **item._db_values(n for n in item.fields if n != 'id')))

        run._db_insert(also=insert_items)
        return run

    @classmethod
    def get_by_uuid(cls, context, uuid: str) -> 'HostEvacuation':
        found = cls._db_get_one(
            context, control_models.HostEvacuation.uuid == uuid)
        if found is None:
            raise exception.HostEvacuationNotFound(evacuation_id=uuid)
        return found

    @classmethod
    def get_all(cls, context) -> list['HostEvacuation']:
        """Every run, newest first."""
        table = control_models.HostEvacuation
        return cls._db_get_all(context, order_by=[table.id.desc()])

    @classmethod
    def get_unended(cls, context, source_host: str
                    ) -> list['HostEvacuation']:
        """The runs of ``source_host`` that have not ended."""
        table = control_models.HostEvacuation
        return cls._db_get_all(context, table.source_host == source_host,
                               table.status.in_((QUEUED, RUNNING)))

    def instances(self) -> list[HostEvacuationInstance]:
        return HostEvacuationInstance.get_by_evacuation(self._context,
                                                        self.uuid)

    def take(self, conductor: str) -> bool:
        """Make ``conductor`` the run's owner, from ``queued`` only:
        whether it did (a run is run once)."""
        self.status = RUNNING
        self.conductor = conductor
        if self._db_update(control_models.HostEvacuation.status == QUEUED):
            return True
        self.refresh()
        return False

    def save(self) -> None:
        if self.obj_what_changed():
            self._db_update()

    def end(self, status: str, message: str | None = None) -> bool:
        """End the run (``finished`` or ``interrupted``), from ``running``
        only: whether it did."""
        if status not in ENDED_STATUSES:
            raise exception.InvalidInput(reason='%r does not end a run'
                                         % status)
        return self._end_from(RUNNING, status, message)

    def abandon(self, message: str) -> bool:
        """End a run no conductor will take (its cast failed), from
        ``queued`` only: whether it did."""
        return self._end_from(QUEUED, INTERRUPTED, message)

    def _end_from(self, expected: str, status: str,
                  message: str | None) -> bool:
        self.status = status
        if message is not None:
            self.message = message
        if self._db_update(control_models.HostEvacuation.status == expected):
            return True
        self.refresh()
        return False

    def refresh(self) -> None:
        fresh = self.get_by_uuid(self._context, self.uuid)
        for name in self.fields:
            object.__setattr__(self, name, getattr(fresh, name))
        self.obj_reset_changes()

    @classmethod
    def interrupt_owned_by(cls, context, conductor: str,
                           why: str) -> list['HostEvacuation']:
        """Mark ``interrupted`` the runs ``conductor`` owned and never
        ended, saying ``why`` on them and on each instance not ended."""
        table = control_models.HostEvacuation
        stopped = []
        for run in cls._db_get_all(context, table.conductor == conductor,
                                   table.status == RUNNING):
            for item in run.instances():
                if item.ended:
                    continue
                item.message = '\n'.join(
                    line for line in (item.message, why) if line)
                item.save()
            if run.end(INTERRUPTED, message=why):
                stopped.append(run)
        return stopped


def interrupted_message(conductor: str) -> str:
    """What an interrupted run says: its conductor stopped before the
    run ended (evacuations it had requested may still end)."""
    return ('interrupted: conductor %s stopped before the run ended; '
            'evacuations already requested go on, see os-migrations'
            % conductor)
