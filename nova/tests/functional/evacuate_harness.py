"""Several compute hosts, a conductor and the compute API in one process.

Each compute host is a real ``nova.service.Service`` running the real
``ComputeManager`` and ``LibvirtDriver`` on its own libvirt test-driver
node file and ``instances_path`` (``nova/tests/fixtures/libvirt_host.py``),
or on one shared directory for shared storage. RPC is
oslo.messaging's ``inproc://`` transport, the database a real SQLite file.
The network backend answers every plug with a ``network-vif-plugged``
event (the fixture's ``NetworkBackendVirtAPI``), or stays silent when told.

A target can be held right after it claimed an evacuation, before it
takes the task to ``rebuild_spawning`` and spawns (``hold_after_claim``):
its network backend (the built-in one, in this database) waits on a
``threading.Event`` before it binds the instance's ports there, the one
call of the workflow between the two; a slow Neutron does the same.

Any operation can be held still at a named crash point
(``stall_at``, a ``Stall``), as a hung NFS write or a slow image lookup
would hold it: the first thread to reach the point waits there until the
test releases it, and the points that thread reaches afterwards are
recorded, so a test can tell what a stale attempt did once it woke.

A host "dies" with ``kill``: its compute service stops and its row's last
heartbeat is moved into the past, so it counts as down. What its
hypervisor held is kept (domain XML and power state), and ``restart``
starts a new driver and manager on the same node file and instances_path
with those domains written into the node file, running (only the compute
service died) or shut off (the whole host rebooted).
"""

import dataclasses
import os
import threading
import time
import xml.etree.ElementTree as ET

from nova.compute import api as compute_api
from nova.compute import manager as compute_manager
from nova.compute import rpcapi as compute_rpcapi
from nova.conductor import manager as conductor_manager
from nova.conductor import rpcapi as conductor_rpcapi
from nova import context as nova_context
from nova import crashpoint
from nova.model import power_state
from nova.network import api as network_api_mod
from nova import objects
from nova.objects import migration as migration_obj
from nova import rpc
from nova.scheduler import target as target_mod
from nova import service as nova_service
from nova.tests import base
from nova.tests.fixtures import database as dbf
from nova.tests.fixtures import libvirt_host as fixtures

BRIDGE = fixtures.DEFAULT_BRIDGE
TEST_NS = 'http://libvirt.org/schemas/domain/test/1.0'
# What the test driver's <test:runstate> takes (virDomainState).
_SHUTOFF = 5
_RUNNING = 1
WAIT_SECONDS = 60


@dataclasses.dataclass
class ComputeHost:
    name: str
    sim: fixtures.SimulatedHost
    manager: compute_manager.ComputeManager
    service: nova_service.Service
    # Domains the hypervisor held when the compute service died:
    # [(xml, power_state)].
    left_behind: list = dataclasses.field(default_factory=list)

    @property
    def driver(self):
        return self.sim.driver

    def instance_dir(self, instance):
        return self.sim.instance_dir(instance.uuid)

    def has_domain(self, instance):
        return instance.uuid in self.sim.domain_uuids()

    def running(self, instance):
        return self.sim.is_running(instance.uuid)


class HeldBinding:
    """One hold of a host's port binding: ``reached`` once the host waits,
    then it goes on when ``release()`` is called."""

    def __init__(self):
        self.reached = threading.Event()
        self._released = threading.Event()

    def release(self):
        self._released.set()

    def wait_released(self):
        if not self._released.wait(WAIT_SECONDS):
            raise AssertionError('the test never released the hold')


def one_test_per_point(points, method, prefix='test_', doc='%s'):
    """A class decorator: one test method per crash point,
    ``<prefix><point with _>``, calling ``self.<method>(point)``."""
    def decorate(cls):
        for point in points:
            def test(self, point=point):
                getattr(self, method)(point)
            test.__name__ = prefix + point.replace('.', '_')
            test.__doc__ = doc % point
            setattr(cls, test.__name__, test)
        return cls
    return decorate


