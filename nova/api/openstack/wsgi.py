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
            return json.loads(raw.decode('utf-8'))
        except (UnicodeDecodeError, ValueError):
            raise exception.ValidationError(
                detail='Malformed request body: not valid JSON.')

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
