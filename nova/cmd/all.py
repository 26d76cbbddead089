"""nova-all: every service in one process, with several compute hosts.

    nova-all [--config-file F ...]

Runs the conductor, one compute service (and network agent) per name of
``[DEFAULT] compute_hosts`` (each with its ``[compute:NAME]`` group), and
the REST API when ``nova.api.wsgi`` is available, all over one
oslo.messaging transport (``inproc://`` by default).

With no configuration file at all it runs the embedded default: hosts
``compute1`` and ``compute2`` on libvirt's test driver (node files under
``state_path/hosts/<name>/``, written when missing), SQLite under
``state_path``, the schema synced at start, and ready to boot: flavor
``m1.tiny`` (64 MB, 1 vCPU, 1 GB), a tiny blank qcow2 image ``tiny`` in the
local image store and a network ``public`` on bridge ``br-public`` with
subnet 172.24.4.0/24 (ports get 172.24.4.2 and up; .1 is the gateway's),
which both hosts offer. Stops on SIGTERM or SIGINT.

Tests build the same thing in process with ``AllInOne``.
"""

import os
import sys
import tempfile

from oslo_log import log as logging

from nova.cmd import compute as compute_cmd
from nova.cmd import conductor as conductor_cmd
from nova.compute import api as compute_api_mod
from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import rpcapi as conductor_rpcapi
from nova import conf as nova_conf
from nova.conf import all_in_one
from nova.conf import CONF
from nova import context as nova_context
from nova.db import migration
from nova import exception
from nova.image import qemu_img
from nova.image import store as image_store
from nova.model import binaries
from nova.network import api as network_api_mod
from nova.network import events as network_events
from nova.objects import flavor_catalog
from nova import rpc
from nova.scheduler import target as target_mod
from nova import service

LOG = logging.getLogger(__name__)

BINARY = binaries.ALL
DEFAULT_TRANSPORT_URL = 'inproc://'
DEFAULT_FLAVOR = dict(flavorid='1', name='m1.tiny', memory_mb=64, vcpus=1,
                      root_gb=1)
DEFAULT_IMAGE_NAME = 'tiny'
DEFAULT_IMAGE_SIZE = 64 * 1024 * 1024
DEFAULT_NETWORK = ('public', 'br-public', '172.24.4.0/24')
# What libvirt's test driver needs to simulate an empty host.
NODE_XML = """<node>
  <cpu>
    <mhz>2000</mhz>
    <model>x86_64</model>
    <nodes>1</nodes>
    <sockets>1</sockets>
    <cores>%(cpus)d</cores>
    <threads>1</threads>
    <active>%(cpus)d</active>
  </cpu>
  <memory>%(memory_kib)d</memory>
</node>
"""
TEST_URI_PREFIX = 'test://'


def write_node_file(connection_uri, cpus=4, memory_mb=8192):
    """Write the node file of a ``test:///<path>`` URI when missing.

    Returns the path written, or None (not a test URI, or the file exists:
    it is the host's state and is never overwritten).
    """
    if not connection_uri.startswith(TEST_URI_PREFIX):
        return None
    path = connection_uri[len(TEST_URI_PREFIX):]
    if not os.path.isabs(path) or path == '/default':
        return None
    if os.path.exists(path):
        return None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(NODE_XML % {'cpus': cpus, 'memory_kib': memory_mb * 1024})
    LOG.info('Wrote libvirt test-driver node file %s', path)
    return path


def ensure_default_flavor(ctxt):
    try:
        return flavor_catalog.get_by_flavor_id(ctxt,
                                               DEFAULT_FLAVOR['flavorid'])
    except exception.FlavorNotFound:
        pass
    try:
        return flavor_catalog.create(ctxt, **DEFAULT_FLAVOR)
    except exception.FlavorExists:
        # Same name under another id (an operator's), or a race: keep it.
        return None


def ensure_default_image(store_path, name=DEFAULT_IMAGE_NAME):
    """A tiny blank qcow2 image called ``name`` in the image store."""
    store = image_store.ImageStore(store_path)
    for meta in store.list():
        if meta.name == name:
            return meta
    os.makedirs(store.path, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=store.path,
                                     prefix='.new-image-') as scratch:
        source = os.path.join(scratch, name + '.qcow2')
        qemu_img.create(source, 'qcow2', size=DEFAULT_IMAGE_SIZE)
        return store.add_from_file(source, name=name, disk_format='qcow2')


def prepare_embedded_default(conf, settings_list):
    """Everything the embedded default needs before services start:
    state directory, node files, schema, flavor, image, network."""
    os.makedirs(conf.state_path, exist_ok=True)
    for settings in settings_list:
        write_node_file(settings.connection_uri)
    migration.db_sync()
    ctxt = nova_context.get_admin_context()
    ensure_default_flavor(ctxt)
    if conf.image.backend == 'store':
        # With Glance, images are Glance's: uploaded there by whoever
        # runs the cloud.
        ensure_default_image(conf.image.store_path)
    name, bridge, cidr = DEFAULT_NETWORK
    # A 'public' made before networks had subnets gets this one now.
    network_api_mod.API().ensure_network(ctxt, name, bridge, cidr)


