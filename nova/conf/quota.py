"""``[quota]``: the limits every project gets unless an administrator
set others (``os-quota-sets``) or changed the ``default`` quota class
(``os-quota-class-sets``).

The names and defaults are Nova's. -1 means unlimited.
"""

from oslo_config import cfg

quota_group = cfg.OptGroup(
    'quota', title='Quota options',
    help='The default limits of each project, by resource.')


def _limit(name: str, default: int, what: str) -> cfg.IntOpt:
    return cfg.IntOpt(name, default=default, min=-1,
                      help="""
The number of %s a project may have, unless an administrator set another
limit for it (``os-quota-sets``) or for the ``default`` quota class.

Possible values: -1 (unlimited) or 0 and more.
""" % what)


quota_opts = [
    _limit('instances', 10, 'servers'),
    _limit('cores', 20, 'vCPUs its servers have in all'),
    _limit('ram', 51200, 'MiB of memory its servers have in all'),
    _limit('metadata_items', 128, 'metadata items on each server'),
    _limit('injected_files', 5,
           'injected (personality) files on each server; shown by the '
           'API below microversion 2.57, never used'),
    _limit('injected_file_content_bytes', 10240,
           'bytes of each injected file; shown by the API below '
           'microversion 2.57, never used'),
    _limit('injected_file_path_bytes', 255,
           'bytes of the path of each injected file; shown by the API '
           'below microversion 2.57, never used'),
    _limit('key_pairs', 100, 'key pairs each of its users'),
    _limit('server_groups', 10, 'server groups'),
    _limit('server_group_members', 10, 'servers in each server group'),
    cfg.BoolOpt('recheck_quota', default=True, help="""
Whether a server create counts again once its row is written, and takes
the server back (403) when racing creates went over a limit together.

The first count happens before anything is written; two creates that
count at the same instant can both pass it. The recheck closes that race
at the price of one more count per create.
"""),
]


def register_opts(conf):
    conf.register_group(quota_group)
    conf.register_opts(quota_opts, group=quota_group)


def list_opts():
    return {quota_group: quota_opts}
