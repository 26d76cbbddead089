"""Where images come from, as ``[image] backend`` says: the local image
store (``nova.image.store``, the embedded default) or Glance
(``nova.image.glance``).

Both answer ``get``, ``find``, ``list`` and ``copy_data``, which is all the
compute API and nova-compute's image cache ask. One ``GlanceImages`` per
process: its keystoneauth session keeps the service user's token.

Example::

    images = source.for_host(settings)    # a HostSettings
    images = source.for_host(HostSettings.from_conf(CONF))  # the API
"""

import threading

from nova.image import glance
from nova.image import store

_lock = threading.Lock()
_glance: glance.GlanceImages | None = None


def _glance_images(settings) -> glance.GlanceImages:
    """One per process (``GlanceSettings``: the options of ``[glance]``,
    the same for every host of a process)."""
    global _glance
    with _lock:
        if _glance is None:
            _glance = glance.GlanceImages.from_settings(settings)
        return _glance


def for_host(settings) -> store.ImageStore | glance.GlanceImages:
    """The images of one compute host (``HostSettings``), or of the
    API (the settings ``from_conf`` of the service's configuration)."""
    if settings.image_backend == 'glance':
        return _glance_images(settings.glance)
    return store.ImageStore.from_settings(settings)
