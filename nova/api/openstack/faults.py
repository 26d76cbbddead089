"""Errors as the Compute API shapes them.

Every failure becomes ``{"<faultName>": {"code": N, "message": "..."}}``
with the fault names of the reference (``badRequest``, ``itemNotFound``,
``conflictingRequest`` ...). A project exception maps by its ``code``; any
other exception is a bug: 500 ``computeFault`` with a message that names
the request id, and the traceback goes to the log, not to the client.
"""

import dataclasses

from oslo_log import log as logging

from nova.api.openstack import wsgi
from nova import exception

LOG = logging.getLogger(__name__)

FAULT_NAMES = {
    400: 'badRequest',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'itemNotFound',
    405: 'badMethod',
    409: 'conflictingRequest',
    413: 'overLimit',
    415: 'badMediaType',
    429: 'overLimit',
    501: 'notImplemented',
    503: 'serviceUnavailable',
}
DEFAULT_FAULT_NAME = 'computeFault'


@dataclasses.dataclass
class Fault:
    status: int
    message: str
    headers: dict = dataclasses.field(default_factory=dict)

    @property
    def body(self) -> dict:
        name = FAULT_NAMES.get(self.status, DEFAULT_FAULT_NAME)
        return {name: {'code': self.status, 'message': self.message}}


def from_exception(exc: BaseException, request_id: str | None = None) -> Fault:
    """The fault a handler's exception is answered with."""
    if isinstance(exc, wsgi.HTTPError):
        return Fault(exc.status, exc.message, exc.headers)
    if isinstance(exc, exception.NovaException):
        code = exc.code if isinstance(exc.code, int) else 500
        if 400 <= code < 500 or code in (501, 503):
            return Fault(code, exc.format_message())
        # A project exception with a 5xx code: a server-side failure
        # the client should see, but the traceback stays in the log.
        LOG.error('Request %(req)s failed: %(exc)s',
                  {'req': request_id, 'exc': exc.format_message()},
                  exc_info=exc)
        return Fault(code, exc.format_message())
    LOG.error('Unexpected error in request %s', request_id, exc_info=exc)
    return Fault(500, 'Unexpected API Error. The nova-api log has the '
                      'details of request %s. <%s>'
                 % (request_id, type(exc).__name__))
