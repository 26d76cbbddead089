"""Rows the evacuation tests need: services, flavors, instances.

Written through the real objects into the test's own SQLite database.
"""

import datetime

from nova.model import vm_states
from nova import context as nova_context
from nova import objects
from nova.objects import base as obj_base

COMPUTE = 'nova-compute'


def admin_context():
    return nova_context.get_admin_context()


def make_service(ctx, host, up=True, forced_down=False, disabled=False,
                 identity=None):
    service = objects.Service(ctx, host=host, binary=COMPUTE,
                              topic='compute', forced_down=forced_down,
                              disabled=disabled,
                              storage_identity=identity).create()
    if up:
        service.heartbeat()
    else:
        set_down(service)
    return service


def set_down(service, seconds=3600):
    """A heartbeat long ago: the service counts as down."""
    service.last_seen_up = obj_base.utcnow() - datetime.timedelta(
        seconds=seconds)
    service.save()


def set_up(service):
    service.heartbeat()


def make_flavor(ctx, flavorid='1', memory_mb=512, vcpus=1, root_gb=1):
    try:
        return objects.Flavor.get_by_flavor_id(ctx, flavorid)
    except Exception:
        return objects.Flavor.create(ctx, flavorid, 'm%s' % flavorid,
                                     memory_mb, vcpus, root_gb)


def make_instance(ctx, host, vm_state=vm_states.ACTIVE, task_state=None,
                  flavor=None, image_ref=None, network_info=None, **kw):
    flavor = flavor or make_flavor(ctx)
    instance = objects.Instance(
        ctx, display_name=kw.pop('display_name', 'vm'), host=host,
        node=host, vm_state=vm_state, task_state=task_state,
        flavor=flavor, image_ref=image_ref, user_id=ctx.user_id,
        project_id=ctx.project_id, **kw)
    if network_info is not None:
        instance.network_info = network_info
    return instance.create()
