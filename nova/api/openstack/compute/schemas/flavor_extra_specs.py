"""Request bodies of ``os-extra_specs``: ``POST`` takes ``{"extra_specs":
{key: value, ...}}``, ``PUT .../{key}`` exactly ``{key: value}``.

Keys are letters, digits and ``-_:. `` (at most 255); values strings or
numbers (stored as their text), at most 255 characters.
"""

KEY_PATTERN = r'^[a-zA-Z0-9-_:. ]{1,255}$'

_specs = {
    'type': 'object',
    'patternProperties': {
        KEY_PATTERN: {'type': ['string', 'number'], 'maxLength': 255},
    },
    'additionalProperties': False,
}

create = {
    'type': 'object',
    'properties': {'extra_specs': _specs},
    'required': ['extra_specs'],
    'additionalProperties': False,
}

update = dict(_specs, minProperties=1, maxProperties=1)