class Stall:
    """The first thread to reach crash point ``point`` waits there until
    ``release()``; ``after`` lists the points it reaches once released
    (until ``stop()``)."""

    def __init__(self, point):
        self.point = point
        self.reached = threading.Event()
        self._released = threading.Event()
        self._thread = None
        self._recording = True
        self.after = []

    def __call__(self, name):
        me = threading.get_ident()
        if self._thread is None and name == self.point:
            self._thread = me
            self.reached.set()
            if not self._released.wait(WAIT_SECONDS):
                raise AssertionError('the test never released %s'
                                     % self.point)
        elif self._thread == me and self._recording:
            self.after.append(name)

    def release(self):
        self._released.set()

    def stop(self):
        """Stop recording (the held operation has ended)."""
        self._recording = False


class HoldingNetworkAPI(network_api_mod.API):
    """The built-in network API of host ``host``, whose next binding of
    ports to ``host`` waits for the test (``HeldBinding``); any other
    call, and binding them back to another host, goes on at once."""

    def __init__(self, host, hold):
        super().__init__()
        self.host = host
        self.hold = hold

    def bind(self, context, instance, host, ports=None):
        hold = self.hold
        if hold is not None and host == self.host:
            self.hold = None            # the next binding here only
            hold.reached.set()
            hold.wait_released()
        return super().bind(context, instance, host, ports=ports)


def node_with_domains(node_path, domains, running):
    """Rewrite a node file so it holds ``domains`` [(xml, state)]."""
    ET.register_namespace('test', TEST_NS)
    tree = ET.parse(node_path)
    node = tree.getroot()
    for xml, state in domains:
        domain = ET.fromstring(xml)
        domain.attrib.pop('id', None)
        runstate = ET.SubElement(domain, '{%s}runstate' % TEST_NS)
        alive = running and state == power_state.RUNNING
        runstate.text = str(_RUNNING if alive else _SHUTOFF)
        node.append(domain)
    tree.write(node_path)


