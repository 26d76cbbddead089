"""Routing of request paths to handlers.

A route is a method, a path template with ``{name}`` placeholders (each
matching one non-empty path segment) and an optional microversion range::

    router = Router([
        Route('GET', '/servers/{server_id}', servers.show),
        Route('PUT', '/os-services/force-down', services.force_down,
              min_version='2.11', max_version='2.52'),
    ])
    route, params = router.match('GET', '/servers/abc', version)

A route with a request body declares its JSON schema (``body``: one, or a
function of the microversion); the handler validates with that very
schema (``req.validated_body()``), and the OpenAPI document
(``nova.api.openstack.openapi``) is made from it.

Literal segments win over placeholders (``/servers/detail`` is not a
server id). Paths are matched segment by segment as received: nothing is
normalised, and a ``.`` or ``..`` segment (also when it arrived
percent-encoded) is refused outright, so no path can reach a route through
traversal.
"""

import dataclasses
import functools
from typing import Callable

from nova.api.openstack import api_version
from nova.api.openstack import wsgi


def split_path(path: str) -> tuple[str, ...]:
    """The segments of ``path``; raises HTTPError for unusable paths."""
    if not path.startswith('/'):
        raise wsgi.HTTPError(404, 'Unknown resource %s' % path)
    trimmed = path[1:]
    if trimmed.endswith('/'):
        trimmed = trimmed[:-1]
    if not trimmed:
        return ()
    segments = tuple(trimmed.split('/'))
    for segment in segments:
        if segment in ('.', '..'):
            raise wsgi.HTTPError(
                400, "Path segments '.' and '..' are not allowed.")
        if segment == '':
            raise wsgi.HTTPError(404, 'Unknown resource %s' % path)
        if any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in segment):
            raise wsgi.HTTPError(
                400, 'Path contains control characters.')
    return segments


# A request body's JSON schema, or a function of the microversion giving
# it.
BodySchema = dict | Callable[[api_version.APIVersion], dict]


@dataclasses.dataclass(frozen=True)
class Route:
    method: str
    template: str
    handler: Callable
    min_version: str | None = None
    max_version: str | None = None
    # The schema the handler validates the body with (``Request.
    # validated_body``), and the OpenAPI document shows (``openapi.py``).
    body: BodySchema | None = None

    def body_schema(self, version: api_version.APIVersion) -> dict | None:
        return self.body(version) if callable(self.body) else self.body

    @functools.cached_property
    def segments(self) -> tuple[str, ...]:
        return tuple(s for s in self.template.split('/') if s)

    def bind(self, segments: tuple[str, ...]) -> dict | None:
        """Path parameters if ``segments`` match the template, else None."""
        template = self.segments
        if len(template) != len(segments):
            return None
        params = {}
        for expected, actual in zip(template, segments):
            if expected.startswith('{') and expected.endswith('}'):
                params[expected[1:-1]] = actual
            elif expected != actual:
                return None
        return params

    def specificity(self) -> tuple[bool, ...]:
        # Sorts literal segments before placeholders, position by position.
        return tuple(s.startswith('{') for s in self.segments)

    def serves(self, version: api_version.APIVersion) -> bool:
        return version.matches(
            None if self.min_version is None
            else api_version.v(self.min_version),
            None if self.max_version is None
            else api_version.v(self.max_version))


class Router:
    def __init__(self, routes):
        self._routes = sorted(routes, key=Route.specificity)
        # By number of segments, in the same order: a path is tried only
        # against the templates of its length (every request is routed).
        self._by_length: dict[int, list[Route]] = {}
        for route in self._routes:
            self._by_length.setdefault(len(route.segments), []).append(route)

    @property
    def routes(self) -> list[Route]:
        return list(self._routes)

    def match(self, method: str, path: str,
              version: api_version.APIVersion) -> tuple[Route, dict]:
        """The route for a request, with its path parameters.

        404 when no route has this path at this microversion, 405 (with
        ``Allow``) when some have it but not for this method.
        """
        segments = split_path(path)
        allowed = []
        for route in self._by_length.get(len(segments), ()):
            params = route.bind(segments)
            if params is None or not route.serves(version):
                continue
            if route.method == method:
                return route, params
            allowed.append(route.method)
        if allowed:
            raise wsgi.HTTPError(
                405, 'The method %s is not allowed for %s.' % (method, path),
                headers={'Allow': ', '.join(sorted(set(allowed)))})
        raise wsgi.HTTPError(404, 'The resource could not be found.')
