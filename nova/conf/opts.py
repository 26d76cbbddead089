"""Entry point for oslo-config-generator (``nova.conf`` namespace)."""

import collections

from nova import conf as nova_conf


def list_opts():
    grouped = collections.defaultdict(list)
    # The API's options too: the sample documents every process's.
    for module in nova_conf._MODULES + nova_conf._API_MODULES:
        for group, opts in module.list_opts().items():
            grouped[group].extend(opts)
    return [(group, opts) for group, opts in grouped.items()]
