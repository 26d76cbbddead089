"""Recording what happened to an instance: action events and faults.

An API request starts an instance action (``objects.InstanceAction``); the
compute manager records one event per operation in it, named like Nova's
(``compute_start_instance``), with the error when it fails, and an
``InstanceFault`` for every failed operation (doc/source/cleanup.rst,
"Invariants", invariant 5).

Recording never hides the operation's own failure: a failure to write the
fault is logged and the original exception goes on.

Example::

    with actions.event(context, instance, 'start',
                       'compute_start_instance', host):
        ...
"""

import contextlib

from oslo_log import log as logging

from nova import objects

LOG = logging.getLogger(__name__)


def ensure_action(context, instance, action):
    """The action of ``context.request_id``, started here when missing.

    The API starts it for a request it accepted; the manager starts one
    itself when it acts on its own (``init_host``) or is called directly.
    """
    found = objects.InstanceAction.get_by_request_id(
        context, instance.uuid, context.request_id)
    if found is not None:
        return found
    LOG.debug('Starting action %(action)s for request %(req)s',
              {'action': action, 'req': context.request_id},
              instance=instance)
    return objects.InstanceAction.action_start(context, instance.uuid,
                                               action)


@contextlib.contextmanager
def event(context, instance, action, event_name, host, deferred=False):
    """Record ``event_name`` in the request's action (started if missing).

    The event ends 'Success', or 'Error' with the exception, which is
    re-raised. Yields the started ``InstanceActionEvent`` (see
    ``InstanceActionEvent.record``; ``deferred``: its start is for the
    caller to write, with its claim).
    """
    started = ensure_action(context, instance, action)
    with objects.InstanceActionEvent.record(context, instance.uuid,
                                            event_name, host,
                                            action=started,
                                            deferred=deferred) as event_row:
        yield event_row


def record_fault(context, instance, exc, host):
    """Write an InstanceFault for ``exc``; log, never raise, on failure."""
    try:
        objects.InstanceFault.create(context, instance.uuid, exc, host)
    except Exception:
        LOG.exception('Could not record the fault %s', exc,
                      instance=instance)
