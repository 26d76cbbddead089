"""The objects every layer above the database uses.

``from nova import objects`` then ``objects.Instance``, ``objects.Flavor``,
``objects.Migration`` and so on. See ``doc/source/contributor/
internals.rst`` ("Persistence").

Those of the control plane's tables (``nova.db.control_models``) are
imported by module where they are used (``from nova.objects import
aggregate``, ``keypair``, ``host_evacuation``, ``ha_alert``,
``ha_recovery``, ``instance_group``, ``instance_metadata``, like
``quota`` and ``host_lease``; the flavors' queries are
``flavor_catalog``):
nova-compute, which imports this package, uses none of them.
"""

from nova.objects.action import InstanceAction  # noqa: F401
from nova.objects.action import InstanceActionEvent  # noqa: F401
from nova.objects.attempt import InstanceAttempt  # noqa: F401
from nova.objects.compute_node import ComputeNode  # noqa: F401
from nova.objects.fault import InstanceFault  # noqa: F401
from nova.objects.flavor import Flavor  # noqa: F401
from nova.objects.ha_instance_failure import HaInstanceFailure  # noqa: F401
from nova.objects.instance import Instance  # noqa: F401
from nova.objects.migration import Migration  # noqa: F401
from nova.objects.network import Network  # noqa: F401
from nova.objects.network import Port  # noqa: F401
from nova.objects.service import Service  # noqa: F401