def api_available():
    """Whether the REST API's WSGI module is in the tree."""
    try:
        from nova.api import wsgi  # noqa: F401
    except ImportError:
        return False
    return True


class APIService:
    """The REST API as one more service of the process.

    INTEGRATION POINT: relies on ``nova.api.wsgi.make_app(compute_api)``
    and ``nova.api.wsgi.serve(app)`` (a started server with ``stop()``),
    as ``nova/cmd/api.py`` uses them.
    """

    def __init__(self, compute_api):
        self.compute_api = compute_api
        self.server = None

    def __repr__(self):
        return '<APIService>'

    def start(self):
        from nova.api import wsgi as api_wsgi
        self.server = api_wsgi.serve(api_wsgi.make_app(self.compute_api))

    def stop(self):
        if self.server is not None:
            self.server.stop()
            self.server = None


class APIWorkersService:
    """The REST API in ``count`` processes of their own
    (``[DEFAULT] osapi_compute_workers``), sending to this process's bus.

    With ``inproc://`` the workers reach it through a hub on a Unix
    socket in ``state_path`` (``nova.rpc_ipc``); with a broker they use the
    broker, as the configuration says.
    """

    def __init__(self, conf, count, argv):
        self.conf = conf
        self.count = count
        self.argv = list(argv)
        self.hub = None
        self.workers = None

    def __repr__(self):
        return '<APIWorkersService %d>' % self.count

    def start(self):
        from nova.api import workers as workers_mod
        env = {}
        if rpc.in_process():
            self.hub = rpc.serve_hub(
                os.path.join(self.conf.state_path, 'rpc.sock'))
            # oslo.config's environment source: above the files, so the
            # workers use the hub whatever the files say.
            env['OS_DEFAULT__TRANSPORT_URL'] = self.hub.url
        try:
            self.workers = workers_mod.APIWorkers(
                self.conf.api.listen, self.conf.api.listen_port,
                self.count, self.argv, env=env).start()
        except Exception:
            self._stop_hub()
            raise

    def stop(self):
        if self.workers is not None:
            self.workers.stop()
            self.workers = None
        self._stop_hub()

    def _stop_hub(self):
        if self.hub is not None:
            self.hub.stop()
            self.hub = None


def api_workers(conf):
    """How many processes of their own serve ``nova-all``'s API (0: its
    threads)."""
    count = conf.osapi_compute_workers
    return 1 if count is None else count


class AllInOne:
    """The services of ``nova-all``, built (not started).

    ``services`` lists them in start order: conductor, computes, API.
    Start them with ``service.run(all.services)`` or one by one.
    """

    def __init__(self, conf=CONF, settings_list=None, with_api=True,
                 compute_driver=None, drivers=None, **service_kwargs):
        self.settings = (list(settings_list) if settings_list is not None
                         else all_in_one.all_host_settings(conf))
        drivers = drivers or {}
        self.compute_rpcapi = compute_rpcapi.ComputeAPI()
        self.conductor_api = conductor_rpcapi.ConductorAPI()
        self.network_api = network_api_mod.API()
        self.compute_api = compute_api_mod.API(
            self.compute_rpcapi, self.conductor_api,
            network_api=self.network_api,
            host_chooser=target_mod.TargetChooser())
        sender = network_events.ComputeAPIEventSender(self.compute_api)
        self.computes = {
            s.host: compute_cmd.build_compute_service(
                s, compute_driver=compute_driver, sender=sender,
                driver=drivers.get(s.host), **service_kwargs)
            for s in self.settings}
        # Capacity comes from the compute_nodes rows every compute host
        # writes, as it does for a conductor in its own process.
        self.conductor = conductor_cmd.build_conductor_service(
            conf.host, **service_kwargs)
        self.api = (APIService(self.compute_api)
                    if with_api and api_available() else None)
        if with_api and self.api is None:
            LOG.warning('nova.api.wsgi is not available: running without '
                        'the REST API')
        self.services = [self.conductor] + list(self.computes.values())
        if self.api is not None:
            self.services.append(self.api)

    def start(self):
        started = []
        try:
            for svc in self.services:
                svc.start()
                started.append(svc)
        except Exception:
            for svc in reversed(started):
                svc.stop()
            raise

    def stop(self):
        for svc in reversed(self.services):
            svc.stop()


def main(argv=None):
    # Only the processes that serve the API register [keystone_authtoken]
    # (it imports keystonemiddleware); registered before the files are
    # parsed, as every other option is. make_app checks its values.
    nova_conf.register_api_opts()
    service.prepare_service(BINARY, argv,
                            default_transport_url=DEFAULT_TRANSPORT_URL)
    try:
        settings_list = all_in_one.all_host_settings(CONF)
        prepare_embedded_default(CONF, settings_list)
        workers = api_workers(CONF) if api_available() else 0
        deployment = AllInOne(CONF, settings_list, with_api=not workers)
        services = list(deployment.services)
        if workers:
            services.append(APIWorkersService(
                CONF, workers, sys.argv[1:] if argv is None else argv))
        service.run(services)
    finally:
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
