"""Instance faults: what failed, where, and for a 500 the traceback.

Every failed operation leaves one (doc/source/cleanup.rst, "Invariants",
invariant 5)::

    except Exception as e:
        objects.InstanceFault.create(ctx, instance.uuid, e, host)

Two messages are kept, since the exception is gone once the fault is
written: ``message``, the operator's (it names hosts, paths, storage
identities), and ``user_message``, the sentence the server's owner reads
instead (``exception.safe_message_of``; doc/source/cleanup.rst, "Who
reads a fault"). ``details`` holds the traceback of a 500 only, as in
Nova: a refusal (4xx) is explained by its message, not by where in the
code it was raised.
"""

import datetime
import traceback

from nova.db import models
from nova import exception
from nova.objects import base
from nova.objects import fields

# The message column holds 1024 characters (a refusal's reason and what
# unblocks it fit); for a 500 the traceback is in ``details``, for others
# the compute log has it. The owner's sentence fits 255.
_MESSAGE_LEN = 1024
_USER_MESSAGE_LEN = 255
_ELISION = ' ... '


def _message_of(exc: BaseException) -> str:
    """The message, shortened in the middle when it is too long: a
    refusal says what happened first and what unblocks it last, and an
    operator reading ``nova show`` needs both."""
    message = exception.message_of(exc)
    if len(message) <= _MESSAGE_LEN:
        return message
    keep = _MESSAGE_LEN - len(_ELISION)
    head = keep * 2 // 5
    return message[:head] + _ELISION + message[len(message) - (keep - head):]


def _user_message_of(exc: BaseException) -> str:
    return exception.safe_message_of(exc)[:_USER_MESSAGE_LEN]


def _details_of(exc: BaseException, code: int) -> str | None:
    """The traceback of a 500; nothing for any other code."""
    if code != 500:
        return None
    return ''.join(traceback.format_exception(exc))


class InstanceFault(base.NovaObject):
    model = models.InstanceFault
    fields = {
        'id': fields.Integer(),
        'instance_uuid': fields.String(),
        'code': fields.Integer(default=500, nullable=False),
        'message': fields.String(),
        # NULL in rows written before it was kept (the API then shows
        # the sentence of ``code``, never ``message``).
        'user_message': fields.String(),
        'details': fields.String(),
        'host': fields.String(),
        'created_at': fields.DateTime(),
    }

    # The fields as attributes, for readers and type checkers (their
    # values live on the instance; see base.NovaObject).
    id: int | None
    instance_uuid: str | None
    code: int
    message: str | None
    user_message: str | None
    details: str | None
    host: str | None
    created_at: datetime.datetime | None

    @classmethod
    def create(cls, context, instance_uuid, exc: BaseException,
               host=None) -> 'InstanceFault':
        code = exception.code_of(exc)
        fault = cls(context, instance_uuid=instance_uuid, code=code,
                    message=_message_of(exc),
                    user_message=_user_message_of(exc),
                    details=_details_of(exc, code),
                    host=host, created_at=base.utcnow())
        # The only constraint that can fail is the instance's foreign key.
        fault._db_insert(
            conflict=exception.InstanceNotFound(instance_id=instance_uuid))
        return fault

    @classmethod
    def get_by_instance_uuid(cls, context,
                             instance_uuid) -> list['InstanceFault']:
        """Every fault of the instance, newest first."""
        table = models.InstanceFault
        return cls._db_get_all(
            context, table.instance_uuid == instance_uuid,
            order_by=[table.created_at.desc(), table.id.desc()])

    @classmethod
    def get_latest_for_instance(cls, context,
                                instance_uuid) -> 'InstanceFault | None':
        faults = cls.get_by_instance_uuid(context, instance_uuid)
        return faults[0] if faults else None
