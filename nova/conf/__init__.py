"""Every configuration option of the project, registered on ``cfg.CONF``.

Options live in one module per subject; each module has ``register_opts``
and ``list_opts``. The global ``CONF`` is used (not a private ConfigOpts)
because oslo.messaging registers some of its options only there.

Importing this package registers the options every process reads. Those
only the REST API reads (``[keystone_authtoken]``, whose registration
imports keystonemiddleware) are registered by ``register_api_opts``, which
nova-api and nova-all call before they parse their configuration.
keystoneauth's options of ``[glance]``, ``[network]`` and ``[masakari]``
(``auth_type``, ``auth_url``, ``service_type``, ...), whose registration
imports keystoneauth1 (about 6 MiB and 160 modules with requests), are
registered by the code that reads them, just before (each module's
``register_keystoneauth_opts``), in the processes that use those
services: a value read later than the parse is read alike, from the
parsed files.
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
# Whose keystoneauth options are registered where they are read
# (register_keystoneauth_opts).
_KEYSTONEAUTH_MODULES = (glance, masakari, network)

for _module in _MODULES:
    _module.register_opts(CONF)


def register_api_opts(conf=CONF):
    """Register on ``conf`` the options only the REST API reads; calling
    it again is harmless (oslo.config ignores an option registered twice
    alike)."""
    for module in _API_MODULES:
        module.register_opts(conf)


def register_keystoneauth_opts(conf=CONF):
    """Register on ``conf`` keystoneauth's options of every section that
    has them (``[glance]``, ``[masakari]``, ``[network]``), as the code
    that reads each does first; for tests and tools that read any option
    of a parsed configuration. Calling it again is harmless."""
    for module in _KEYSTONEAUTH_MODULES:
        module.register_keystoneauth_opts(conf)
