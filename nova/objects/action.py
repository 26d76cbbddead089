"""Instance actions and their events: the audit trail of every request.

An API request starts an action (found again by the request id the
context carries); each step on a compute host records an event::

    objects.InstanceAction.action_start(ctx, instance.uuid, 'evacuate')
    with objects.InstanceActionEvent.record(ctx, instance.uuid,
                                            'compute_rebuild_instance',
                                            host):
        ...   # an exception is recorded (result 'Error') and re-raised

A failed event keeps the traceback and the exception's message
(``details``) for administrators, and ``user_details``, the sentence the
server's owner reads instead (``exception.safe_message_of``): the message
names hosts and paths (doc/source/cleanup.rst, "Who reads a fault").
"""

import contextlib
import datetime
import traceback

from oslo_log import log as logging
from sqlalchemy import exc as sa_exc

from nova.db import models
from nova import exception
from nova.objects import base
from nova.objects import fields

LOG = logging.getLogger(__name__)

SUCCESS = 'Success'
ERROR = 'Error'
# The column of ``user_details`` (its sentences are far shorter).
_USER_LEN = 255


class InstanceAction(base.NovaObject):
    model = models.InstanceAction
    fields = {
        'id': fields.Integer(),
        'action': fields.String(),
        'instance_uuid': fields.String(),
        'request_id': fields.String(),
        'user_id': fields.String(),
        'project_id': fields.String(),
        'start_time': fields.DateTime(),
        'finish_time': fields.DateTime(),
        'message': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    action: str | None
    instance_uuid: str | None
    request_id: str | None
    user_id: str | None
    project_id: str | None
    start_time: datetime.datetime | None
    finish_time: datetime.datetime | None
    message: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @classmethod
    def action_start(cls, context, instance_uuid, action) -> \
            'InstanceAction':
        obj = cls.starting(context, instance_uuid, action)
        # The only constraint that can fail is the instance's foreign key.
        obj._db_insert(
            conflict=exception.InstanceNotFound(instance_id=instance_uuid))
        return obj

    @classmethod
    def starting(cls, context, instance_uuid, action) -> 'InstanceAction':
        """The context's ``action`` on the instance, started now but not
        written: the instance's creation writes it
        (``Instance.create(and_action=...)``), so that an instance never
        exists without the action that created it."""
        now = base.utcnow()
        return cls(context, action=action, instance_uuid=instance_uuid,
                   request_id=context.request_id, user_id=context.user_id,
                   project_id=context.project_id, start_time=now,
                   created_at=now, updated_at=now)

    def write_in(self, session) -> None:
        """Insert this action in ``session`` (the transaction of the
        instance's creation, after the instance row)."""
        self._db_insert_in(session)

    @classmethod
    def action_finish(cls, context, instance_uuid) -> 'InstanceAction':
        """Mark the context's action finished (finish_time = now)."""
        action = cls.get_by_request_id(context, instance_uuid,
                                       context.request_id)
        if action is None:
            raise exception.InstanceActionNotFound(
                request_id=context.request_id, instance_uuid=instance_uuid)
        action.finish_time = base.utcnow()
        action._db_update()
        return action

    @classmethod
    def get_by_request_id(cls, context, instance_uuid, request_id) -> \
            'InstanceAction | None':
        actions = cls._db_get_by(context, order_by=('-id',),
                                 instance_uuid=instance_uuid,
                                 request_id=request_id)
        return actions[0] if actions else None

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid) -> \
            list['InstanceAction']:
        """The instance's actions, newest first."""
        table = models.InstanceAction
        return cls._db_get_all(context, table.instance_uuid == instance_uuid,
                               order_by=[table.start_time.desc(),
                                         table.id.desc()])

    @property
    def events(self) -> list['InstanceActionEvent']:
        """This action's events, oldest first (read from the database)."""
        return InstanceActionEvent.get_by_action(self._context, self.id)


