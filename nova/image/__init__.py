"""The local image store: image files and their metadata on this host.

``nova.image.store.ImageStore`` keeps the images, ``nova.image.meta.
ImageMeta`` describes one, ``nova.image.qemu_img`` inspects image files.
"""
