"""Options of the image backend: the local image store or Glance."""

from oslo_config import cfg

image_group = cfg.OptGroup('image', title='Local image store options')

BACKENDS = ('store', 'glance')

image_opts = [
    cfg.StrOpt('backend',
               default='store',
               choices=[
                   ('store', 'the local image store at store_path (the '
                             'embedded default)'),
                   ('glance', 'Glance, the Image service, as [glance] '
                              'says'),
               ],
               help="""
Where images come from: for the compute API (``/v2.1/images``, the image
of a new server) and for nova-compute's image fetches. With ``glance``,
the disk format and checksum of an image are Glance's record, and the
``/image`` view of the local store is not served.

Related options: ``store_path``; the ``[glance]`` section.
"""),
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
