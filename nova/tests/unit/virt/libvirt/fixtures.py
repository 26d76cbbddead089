"""Simulated libvirt hosts for tests: libvirt's test driver, one node file
per host, each with its own ``LibvirtDriver`` and ``instances_path``.

Every new connection to a ``test:///<file>`` URI starts again from the
file, so one simulated host = one node file + the one long-lived
connection its driver holds. Several hosts live in one process.

Example (in a ``nova.tests.base.TestCase``)::

    images = fixtures.make_image_store(self.tmp)
    cirros = fixtures.add_disk_image(images, self.tmp)
    a = fixtures.make_host(self.tmp, 'compute1',
                           image_store_path=images.path)
    b = fixtures.make_host(self.tmp, 'compute2',
                           instances_path=a.settings.instances_path,
                           image_store_path=images.path)   # shared storage
    self.addCleanup(a.close)
    self.addCleanup(b.close)
    a.driver.spawn(ctx, instance, cirros, [], None, network_info=...)
    a.domain_uuids()          # what libvirt reports on compute1
"""

import dataclasses
import os

from oslo_concurrency import processutils

from nova.model import power_state
from nova.conf import host_settings
from nova.image import store as image_store
from nova.model import network as network_model
from nova.tests.unit.virt import contract
from nova.virt.libvirt import driver as libvirt_driver

DEFAULT_BRIDGE = 'br-int'

NODE_XML = """<node>
  <cpu>
    <mhz>2000</mhz>
    <model>x86_64</model>
    <nodes>1</nodes>
    <sockets>1</sockets>
    <cores>{cpus}</cores>
    <threads>1</threads>
    <active>{cpus}</active>
  </cpu>
  <memory>{memory_kib}</memory>
</node>
"""


