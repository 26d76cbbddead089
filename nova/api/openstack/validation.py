"""Request body and query validation against JSON schemas.

Schemas are plain dicts in ``compute/schemas/``; the building blocks they
share are below (``name``, ``uuid``, ``boolean`` ...). A body that does not
match is refused with 400 and a message naming the field, as the
Compute API does::

    Invalid input for field/attribute evacuate. Value: {...}.
    Additional properties are not allowed ('foo' was unexpected)
"""

import base64
import re

import jsonschema
from jsonschema import exceptions as js_exc
from oslo_utils import strutils

from nova.api.openstack import common
from nova import exception

# Strings that mean true or false where the reference accepts them
# ("onSharedStorage": "True" is what old clients send).
_BOOL_STRINGS = ('True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES',
                 'Yes', 'yes', 'False', 'FALSE', 'false', '0', 'OFF', 'Off',
                 'off', 'NO', 'No', 'no')

boolean = {'type': ['boolean', 'string'],
           'enum': [True, False, *_BOOL_STRINGS]}

strict_boolean = {'type': 'boolean'}

uuid = {'type': 'string', 'format': 'uuid'}

# A display name: printable, no leading or trailing blank, and nothing that
# could make it look like a path: no '/' or '\\', not only dots, no
# percent-encoded dot, slash or backslash. Names never become paths here;
# refusing these keeps logs, URLs and shell use of the CLI unambiguous.
name = {
    'type': 'string', 'minLength': 1, 'maxLength': 255,
    'format': 'display-name',
}

hostname = {
    'type': 'string', 'minLength': 1, 'maxLength': 255,
    'pattern': r'^[a-zA-Z0-9_][a-zA-Z0-9_.:-]*$',
}

binary_name = {
    'type': 'string', 'minLength': 1, 'maxLength': 255,
    'pattern': r'^nova-[a-z]+$',
}

description = {'type': ['string', 'null'], 'maxLength': 255,
               'format': 'printable-or-empty'}

admin_password = {'type': 'string', 'minLength': 0, 'maxLength': 255}

FORMATS = jsonschema.FormatChecker()
_ENCODED_PATH_CHARS = re.compile(r'%(2e|2f|5c)', re.IGNORECASE)


def _is_printable(text: str) -> bool:
    return all(ch.isprintable() for ch in text)


@FORMATS.checks('uuid')
def _check_uuid(value):
    if not isinstance(value, str):
        return True
    return common.uuid_like(value)


@FORMATS.checks('display-name', raises=ValueError)
def _check_display_name(value):
    if not isinstance(value, str):
        return True
    if value.strip() != value:
        raise ValueError('leading or trailing whitespace')
    if not _is_printable(value):
        raise ValueError('non-printable characters')
    if '/' in value or '\\' in value:
        raise ValueError("it must not contain '/' or '\\'")
    if value.strip('.') == '' or _ENCODED_PATH_CHARS.search(value):
        raise ValueError('it must not look like a path')
    return True


@FORMATS.checks('base64', raises=ValueError)
def _check_base64(value):
    # Strictly: a client's mistake is answered, not stored.
    if isinstance(value, str):
        base64.b64decode(value, validate=True)
    return True


@FORMATS.checks('printable-or-empty')
def _check_printable(value):
    return not isinstance(value, str) or _is_printable(value)


def to_bool(value) -> bool:
    """A validated ``boolean`` value as a Python bool."""
    if isinstance(value, bool):
        return value
    return strutils.bool_from_string(value, strict=True)


def _path_of(error) -> str:
    path = '/'.join(str(p) for p in error.path)
    return path or 'request body'


def _message_of(error) -> str:
    if error.validator == 'format':
        return "%r is not a valid %s%s" % (
            error.instance, error.validator_value,
            ' (%s)' % error.cause if error.cause else '')
    if error.validator == 'enum' and True in error.validator_value:
        return '%r is not a boolean' % (error.instance,)
    if error.validator == 'enum':
        return '%r is not one of %s' % (
            error.instance, sorted(map(str, error.validator_value)))
    return error.message


def validate(schema: dict, value) -> None:
    """Raise ValidationError (400) unless ``value`` matches ``schema``."""
    validator = jsonschema.Draft7Validator(schema, format_checker=FORMATS)
    error = js_exc.best_match(validator.iter_errors(value))
    if error is None:
        return
    if error.validator in ('required', 'additionalProperties',
                           'minProperties', 'maxProperties'):
        detail = '%s' % error.message
        if error.path:
            detail = 'Invalid input for field/attribute %s. %s' % (
                _path_of(error), detail)
    else:
        shown = repr(error.instance)
        if len(shown) > 100:
            shown = shown[:100] + '...'
        message = _message_of(error)
        if len(message) > 150:
            message = message[:150] + '...'
        detail = 'Invalid input for field/attribute %s. Value: %s. %s' % (
            _path_of(error), shown, message)
    raise exception.ValidationError(detail=detail)
