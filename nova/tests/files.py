"""What tests observe of the file system."""

import hashlib
import os
import time


def sha256_tree(path):
    """{path relative to ``path``: sha256} of every file under ``path``.

    Tests compare two of these to prove that an operation left an instance
    directory byte for byte as it was.
    """
    digest = {}
    for root, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            with open(full, 'rb') as f:
                digest[os.path.relpath(full, path)] = hashlib.sha256(
                    f.read()).hexdigest()
    return digest


# Older than the test process, and than any age a cleanup waits for
# before it takes a temporary file for a dead process's.
LONG_AGO = 3 * 24 * 3600


def age(path, seconds=LONG_AGO):
    """Make ``path`` itself (never a symlink's target) look last
    modified ``seconds`` ago."""
    when = time.time() - seconds
    os.utime(path, (when, when), follow_symlinks=False)


def write(path, content='x'):
    """A file at ``path`` (its directory made if missing)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(content)
    return path
