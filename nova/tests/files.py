"""What tests observe of the file system."""

import hashlib
import os


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