class EvacuateTestCase(base.TestCase):
    """Hosts ``a`` (the one that dies), ``b`` and ``c``."""

    HOSTS = ('a', 'b', 'c')
    SHARED = ()          # hosts that mount a's instances_path
    BRIDGES = {}         # host -> its bridges, when not just BRIDGE
    HOST_SETTINGS = {}   # host -> HostSettings fields to override

    def setUp(self):
        super().setUp()
        self.use_database()
        self.flags(host='conductor')
        rpc.cleanup()
        rpc.init(url='inproc://')
        self.addCleanup(rpc.cleanup)
        self.ctx = nova_context.get_admin_context()
        self.images = fixtures.make_image_store(self.tmp)
        self.image = fixtures.add_disk_image(self.images, self.tmp,
                                             size_mb=1)
        self.flavor = dbf.make_flavor(self.ctx, '1', memory_mb=64, vcpus=1,
                                      root_gb=1)
        self.hosts = {}
        for name in self.HOSTS:
            self.start_compute(name)
        # Capacity from the compute_nodes rows the hosts wrote at
        # init_host, as a conductor in its own process sees it.
        self.chooser = target_mod.TargetChooser()
        self.conductor = conductor_manager.ConductorManager(
            compute_rpcapi.ComputeAPI(), chooser=self.chooser)
        self.conductor_service = self._start_service(
            'conductor', 'nova-conductor', 'conductor', self.conductor)
        self.api = compute_api.API(
            compute_rpcapi.ComputeAPI(), conductor_rpcapi.ConductorAPI(),
            image_api=self.images, host_chooser=self.chooser)
        self._ports = 0

    # -- services ------------------------------------------------------------

    def _start_service(self, host, binary, topic, manager):
        service = nova_service.Service(host, binary, topic, manager,
                                       periodic_enable=False,
                                       report_interval=3600)
        service.start()
        self.addCleanup(service.stop)
        return service

    def instances_path(self, name):
        if name in self.SHARED:
            return os.path.join(self.tmp, 'shared-instances')
        return os.path.join(self.tmp, name, 'instances')

    def start_compute(self, name, domains=(), running=True, vifs=(),
                      **overrides):
        settings = dict(self.HOST_SETTINGS.get(name, {}))
        settings.update(overrides)
        sim = fixtures.make_host(
            self.tmp, name, instances_path=self.instances_path(name),
            image_store_path=self.images.path, connect=False,
            bridges=self.BRIDGES.get(name, (BRIDGE,)),
            vif_plugging_timeout=settings.pop('vif_plugging_timeout', 5),
            **settings)
        if domains:
            node_with_domains(sim.node_path, domains, running)
        # Taps outlive a dead nova-compute: (instance uuid, port id) the
        # noop VIF driver's account of them starts with.
        sim.driver.vif_driver.restore(vifs)
        manager = compute_manager.ComputeManager(
            sim.settings, driver=sim.driver,
            conductor_api=conductor_rpcapi.ConductorAPI())
        service = self._start_service(name, 'nova-compute', 'compute',
                                      manager)
        host = ComputeHost(name, sim, manager, service)
        self.hosts[name] = host
        return host

    def kill(self, name):
        """The compute service of ``name`` dies; its guests are kept."""
        host = self.hosts[name]
        host.left_behind = [(guest.get_xml(), guest.get_power_state())
                            for guest in host.driver.host.list_guests()]
        host.service.stop()
        dbf.set_down(objects.Service.get_by_host_and_binary(
            self.ctx, name, 'nova-compute'))
        return host

    def hold_after_claim(self, name):
        """The next evacuation to ``name`` stops once it has claimed its
        migration, before ``rebuild_spawning``; the ``HeldBinding``.
        Released at the end of the test at the latest."""
        hold = HeldBinding()
        self.addCleanup(hold.release)
        self.hosts[name].manager.network_api = HoldingNetworkAPI(name, hold)
        return hold

    def stall_at(self, point):
        """Hold the next operation (of any host) that reaches crash point
        ``point``; the ``Stall``. Released at the end of the test at the
        latest."""
        stall = Stall(point)
        self.addCleanup(crashpoint.observe(stall))
        self.addCleanup(stall.release)
        return stall

    def wait_held(self, hold, name):
        if not hold.reached.wait(WAIT_SECONDS):
            self.fail('gave up waiting for %s to claim its evacuation'
                      % name)

    def restart(self, name, host_rebooted=False, **settings):
        """A new driver and manager on the dead host's node file and
        instances_path, with the domains its hypervisor kept."""
        old = self.hosts[name]
        return self.start_compute(name, domains=old.left_behind,
                                  running=not host_rebooted, **settings)

    # -- instances -----------------------------------------------------------

    def network_info(self, bridge=BRIDGE):
        self._ports += 1
        port = '%08d-0000-4000-8000-%012d' % (self._ports, self._ports)
        return fixtures.make_network_info(bridge=bridge, active=False,
                                          port_ids=[port])

    def boot(self, host='a', bridge=BRIDGE, network_info_for=None):
        """An instance built and running on ``host``.

        ``network_info_for(ctx, instance)`` gives its VIFs (default: one
        VIF on ``bridge``, with no port behind it).
        """
        instance = self.build_on(host, bridge, network_info_for)
        self.assertEqual('active', instance.vm_state)
        return instance

    def build_on(self, host, bridge=BRIDGE, network_info_for=None):
        """A build sent to ``host``; the instance once the build ended,
        whatever its outcome (``boot``'s arguments)."""
        ctx = nova_context.get_admin_context()
        instance = dbf.make_instance(
            ctx, host, vm_state='building', task_state='scheduling',
            flavor=self.flavor, image_ref=self.image.id)
        objects.InstanceAction.action_start(ctx, instance.uuid, 'create')
        if network_info_for is None:
            network_info = self.network_info(bridge)
        else:
            network_info = network_info_for(ctx, instance)
        compute_rpcapi.ComputeAPI().build_and_run_instance(
            ctx, instance, host=host, image_meta=self.image,
            network_info=network_info)
        self.wait_for(lambda: self.fresh(instance).task_state is None,
                      'build of %s' % instance.uuid)
        return self.fresh(instance)

    def fresh(self, obj):
        if isinstance(obj, objects.Migration):
            return objects.Migration.get_by_id(self.ctx, obj.id)
        return objects.Instance.get_by_uuid(self.ctx, obj.uuid,
                                            read_deleted='yes')

    def wait_for(self, predicate, what):
        """Poll the database until ``predicate()``; fail after a while."""
        deadline = time.monotonic() + WAIT_SECONDS
        while not predicate():
            if time.monotonic() > deadline:
                self.fail('gave up waiting for %s' % what)
            time.sleep(0.05)

    def wait_for_evacuation(self, migration):
        """Until the migration ended (done or failed) and the instance has
        no task; the migration as it ended."""
        ended = (migration_obj.DONE, migration_obj.FAILED,
                 migration_obj.COMPLETED)
        self.wait_for(
            lambda: (self.fresh(migration).status in ended
                     and self.fresh(objects.Instance(
                         self.ctx, uuid=migration.instance_uuid)).task_state
                     is None),
            'evacuation %s' % migration.uuid)
        return self.fresh(migration)

    def evacuate(self, instance, **kwargs):
        """Request an evacuation through the API and wait for its end."""
        migration = self.api.evacuate(nova_context.get_admin_context(),
                                      self.fresh(instance), **kwargs)
        return self.wait_for_evacuation(migration)

    def events(self, instance):
        """[(action, event, result, host)] of the instance, oldest first,
        once every event has finished.

        An event finishes when the RPC handler that recorded it returns,
        a moment after the migration and instance rows show the end that
        ``wait_for_evacuation`` waits for.
        """
        def found():
            return [(action.action, event.event, event.result, event.host)
                    for action in reversed(
                        objects.InstanceAction.get_by_instance_uuid(
                            self.ctx, instance.uuid))
                    for event in action.events]
        self.wait_for(lambda: all(e[2] is not None for e in found()),
                      'the action events of %s to finish' % instance.uuid)
        return found()

    def failure_text(self, instance):
        """The newest fault's message (its first 255 characters) and the
        whole text of the failure, as an administrator reads them: the
        traceback of a 500 ends with it; a refusal (4xx) keeps none, and
        the failed action event's ``details`` have it (``nova
        instance-action``)."""
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        if fault.details:
            return fault.message + '\n' + fault.details

        def event_details():
            # The event finishes a moment after the fault is written.
            for action in objects.InstanceAction.get_by_instance_uuid(
                    self.ctx, instance.uuid):
                for event in reversed(action.events):
                    if (event.result == 'Error'
                            and event.details.startswith(fault.message)):
                        return event.details
            return None

        self.wait_for(lambda: event_details() is not None,
                      'the failed event of %s' % instance.uuid)
        return fault.message + '\n' + event_details()

    # -- assertions ----------------------------------------------------------

    def assertNoTrace(self, host, instance, disks_gone=True):
        """No domain and no VIF of ``instance`` on ``host`` and, when
        ``disks_gone``, no instance directory."""
        self.assertFalse(host.has_domain(instance),
                         'domain left on %s' % host.name)
        ports = {vif.id for vif in self.fresh(instance).network_info}
        self.assertFalse(ports & host.sim.plugged_vifs(),
                         'VIF left on %s' % host.name)
        if disks_gone:
            self.assertFalse(os.path.exists(host.instance_dir(instance)),
                             'instance directory left on %s' % host.name)

    def assertFailedOnSource(self, instance, migration, vm_state='error'):
        row = self.fresh(instance)
        self.assertEqual(('a', 'a', vm_state, None),
                         (row.host, row.node, row.vm_state, row.task_state))
        self.assertEqual(migration_obj.FAILED, self.fresh(migration).status)
        fault = objects.InstanceFault.get_latest_for_instance(
            self.ctx, instance.uuid)
        self.assertIsNotNone(fault)
        return fault

    def assertLandedOn(self, name, instance, migration):
        row = self.fresh(instance)
        self.assertEqual((name, name, 'active', None),
                         (row.host, row.node, row.vm_state, row.task_state))
        self.assertEqual(migration_obj.DONE, self.fresh(migration).status)
        self.assertTrue(self.hosts[name].running(instance))
        self.assertEqual(power_state.RUNNING, row.power_state)
