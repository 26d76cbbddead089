"""Every configuration option of the project, registered on ``cfg.CONF``.

Options live in one module per subject; each module has ``register_opts``
and ``list_opts``. The global ``CONF`` is used (not a private ConfigOpts)
because oslo.messaging registers some of its options only there.

Importing this package registers the options every process reads. Those
only the REST API reads (``[keystone_authtoken]``, whose registration
imports keystonemiddleware) are registered by ``register_api_opts``, which
nova-api and nova-all call before they parse their configuration.
"""

from oslo_config import cfg

from nova.conf import all_in_one
from nova.conf import api
from nova.conf import availability_zone
from nova.conf import base
from nova.conf import compute
from nova.conf import conductor
from nova.conf import database
from nova.conf import glance
from nova.conf import ha
from nova.conf import image
from nova.conf import keystone
from nova.conf import libvirt
from nova.conf import masakari
from nova.conf import network
from nova.conf import quota
from nova.conf import reaper
from nova.conf import service
from nova.conf import storage

CONF = cfg.CONF

# Registered in every process, on import.
_MODULES = (all_in_one, api, availability_zone, base, compute, conductor,
            database, glance, ha, image, libvirt, masakari, network, quota,
            reaper, service, storage)
# Registered only where the REST API is served (register_api_opts).
_API_MODULES = (keystone,)

for _module in _MODULES:
    _module.register_opts(CONF)


def register_api_opts(conf=CONF):
    """Register on ``conf`` the options only the REST API reads; calling
    it again is harmless (oslo.config ignores an option registered twice
    alike)."""
    for module in _API_MODULES:
        module.register_opts(conf)
