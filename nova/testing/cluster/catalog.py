"""Prepare a fresh cluster database: schema, a flavor, a network, an image.

Run once by ``Cluster.up`` as its own process, with the controller's
nova.conf, so the cluster's owner (possibly a test process) never points
its own database layer at the cluster::

    python -m nova.testing.cluster.catalog --config-file controller.conf \\
        --flavor 1:m1.nano:64 --network public:br-nova:10.10.0.0/24 \\
        --image bootsector:/path/boot.qcow2

Prints one JSON line: ``{"flavor_id": ..., "network_id": ...,
"image_id": ...}``. Idempotent: what exists already is kept.
"""

import argparse
import json
import sys


def _parser():
    parser = argparse.ArgumentParser(prog='nova.testing.cluster.catalog')
    parser.add_argument('--config-file', required=True)
    parser.add_argument('--flavor', required=True,
                        help='FLAVORID:NAME:MEMORY_MB')
    parser.add_argument('--network', required=True,
                        help='NAME:BRIDGE[:CIDR]')
    parser.add_argument('--image', required=True, help='NAME:QCOW2_PATH')
    return parser


def prepare(flavor, network, image):
    from nova.conf import CONF
    from nova import context as nova_context
    from nova.db import migration
    from nova import exception
    from nova.image import store as image_store
    from nova.network import api as network_api
    from nova.objects import flavor_catalog

    migration.db_sync()
    ctxt = nova_context.get_admin_context()
    flavorid, name, memory_mb = flavor.split(':')
    try:
        flavor_catalog.get_by_flavor_id(ctxt, flavorid)
    except exception.FlavorNotFound:
        # root_gb 0: the disk keeps the image's size (1 MiB).
        flavor_catalog.create(ctxt, flavorid=flavorid, name=name,
                              memory_mb=int(memory_mb), vcpus=1, root_gb=0)
    net_name, bridge, cidr = (network.split(':') + [None])[:3]
    net = network_api.API().ensure_network(ctxt, net_name, bridge, cidr)
    image_name, path = image.split(':', 1)
    store = image_store.ImageStore(CONF.image.store_path)
    found = [m for m in store.list() if m.name == image_name]
    meta = found[0] if found else store.add_from_file(
        path, name=image_name, disk_format='qcow2')
    return {'flavor_id': flavorid, 'network_id': net.uuid,
            'image_id': meta.id}


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    from nova.conf import CONF
    CONF(['--config-file', args.config_file], project='nova',
         default_config_files=[])
    print(json.dumps(prepare(args.flavor, args.network, args.image)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