class InstanceActionEvent(base.NovaObject):
    model = models.InstanceActionEvent
    fields = {
        'id': fields.Integer(),
        'action_id': fields.Integer(),
        'event': fields.String(),
        'start_time': fields.DateTime(),
        'finish_time': fields.DateTime(),
        'result': fields.String(),
        'traceback': fields.String(),
        'host': fields.String(),
        'details': fields.String(),
        # NULL for events that did not fail and in rows written before
        # it was kept.
        'user_details': fields.String(),
        'created_at': fields.DateTime(),
        'updated_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    action_id: int | None
    event: str | None
    start_time: datetime.datetime | None
    finish_time: datetime.datetime | None
    result: str | None
    traceback: str | None
    host: str | None
    details: str | None
    user_details: str | None
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None

    @staticmethod
    def _action_of(context, instance_uuid) -> InstanceAction:
        action = InstanceAction.get_by_request_id(
            context, instance_uuid, context.request_id)
        if action is None:
            raise exception.InstanceActionNotFound(
                request_id=context.request_id, instance_uuid=instance_uuid)
        return action

    @classmethod
    def event_start(cls, context, instance_uuid, event, host=None,
                    action=None) -> 'InstanceActionEvent':
        """Start ``event`` in ``action`` (default: the context's action
        of the instance, read)."""
        obj = cls._starting(context, instance_uuid, event, host, action)
        obj._db_insert()
        return obj

    @classmethod
    def _starting(cls, context, instance_uuid, event, host,
                  action) -> 'InstanceActionEvent':
        if action is None:
            action = cls._action_of(context, instance_uuid)
        now = base.utcnow()
        return cls(context, action_id=action.id, event=event, host=host,
                   start_time=now, created_at=now, updated_at=now)

    @property
    def written(self) -> bool:
        """Whether this event's row was written (its start recorded)."""
        return self.id is not None

    def write_start(self) -> None:
        """Write this event's start on its own (no instance write carries
        it); nothing when it is written already."""
        if not self.written:
            self._db_insert()

    @classmethod
    def event_finish(cls, context, instance_uuid, event, exc=None) -> \
            'InstanceActionEvent':
        """Finish the newest unfinished ``event`` of the context's action.

        With ``exc`` the result is 'Error' with its traceback, its message
        and the owner's sentence for it, and the action's message becomes
        'Error' (as the API shows it).
        """
        action = cls._action_of(context, instance_uuid)
        table = models.InstanceActionEvent
        started = cls._db_get_all(
            context, table.action_id == action.id, table.event == event,
            table.finish_time.is_(None), order_by=[table.id.desc()])
        if not started:
            raise exception.InstanceActionEventNotFound(
                event=event, action_id=action.id)
        started[0]._finish(action, exc)
        return started[0]

    def succeeding(self) -> 'InstanceActionEvent':
        """This event ended 'Success', in memory, for the caller to write
        with the state it records (``Instance.save(and_event=...)``)."""
        self.finish_time = base.utcnow()
        self.result = SUCCESS
        return self

    def write_in(self, session) -> None:
        """Insert this event (its start, with the claim that begins what it
        records) or write its changed fields (its end, with the state it
        records) in ``session``, the transaction of the instance's write
        that carries it."""
        if not self.written:
            self._db_insert_in(session)
        elif not self._db_update_in(session):
            raise exception.InstanceActionEventNotFound(
                event=self.event, action_id=self.action_id)

    def _finish(self, action: InstanceAction, exc) -> None:
        """Finish this event (and fail ``action`` with ``exc``).

        An event whose start never reached the database (the claim that
        carried it failed, or its commit did) is written whole now: the
        record of what was tried is kept either way.
        """
        self.finish_time = base.utcnow()
        if exc is None:
            self.result = SUCCESS
        else:
            self.result = ERROR
            self.traceback = ''.join(traceback.format_exception(exc))
            self.details = str(exc) or type(exc).__name__
            self.user_details = exception.safe_message_of(exc)[:_USER_LEN]
        if not self.written or not self._db_update():
            self._forget_id()
            try:
                self._db_insert()
            except sa_exc.IntegrityError:
                # The action itself is gone (its instance purged): there
                # is nothing left to record the event in.
                LOG.warning('Event %(event)s of action %(action)s not '
                            'recorded: the action is gone',
                            {'event': self.event, 'action': action.id})
        if exc is not None:
            action.message = ERROR
            action._db_update()

    @classmethod
    @contextlib.contextmanager
    def record(cls, context, instance_uuid, event, host=None, action=None,
               deferred=False):
        """Start ``event``; finish it with the exception seen, if any.
        Yields the started event: ``succeeding()`` lets the caller end it
        with the write of the state it records.

        ``action``: the context's action of the instance, when the caller
        holds it already (saves reading it again).

        ``deferred=True``: the start is not written here; the caller
        writes it with its claim (``Instance.save(and_event=...)``), or on
        its own (``write_start``), before it acts. An event still unwritten
        at the end is written then, whole.
        """
        if action is None:
            action = cls._action_of(context, instance_uuid)
        # NOTE: the row started here is the one finished, by its id: no
        # search for "the newest unfinished event of that name".
        started = cls._starting(context, instance_uuid, event, host, action)
        if not deferred:
            started._db_insert()
        try:
            yield started
        except Exception as e:
            try:
                started._finish(action, e)
            except Exception:
                # NOTE: the operation's own failure matters more than the
                # audit record; log this one and re-raise that one.
                LOG.exception('Could not record the failure of event %s',
                              event, instance_uuid=instance_uuid)
            raise
        if started.finish_time is None:
            # Not already ended with the state it records (``succeeding``).
            started._finish(action, None)

    @classmethod
    def get_by_action(cls, context, action_id) -> \
            list['InstanceActionEvent']:
        table = models.InstanceActionEvent
        return cls._db_get_all(context, table.action_id == action_id,
                               order_by=[table.id])
