"""How an aggregate looks in the API: ``uuid`` from 2.41.

Create answers without ``hosts`` and ``metadata`` (the reference's
shape); every other answer has them. ``deleted`` is always false: a
deleted aggregate is gone.
"""

from nova.api.openstack import common


def created(req, aggregate) -> dict:
    view = {
        'id': aggregate.id,
        'name': aggregate.name,
        'availability_zone': aggregate.availability_zone,
        'created_at': common.dbtime(aggregate.created_at),
        'updated_at': common.dbtime(aggregate.updated_at),
        'deleted': False,
        'deleted_at': None,
    }
    if req.is_version('2.41'):
        view['uuid'] = aggregate.uuid
    return view


def shown(req, aggregate) -> dict:
    view = created(req, aggregate)
    view['hosts'] = list(aggregate.hosts)
    view['metadata'] = dict(aggregate.metadata)
    return view
