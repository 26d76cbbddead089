"""``/flavors/{flavor_id}/os-extra_specs``: a flavor's key/value specs.

Everyone who sees the flavor reads them (list, one key); administrators
set them (``POST``: several keys at once, ``PUT .../{key}``: one key,
named in the path and the body alike) and unset them (``DELETE``). From
2.86 the keys of known namespaces are checked (``extra_spec_rules``).
Numbers are stored as their text, as they are shown.
"""

from nova.api.openstack.compute import extra_spec_rules
from nova.api.openstack.compute import flavors
from nova.api.openstack.compute.schemas import flavor_extra_specs as schemas
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import exception
from nova.objects import flavor_extra_specs

RULE = 'os_compute_api:os-flavor-extra-specs:%s'
PATH = '/flavors/{flavor_id}/os-extra_specs'


def _as_text(req, specs: dict) -> dict[str, str]:
    """The specs as stored: every value a string, checked at 2.86."""
    texts = {key: value if isinstance(value, str) else str(value)
             for key, value in specs.items()}
    for key, text in texts.items():
        if len(text) > 255:
            raise exception.ValidationError(
                detail='Invalid input for field/attribute %s. The value '
                       'is longer than 255 characters.' % key)
        if req.is_version('2.86'):
            extra_spec_rules.check(key, text)
    return texts


class FlavorExtraSpecsController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', PATH, self.index),
            Route('POST', PATH, self.create, body=schemas.create),
            Route('GET', PATH + '/{key}', self.show),
            Route('PUT', PATH + '/{key}', self.update, body=schemas.update),
            Route('DELETE', PATH + '/{key}', self.delete),
        ]

    def index(self, req, flavor_id):
        policy.authorize(req.context, RULE % 'index')
        flavor = flavors.lookup(req, flavor_id)
        return {'extra_specs': dict(flavor.extra_specs)}

    def show(self, req, flavor_id, key):
        policy.authorize(req.context, RULE % 'show')
        flavor = flavors.lookup(req, flavor_id)
        if key not in flavor.extra_specs:
            raise exception.FlavorExtraSpecsNotFound(flavor_id=flavor_id,
                                                     extra_specs_key=key)
        return {key: flavor.extra_specs[key]}

    def create(self, req, flavor_id):
        policy.authorize(req.context, RULE % 'create')
        specs = _as_text(req, req.validated_body()['extra_specs'])
        flavors.lookup(req, flavor_id)
        flavor_extra_specs.update(req.context, flavor_id, specs)
        return {'extra_specs': specs}

    def update(self, req, flavor_id, key):
        policy.authorize(req.context, RULE % 'update')
        body = req.validated_body()
        if key not in body:
            raise exception.ValidationError(
                detail='Request body and URI mismatch')
        specs = _as_text(req, body)
        flavors.lookup(req, flavor_id)
        flavor_extra_specs.update(req.context, flavor_id, specs)
        return specs

    def delete(self, req, flavor_id, key):
        policy.authorize(req.context, RULE % 'delete')
        flavors.lookup(req, flavor_id)
        flavor_extra_specs.delete(req.context, flavor_id, key)
        return None
