"""Options of the local image store."""

from oslo_config import cfg

image_group = cfg.OptGroup('image', title='Local image store options')

image_opts = [
    cfg.StrOpt('store_path',
               default='$state_path/images',
               help="""
Directory of the local image store: one data file and one metadata file
(``<id>.json``: name, disk format, optional kernel and ramdisk image ids)
per image.
"""),
]


def register_opts(conf):
    conf.register_group(image_group)
    conf.register_opts(image_opts, group=image_group)


def list_opts():
    return {image_group: image_opts}
