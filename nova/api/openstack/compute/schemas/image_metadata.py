"""Request bodies of ``/images/{image_id}/metadata`` (the image proxy
API): ``{"metadata": {key: value, ...}}`` for the whole set, ``{"meta":
{key: value}}`` (exactly one) for one item. Keys and values are strings
of 1 to 255 characters (values may be empty); Glance keeps them as the
image's properties.
"""

_KEY = '^[a-zA-Z0-9-_:. ]{1,255}$'
_VALUE = {'type': 'string', 'maxLength': 255}


def _items(min_properties: int = 0, max_properties: int | None = None):
    schema = {'type': 'object', 'patternProperties': {_KEY: _VALUE},
              'additionalProperties': False,
              'minProperties': min_properties}
    if max_properties is not None:
        schema['maxProperties'] = max_properties
    return schema


def _wrapped(name: str, items: dict) -> dict:
    return {'type': 'object', 'properties': {name: items},
            'required': [name], 'additionalProperties': False}


metadata = _wrapped('metadata', _items())
meta_item = _wrapped('meta', _items(1, 1))
