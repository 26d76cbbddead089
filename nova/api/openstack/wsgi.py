"""The request and response types handlers see.

A handler is a plain function ``handler(req, **path_params)``; it returns
a JSON-serialisable body (status 200) or a ``Result`` for any other status
or extra headers, and raises project exceptions (``nova.exception``) or
``HTTPError`` for failures; ``faults`` turns those into Compute API error
bodies.

Example::

    def create(req):
        body = req.json_body_validated(schemas.create)
        ...
        return Result({'server': view}, status=202,
                      headers={'Location': link})
"""

import dataclasses
import json
from typing import Any

import webob

from nova.api.openstack import api_version as apiver
from nova.api.openstack import validation
from nova import exception

JSON_TYPE = 'application/json'
# No request of this API nests deeper than a few levels.
MAX_JSON_DEPTH = 32
# How much of a body that is too large is read before the 413 is sent.
DISCARD_LIMIT = 16 * 1024 * 1024


def _nested_deeper_than(value, limit: int) -> bool:
    """Whether a parsed JSON value nests lists and objects deeper than
    ``limit`` (iteratively: the check itself must not recurse)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class HTTPError(Exception):
    """A failure that belongs to HTTP itself (no such path, bad method)."""

    def __init__(self, status: int, message: str, headers=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


@dataclasses.dataclass
class Result:
    body: Any = None
    status: int = 200
    headers: dict = dataclasses.field(default_factory=dict)


class Request(webob.Request):
    """A WebOb request plus what the application learnt about it."""

    # Set by the application before a handler runs.
    context = None
    route = None
    request_id: str | None = None
    api_version: apiver.APIVersion = apiver.MIN_VERSION
    max_body_size: int = 114688

    def is_version(self, min_version=None, max_version=None) -> bool:
        """Whether the request's microversion is in [min, max]."""
        return self.api_version.matches(
            None if min_version is None else apiver.v(min_version),
            None if max_version is None else apiver.v(max_version))

    def json_body_or_none(self):
        """The parsed JSON body, None when the request has no body."""
        length = self.content_length
        if length is None:
            if 'chunked' in self.headers.get('Transfer-Encoding', ''):
                raise HTTPError(411, 'Length Required: send the body with '
                                     'a Content-Length header.')
            # NOTE: without a length the body would be read until the
            # client closes its side; a request without one has no body.
            return None
        if length > self.max_body_size:
            self._discard(length)
            raise HTTPError(413, 'Request is too large: %d bytes, at most '
                            '%d are accepted.' % (length, self.max_body_size))
        raw = self.body_file.read(length) if length > 0 else b''
        if len(raw) > self.max_body_size:
            raise HTTPError(413, 'Request is too large: at most %d bytes '
                            'are accepted.' % self.max_body_size)
        if not raw.strip():
            return None
        content_type = self.content_type
        if content_type and content_type != JSON_TYPE:
            raise HTTPError(415, 'Unsupported Content-Type %s: send %s.'
                            % (content_type, JSON_TYPE))
        try:
            body = json.loads(raw.decode('utf-8'))
            too_deep = _nested_deeper_than(body, MAX_JSON_DEPTH)
        except (UnicodeDecodeError, ValueError):
            raise exception.ValidationError(
                detail='Malformed request body: not valid JSON.')
        except RecursionError:
            too_deep = True
        if too_deep:
            # NOTE: a body nested deeper than any request of this API
            # would otherwise exhaust the interpreter's stack later (in
            # validation, or when an error message shows the value).
            raise exception.ValidationError(
                detail='Malformed request body: nested deeper than %d '
                       'levels.' % MAX_JSON_DEPTH)
        return body

    def _discard(self, length: int) -> None:
        """Read and drop up to ``DISCARD_LIMIT`` bytes of a body refused
        unread.

        NOTE: clients that send the whole body before they read the
        answer (urllib, requests, so every CLI) would otherwise see the
        connection reset under their feet instead of the 413: closing a
        socket with unread data makes the kernel send a reset.
        """
        remaining = min(length, DISCARD_LIMIT)
        while remaining > 0:
            chunk = self.body_file_raw.read(min(remaining, 65536))
            if not chunk:
                return
            remaining -= len(chunk)

    def json_body(self):
        """The parsed JSON body; a request without one is a 400."""
        body = self.json_body_or_none()
        if body is None:
            raise exception.ValidationError(
                detail='Malformed request body: a JSON body is required.')
        return body

    def json_body_validated(self, schema):
        body = self.json_body()
        validation.validate(schema, body)
        return body

    def validated_body(self):
        """The body, validated with the schema its route declares for
        this request's microversion."""
        return self.json_body_validated(
            self.route.body_schema(self.api_version))
