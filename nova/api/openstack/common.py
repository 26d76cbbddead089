"""What several controllers share: server status, links, times, lookups.

The server ``status`` the API shows is derived from ``vm_state`` and
``task_state`` as the Compute API reference describes it: the vm_state
gives the status at rest, some task states override it while they run
(an active server being hard-rebooted is ``HARD_REBOOT``).
"""

import dataclasses
import datetime
import re
import urllib.parse

from oslo_utils import timeutils

from nova.conf import CONF
from nova import exception
from nova.model import task_states as ts
from nova.model import vm_states as vs

_REBOOT = {ts.REBOOTING: 'REBOOT', ts.REBOOT_PENDING: 'REBOOT',
           ts.REBOOT_STARTED: 'REBOOT', ts.REBOOTING_HARD: 'HARD_REBOOT',
           ts.REBOOT_PENDING_HARD: 'HARD_REBOOT',
           ts.REBOOT_STARTED_HARD: 'HARD_REBOOT'}
_REBUILD = {ts.REBUILDING: 'REBUILD',
            ts.REBUILD_BLOCK_DEVICE_MAPPING: 'REBUILD',
            ts.REBUILD_SPAWNING: 'REBUILD'}
_MIGRATE = {ts.MIGRATING: 'MIGRATING'}

# vm_state -> (status at rest, {task_state: status while it runs})
_STATUS = {
    vs.ACTIVE: ('ACTIVE', {**_REBOOT, **_REBUILD, **_MIGRATE}),
    vs.BUILDING: ('BUILD', {}),
    vs.STOPPED: ('SHUTOFF', {**_REBUILD, ts.REBOOTING_HARD: 'HARD_REBOOT',
                             ts.REBOOT_PENDING_HARD: 'HARD_REBOOT',
                             ts.REBOOT_STARTED_HARD: 'HARD_REBOOT'}),
    vs.RESIZED: ('VERIFY_RESIZE', {}),
    vs.PAUSED: ('PAUSED', {**_MIGRATE}),
    vs.SUSPENDED: ('SUSPENDED', {ts.REBOOTING_HARD: 'HARD_REBOOT'}),
    vs.RESCUED: ('RESCUE', {}),
    vs.ERROR: ('ERROR', {**_REBUILD}),
    vs.DELETED: ('DELETED', {}),
    vs.SOFT_DELETED: ('SOFT_DELETED', {}),
    vs.SHELVED: ('SHELVED', {}),
    vs.SHELVED_OFFLOADED: ('SHELVED_OFFLOADED', {}),
}


def status_from_state(vm_state: str | None, task_state: str | None) -> str:
    at_rest, during = _STATUS.get(vm_state, ('UNKNOWN', {}))
    return during.get(task_state, at_rest)


def vm_states_for_status(status: str) -> list[str] | None:
    """The vm_states a ``status`` filter selects; None if unknown.

    Only statuses shown at rest select anything, as in the reference:
    filtering on ``REBOOT`` finds active servers being rebooted, which
    the caller refines by task_state.
    """
    status = status.upper()
    found = [vm for vm, (at_rest, during) in _STATUS.items()
             if at_rest == status or status in during.values()]
    return found or None


def isotime(value: datetime.datetime | None) -> str | None:
    """A time as the servers API shows it: 2012-08-20T21:11:09Z."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value.strftime('%Y-%m-%dT%H:%M:%SZ')


def dbtime(value: datetime.datetime | None) -> str | None:
    """A time as the admin APIs show it: 2012-10-29T13:42:02.000000."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value.strftime('%Y-%m-%dT%H:%M:%S.%f')


def link_prefix(req) -> str:
    prefix = CONF.api.compute_link_prefix or req.host_url
    return prefix.rstrip('/')


def links(req, collection: str, item_id: str) -> list[dict]:
    prefix = link_prefix(req)
    return [
        {'rel': 'self',
         'href': '%s/v2.1/%s/%s' % (prefix, collection, item_id)},
        {'rel': 'bookmark',
         'href': '%s/%s/%s' % (prefix, collection, item_id)},
    ]


_UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                      r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')


def uuid_like(value) -> bool:
    """Whether ``value`` is a UUID in its canonical 8-4-4-4-12 form.

    Stricter than ``uuidutils.is_uuid_like`` (which also takes braces,
    URNs and hyphen-less forms): ids are compared as stored.
    """
    return isinstance(value, str) and bool(_UUID_RE.match(value))