def write_node_xml(path: str, cpus: int = 4, memory_mb: int = 8192) -> str:
    """Write an empty test-driver node file; return its ``test://`` URI."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(NODE_XML.format(cpus=cpus, memory_kib=memory_mb * 1024))
    return 'test://' + path


def make_image_store(base_dir: str) -> image_store.ImageStore:
    """An empty image store in ``<base_dir>/images``."""
    return image_store.ImageStore(os.path.join(base_dir, 'images'))


def _blank_image(path: str, fmt: str, size_mb: int) -> str:
    processutils.execute('qemu-img', 'create', '-f', fmt, path,
                         '%dM' % size_mb)
    return path


def add_disk_image(store, scratch_dir: str, name: str = 'cirros',
                   disk_format: str = 'qcow2', size_mb: int = 16,
                   image_id: str | None = None):
    """Add a blank bootable-format image (qcow2 or raw); its ImageMeta."""
    source = os.path.join(scratch_dir, '%s.source.%s' % (name, disk_format))
    _blank_image(source, disk_format, size_mb)
    try:
        return store.add_from_file(source, name=name,
                                   disk_format=disk_format,
                                   image_id=image_id)
    finally:
        os.unlink(source)


def add_uec_image(store, scratch_dir: str, name: str = 'cirros-uec'):
    """A cirros-*-uec style image: a raw root disk that boots with its own
    kernel and ramdisk images (small files standing in for them)."""
    metas = {}
    for part, fmt, content in (('kernel', 'aki', b'fake kernel\n'),
                               ('ramdisk', 'ari', b'fake ramdisk\n')):
        source = os.path.join(scratch_dir, '%s-%s.source' % (name, part))
        with open(source, 'wb') as f:
            f.write(content)
        metas[part] = store.add_from_file(source, name='%s-%s' % (name, part),
                                          disk_format=fmt)
        os.unlink(source)
    source = os.path.join(scratch_dir, '%s.source.raw' % name)
    _blank_image(source, 'raw', 1)
    try:
        return store.add_from_file(source, name=name, disk_format='raw',
                                   kernel_id=metas['kernel'].id,
                                   ramdisk_id=metas['ramdisk'].id)
    finally:
        os.unlink(source)


@dataclasses.dataclass
class SimulatedHost:
    """One simulated compute host."""
    name: str
    node_path: str
    settings: host_settings.HostSettings
    virtapi: object
    driver: libvirt_driver.LibvirtDriver

    def close(self) -> None:
        self.driver.cleanup_host(self.name)

    def domain_uuids(self) -> set[str]:
        return set(self.driver.list_instance_uuids())

    def power_state(self, instance_uuid: str) -> int | None:
        guest = self.driver.host.find_guest(instance_uuid)
        return None if guest is None else guest.get_power_state()

    def is_running(self, instance_uuid: str) -> bool:
        return self.power_state(instance_uuid) == power_state.RUNNING

    def plugged_vifs(self) -> frozenset:
        """Port ids plugged on this host (noop VIF driver's account)."""
        return frozenset(self.driver.plugged_vif_ids())

    def remove_bridge(self, bridge: str = DEFAULT_BRIDGE) -> None:
        """The host loses a bridge: plugging ports on it fails for real."""
        self.driver.vif_driver.bridges.discard(bridge)

    def add_bridge(self, bridge: str = DEFAULT_BRIDGE) -> None:
        self.driver.vif_driver.bridges.add(bridge)

    def instance_dir(self, instance_uuid: str) -> str:
        return os.path.join(self.settings.instances_path, instance_uuid)


def make_host(base_dir: str, name: str = 'compute1', *,
              instances_path: str | None = None,
              image_store_path: str | None = None,
              bridges=(DEFAULT_BRIDGE,), virtapi=None, connect: bool = True,
              **settings_overrides) -> SimulatedHost:
    """Build one simulated host under ``<base_dir>/<name>/``.

    ``instances_path`` defaults to ``<base_dir>/<name>/instances`` (give
    another host's to simulate shared storage); ``image_store_path`` to
    ``<base_dir>/images``; ``virtapi`` to a ``NetworkBackendVirtAPI`` that
    answers every plug with a ``network-vif-plugged`` event. The driver is
    connected (``init_host``) unless ``connect`` is false. Other
    ``HostSettings`` fields can be overridden by keyword; the defaults are
    virt_type 'qemu', vif_driver 'auto' (noop on test://),
    vif_plugging_timeout 5, shutdown_timeout 1, wait_running_timeout 5.
    Call ``close()`` (``addCleanup``) when done.
    """
    host_dir = os.path.join(base_dir, name)
    node_path = os.path.join(host_dir, 'node.xml')
    uri = write_node_xml(node_path)
    values = dict(
        host=name,
        instances_path=instances_path or os.path.join(host_dir, 'instances'),
        connection_uri=uri, virt_type='qemu', vif_driver='auto',
        bridges=tuple(bridges), vif_plugging_timeout=5,
        vif_plugging_is_fatal=True, shutdown_timeout=1,
        wait_running_timeout=5,
        image_store_path=image_store_path or os.path.join(base_dir,
                                                          'images'))
    values.update(settings_overrides)
    settings = host_settings.HostSettings(**values)
    virtapi = virtapi if virtapi is not None else (
        contract.NetworkBackendVirtAPI())
    driver = libvirt_driver.LibvirtDriver(virtapi, settings)
    if connect:
        driver.init_host(name)
        # What a compute service's first start does on an empty
        # instances_path (ComputeManager.init_host).
        driver.init_storage_identity()
    return SimulatedHost(name=name, node_path=node_path, settings=settings,
                         virtapi=virtapi, driver=driver)


def make_network_info(bridge: str = DEFAULT_BRIDGE, active: bool = True,
                      count: int = 1, port_ids=None):
    """``count`` VIFs on ``bridge``; inactive ones make the driver wait for
    their network-vif-plugged events."""
    network = network_model.Network(id='net-%s' % bridge, label=bridge,
                                    bridge=bridge)
    port_ids = port_ids or ['%08d-0000-4000-8000-%012d' % (i + 1, i + 1)
                            for i in range(count)]
    return network_model.NetworkInfo(
        network_model.VIF(id=port_id, address='fa:16:3e:00:00:%02x' % (i + 1),
                          network=network, active=active)
        for i, port_id in enumerate(port_ids))
