"""The hostname a server gets when its create names none.

The reference derives it from the display name, so that clients which
read ``OS-EXT-SRV-ATTR:hostname`` see the same value here::

    from_display_name('Web Server_1.example', uuid)   # 'web-server-1-example'
    from_display_name('日本', uuid)                     # 'Server-<uuid>'

Blanks, underscores and dots become dashes (a dot would make it look like
a domain name, which the reference stopped deriving with its 2.94 release),
any other character that is not a letter, digit or dash is dropped, the
result is lower case, without leading or trailing dashes, and at most 63
characters (one DNS label). A name that leaves nothing falls back to
``Server-<uuid>``, capital S as the reference writes it.
"""

import re

MAX_LENGTH = 63

_TO_DASH = re.compile(r'[ _.]')
_DROPPED = re.compile(r'[^\w-]+')


def from_display_name(display_name: str | None, uuid: str | None) -> str:
    """The hostname derived from ``display_name`` (see the module)."""
    name = display_name or ''
    # Characters beyond Latin-1 are dropped first, as the reference does:
    # a hostname is read by DNS and cloud-init, which expect ASCII-ish
    # labels.
    name = name.encode('latin-1', 'ignore').decode('latin-1')
    name = name[:MAX_LENGTH]
    name = _DROPPED.sub('', _TO_DASH.sub('-', name)).lower().strip('-')
    if not name:
        return ('Server-%s' % uuid)[:MAX_LENGTH]
    return name