def require_uuid(value: str, not_found: exception.NotFound) -> str:
    """``value`` if it is a canonical-looking UUID, else raise not_found.

    Ids in paths are never used before this check, so ``..`` or an
    encoded slash can never reach a lookup, a log line or a file name.
    """
    if not uuid_like(value):
        raise not_found
    return value


def get_instance(compute_api, context, server_id: str):
    """The instance a path names, as its caller may see it.

    A server of another project is "not found", not "forbidden", so its
    existence does not leak.
    """
    not_found = exception.InstanceNotFound(instance_id=server_id)
    require_uuid(server_id, not_found)
    instance = compute_api.get(context, server_id)
    if not context.is_admin and instance.project_id != context.project_id:
        raise not_found
    return instance


def query_value(req, name: str) -> str | None:
    """A single-valued query parameter (the last one if repeated)."""
    values = req.GET.getall(name)
    return values[-1] if values else None


def refuse_unknown_query(req, known, since: str = '2.75') -> None:
    """From microversion ``since`` a query parameter outside ``known`` is
    a 400 (the reference's ``additionalProperties: false`` on its
    queries); below, it is ignored."""
    if not req.is_version(since):
        return
    unknown = sorted(set(req.GET.keys()) - set(known))
    if unknown:
        raise exception.ValidationError(
            detail='Invalid input for query parameters %s: additional '
                   'properties are not allowed.'
                   % ', '.join(n[:100] for n in unknown[:10]))


def limit_and_marker(req, max_limit: int) -> tuple[int, str | None]:
    text = query_value(req, 'limit')
    limit = max_limit
    if text is not None:
        try:
            limit = int(text)
        except ValueError:
            raise exception.ValidationError(
                detail='limit param must be an integer')
        if limit < 0:
            raise exception.ValidationError(
                detail='limit param must be positive')
        limit = min(limit, max_limit)
    return limit, query_value(req, 'marker')


def paginate(items: list, limit: int, marker: str | None, key) -> list:
    """``limit`` items after the one whose ``key`` is ``marker``."""
    if marker is not None:
        for index, item in enumerate(items):
            if key(item) == marker:
                items = items[index + 1:]
                break
        else:
            raise exception.ValidationError(
                detail='marker [%s] not found' % marker)
    return items[:limit]


def collection_links(req, collection: str, page: list, limit: int,
                     key) -> list[dict]:
    """The reference's ``<collection>_links``: a ``next`` link, with the
    request's parameters and the last item's ``key`` as the marker, when
    the page is full (there may be more); none otherwise."""
    if not limit or len(page) < limit:
        return []
    params = [(k, v) for k, v in req.GET.items() if k != 'marker']
    params.append(('marker', key(page[-1])))
    return [{'rel': 'next',
             'href': '%s/v2.1/%s?%s' % (link_prefix(req), collection,
                                        urllib.parse.urlencode(params))}]


def parse_time(text: str, formats: tuple[str, ...],
               detail: str) -> datetime.datetime:
    """``text`` in the first of ``formats`` it matches; a 400 saying
    ``detail`` when none does."""
    for fmt in formats:
        try:
            return datetime.datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise exception.ValidationError(detail=detail)


def _query_time(req, name: str) -> datetime.datetime | None:
    text = query_value(req, name)
    if text is None:
        return None
    try:
        value = timeutils.parse_isotime(text)
    except ValueError:
        raise exception.ValidationError(
            detail='Invalid input for query parameter %s. Value: %s. It is '
                   'not an ISO 8601 date-time.' % (name, text[:100]))
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value


@dataclasses.dataclass(frozen=True)
class ChangesWindow:
    """``changes-since`` / ``changes-before``: a window of update times
    (both ends included; an open end is None)."""
    since: datetime.datetime | None = None
    before: datetime.datetime | None = None

    @property
    def given(self) -> bool:
        return self.since is not None or self.before is not None

    def contains(self, value: datetime.datetime | None) -> bool:
        if not self.given:
            return True
        if value is None:
            return False
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        if self.since is not None and value < self.since:
            return False
        return self.before is None or value <= self.before


def changes_window(req, since_version: str | None,
                   before_version: str = '2.66') -> ChangesWindow:
    """The ``changes-since`` (from ``since_version``; None: every
    version) and ``changes-before`` (from ``before_version``) of a list
    request; a window that ends before it starts is a 400."""
    since = (_query_time(req, 'changes-since')
             if req.is_version(since_version) else None)
    before = (_query_time(req, 'changes-before')
              if req.is_version(before_version) else None)
    if since is not None and before is not None and since > before:
        raise exception.ValidationError(
            detail='The value of changes-since must be less than or equal '
                   'to changes-before.')
    return ChangesWindow(since, before)
