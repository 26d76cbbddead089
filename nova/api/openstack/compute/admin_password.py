"""The ``adminPass`` a server create answers when the request gave none.

The Compute API generates one (``[api] enable_instance_password``) for
its guest agent to set. There is no guest agent here: the value is only
returned, never stored nor sent to a compute host, so that clients which
read it find what they expect.
"""

import secrets
import string

LENGTH = 12

# Characters easily misread (0/O, 1/l/I) are left out, as the reference
# leaves them out: a person may have to type the password.
_GROUPS = (
    ''.join(c for c in string.digits if c not in '01'),
    ''.join(c for c in string.ascii_uppercase if c not in 'IO'),
    ''.join(c for c in string.ascii_lowercase if c not in 'lo'),
)
_ALPHABET = ''.join(_GROUPS)


def generate(length: int = LENGTH) -> str:
    """A random password with a digit, an upper and a lower case letter."""
    chosen = [secrets.choice(group) for group in _GROUPS]
    chosen += [secrets.choice(_ALPHABET)
               for _ in range(length - len(chosen))]
    # The one-of-each characters would otherwise always lead.
    secrets.SystemRandom().shuffle(chosen)
    return ''.join(chosen)
