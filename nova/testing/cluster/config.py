"""What a cluster is made of: its spec, its directory layout, its nova.conf.

Pure values and text, no processes: ``ClusterSpec`` says how many compute
hosts and which of them share storage, ``Layout`` says where every file of
the cluster lives under one base directory, and ``host_conf`` /
``controller_conf`` render the configuration files the services read.

Example::

    spec = ClusterSpec(base_dir='/tmp/c', hosts=3,
                       shared_groups=(('compute2', 'compute3'),))
    spec.storage_group('compute3')        # 'shared1'
    text = host_conf(spec, Layout(spec.base_dir), ports, 'compute1',
                     libvirt_uri='qemu+unix:///system?socket=...')
    # one run of nova-compute that SIGKILLs itself at a crash point
    extra = override_conf(compute_overrides('spawn.writing_root_disk'))
"""

import dataclasses
import hashlib
import json
import os

from oslo_log import log as oslo_log

HOST_PREFIX = 'compute'
CONTROLLER_HOST = 'controller'
# The cluster's own command, which is also its fence agent.
TOOLS_CLUSTER = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))), 'tools', 'cluster')
# noauth2: "USER:PROJECT", user admin is an administrator.
ADMIN_TOKEN = 'admin:admin'
API_PREFIX = '/v2.1'


class SpecError(ValueError):
    """A cluster spec that cannot be built; the message says why."""


def host_name(index: int) -> str:
    return '%s%d' % (HOST_PREFIX, index)


def parse_group(text: str) -> tuple:
    """``'compute2,compute3'`` -> ``('compute2', 'compute3')``."""
    names = tuple(n.strip() for n in text.split(',') if n.strip())
    if not names:
        raise SpecError('empty shared storage group %r' % text)
    return names


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    """How to build a cluster.

    ``shared_groups``: tuples of host names sharing one instances
    directory (standing in for NFS); every other host has its own.
    The timing options are small so that failure detection and VIF
    waits fit in a test run: a host is "down" ``service_down_time`` s
    after its last heartbeat. Every host runs virtlockd and takes disk
    leases (``lock_manager = "lockd"``) but the ``hosts_without_leases``.
    ``reap_orphans_interval`` is the compute hosts' (nova's default).
    """
    base_dir: str
    hosts: int = 2
    shared_groups: tuple = ()
    network: str = 'public'
    bridge: str = 'br-nova'
    network_cidr: str = '10.10.0.0/24'
    flavor_id: str = '1'
    flavor_name: str = 'm1.nano'
    flavor_memory_mb: int = 64
    image_name: str = 'bootsector'
    report_interval: int = 2
    service_down_time: int = 10
    vif_plugging_timeout: int = 20
    vif_plugging_is_fatal: bool = True
    agent_poll_interval: float = 0.5
    shutdown_timeout: int = 0
    hosts_without_leases: tuple = ()
    reap_orphans_interval: int = 600
    # Tiny TCG guests on a 2-core machine: room for a few dozen (Nova's
    # default of 4.0 would stop at eight per host).
    cpu_allocation_ratio: float = 16.0
    debug: bool = True
    # Without debug, still log the phase marks (``nova.phases`` logs them
    # at debug level): the benchmarks read their phase tables from the
    # services' logs, and debug logging everywhere would slow what they
    # measure.
    phase_marks: bool = False
    # A Keystone of the cluster's own authenticates the API
    # (``nova.testing.keystone``); noauth2 otherwise.
    keystone: bool = False
    # Masakari (masakari-api and masakari-engine, ``nova.testing.
    # masakari``) behind that Keystone, with a failover segment holding
    # every compute host. Needs ``keystone``.
    masakari: bool = False
    # nova-hamonitor runs on the controller, its fence agent
    # ``tools/cluster fence`` (``fence_command``) unless ``fence_agent``
    # is False (no ``fence_command``: only hosts the disk leases guard
    # are recovered).
    hamonitor: bool = False
    fence_agent: bool = True
    # A real Glance behind that Keystone (``nova.testing.glance``) is
    # where images come from (``[image] backend = glance``); the local
    # image store otherwise.
    glance: bool = False

    def __post_init__(self):
        if self.hosts < 1:
            raise SpecError('a cluster needs at least one compute host')
        if self.masakari and not self.keystone:
            raise SpecError('Masakari needs the cluster\'s Keystone '
                            '(--keystone)')
        if not os.path.isabs(self.base_dir):
            raise SpecError('base_dir must be absolute: %r' % self.base_dir)
        if self.glance and not self.keystone:
            raise SpecError('Glance needs the cluster\'s Keystone '
                            '(--keystone)')
        seen = {}
        names = set(self.host_names())
        for index, group in enumerate(self.shared_groups, 1):
            for name in group:
                if name not in names:
                    raise SpecError('shared storage group %s names %s, '
                                    'which is not one of %s'
                                    % (','.join(group), name,
                                       ', '.join(self.host_names())))
                if name in seen:
                    raise SpecError('%s is in two shared storage groups'
                                    % name)
                seen[name] = index
        for name in self.hosts_without_leases:
            if name not in names:
                raise SpecError('hosts_without_leases names %s, which is '
                                'not one of %s' % (
                                    name, ', '.join(self.host_names())))

    def host_names(self) -> list:
        return [host_name(i) for i in range(1, self.hosts + 1)]

    def lock_manager(self, host: str) -> str | None:
        """libvirt's lock manager on ``host``: 'lockd', or None."""
        return None if host in self.hosts_without_leases else 'lockd'

    def storage_group(self, host: str) -> str:
        """Name of the storage directory ``host`` uses: ``shared<N>`` for
        the N-th shared group, else the host's own name."""
        for index, group in enumerate(self.shared_groups, 1):
            if host in group:
                return 'shared%d' % index
        return host

    def storage_groups(self) -> list:
        """Every storage group of the cluster, each once, in host order."""
        groups = []
        for host in self.host_names():
            group = self.storage_group(host)
            if group not in groups:
                groups.append(group)
        return groups

    def resolve_storage_group(self, name: str) -> str:
        """A storage group named directly (``shared1``, ``compute2``) or
        by a host using it; SpecError if there is no such group."""
        if name in self.host_names():
            return self.storage_group(name)
        if name in self.storage_groups():
            return name
        raise SpecError('no storage group %r (groups: %s)'
                        % (name, ', '.join(self.storage_groups())))

    @property
    def tag(self) -> str:
        """Short, stable id of this cluster (network namespace names)."""
        return hashlib.sha1(self.base_dir.encode()).hexdigest()[:6]

    def netns(self, host: str) -> str:
        return 'nvc%s-%s' % (self.tag, host)


@dataclasses.dataclass(frozen=True)
class Ports:
    """TCP ports on 127.0.0.1 (the same inside every host's namespace)."""
    postgres: int
    rabbitmq: int
    rabbitmq_epmd: int
    rabbitmq_dist: int
    api: int
    keystone: int = 0
    masakari: int = 0
    glance: int = 0


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where the cluster's files live under ``base_dir``."""
    base_dir: str

    def _p(self, *parts):
        return os.path.join(self.base_dir, *parts)

    @property
    def record(self):
        return self._p('cluster.json')

    @property
    def control_socket(self):
        return self._p('control.sock')

    @property
    def supervisor_log(self):
        return self._p('supervisor.log')

    @property
    def logs(self):
        return self._p('logs')

    @property
    def etc(self):
        return self._p('etc')

    @property
    def postgres(self):
        return self._p('postgres')

    @property
    def keystone(self):
        return self._p('keystone')

    @property
    def masakari(self):
        return self._p('masakari')

    @property
    def glance(self):
        return self._p('glance')

    @property
    def clouds_yaml(self):
        """The clients' ``clouds.yaml`` (clouds ``cluster-admin`` and
        ``cluster-demo``) when the cluster has a Keystone."""
        return self._p('etc', 'clouds.yaml')

    @property
    def rabbitmq(self):
        return self._p('rabbitmq')

    @property
    def images(self):
        return self._p('images')

    @property
    def guest(self):
        return self._p('guest')

    @property
    def hosts(self):
        """Base of the LibvirtHost trees (one sub-directory a host)."""
        return self._p('hosts')

    def libvirt_relay(self, name):
        """Host ``name``'s libvirtd as the controller reaches it (the
        monitor's probe): relayed to the host's own socket while the host
        is not partitioned."""
        return self._p('mgmt', '%s-libvirt.sock' % name)

    @property
    def controller_state(self):
        return self._p('controller')

    @property
    def instances_path(self):
        """Every host's ``instances_path``: an empty mount point here, on
        which each host's namespace mounts its storage directory, as every
        host of a real deployment has the same path."""
        return self._p('instances')

    def storage(self, group):
        """The directory behind ``instances_path`` for a storage group."""
        return self._p('storage', group)

    def state_path(self, host):
        return self._p('hosts', host, 'nova')

    def conf(self, name):
        return os.path.join(self.etc, name + '.conf')

    def override_conf(self, host):
        """The second ``--config-file`` of ``host``'s nova-compute, when
        it runs with extra options (``compute_overrides``)."""
        return os.path.join(self.etc, host + '.override.conf')

    def log(self, name):
        return os.path.join(self.logs, name + '.log')


def _render(sections) -> str:
    lines = []
    for section, options in sections.items():
        lines.append('[%s]' % section)
        for key, value in options.items():
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            lines.append('%s = %s' % (key, value))
        lines.append('')
    return '\n'.join(lines)


def compute_overrides(crash_point: str | None = None,
                      options: dict | None = None,
                      stall_point: str | None = None) -> dict:
    """The extra options of one nova-compute run, as {section: {option:
    value}}: ``options`` plus ``[fault_injection] crash_point`` and
    ``stall_point`` (names of ``nova.crashpoint.POINTS``;
    SpecError for any other)."""
    overrides = {section: dict(values)
                 for section, values in (options or {}).items()}
    for option, point in (('crash_point', crash_point),
                          ('stall_point', stall_point)):
        if not point:
            continue
        # Imported here: the rest of this module is plain values.
        from nova import crashpoint
        if point not in crashpoint.POINTS:
            raise SpecError('unknown %s %r (known: %s)' % (
                option.replace('_', ' '), point,
                ', '.join(crashpoint.POINTS)))
        overrides.setdefault('fault_injection', {})[option] = point
    return overrides


def override_conf(overrides: dict) -> str:
    """The override file of a nova-compute run (read after the host's
    nova.conf, so its options win)."""
    return _render(overrides)


def database_url(ports: Ports) -> str:
    """The database over TCP on loopback (tools, controller services)."""
    return 'postgresql+psycopg2://postgres@127.0.0.1:%d/nova' % ports.postgres


def host_database_url(layout: Layout, ports: Ports) -> str:
    """The database through PostgreSQL's Unix socket, which every host's
    namespace sees on the file system; the compute hosts use it so that
    the busiest traffic needs no forwarding between network namespaces."""
    return ('postgresql+psycopg2://postgres@/nova?host=%s&port=%d'
            % (layout.postgres, ports.postgres))


def transport_url(ports: Ports) -> str:
    return 'rabbit://guest:guest@127.0.0.1:%d/' % ports.rabbitmq


def api_url(ports: Ports) -> str:
    return 'http://127.0.0.1:%d%s' % (ports.api, API_PREFIX)


def image_url(ports: Ports) -> str:
    """nova-api's view of the image store as the Image service v2."""
    return 'http://127.0.0.1:%d/image' % ports.api


def keystone_url(ports: Ports) -> str:
    return 'http://127.0.0.1:%d/v3' % ports.keystone


def glance_url(ports: Ports) -> str:
    return 'http://127.0.0.1:%d' % ports.glance


# The cluster Keystone's users: nova-api's own service user, and a member
# of another project (clouds.yaml's cluster-demo).
SERVICE_USER = ('nova', 'nova-service-pass', 'service')
DEMO_USER = ('demo', 'demo-pass', 'demo')


def clouds_yaml(ports: Ports, admin_password: str) -> str:
    """``clouds.yaml`` of a cluster with a Keystone (JSON is YAML)."""
    def cloud(user, password, project):
        return {'auth': {'auth_url': keystone_url(ports), 'username': user,
                         'password': password, 'project_name': project,
                         'user_domain_name': 'Default',
                         'project_domain_name': 'Default'},
                'region_name': 'RegionOne', 'identity_api_version': 3}
    return json.dumps({'clouds': {
        'cluster-admin': cloud('admin', admin_password, 'admin'),
        'cluster-demo': cloud(*DEMO_USER)}}, indent=2) + '\n'


def _common(spec, layout, ports, host, log_name, state_path):
    common = {
        'host': host,
        'state_path': state_path,
        'transport_url': transport_url(ports),
        'report_interval': spec.report_interval,
        'service_down_time': spec.service_down_time,
        'periodic_fuzzy_delay': 0,
        'debug': spec.debug,
        'log_file': layout.log(log_name),
        'use_stderr': False,
    }
    if spec.phase_marks and not spec.debug:
        common['default_log_levels'] = phase_marks_log_levels()
    return common


def phase_marks_log_levels() -> str:
    """``default_log_levels`` that log the phase marks without debug:
    oslo.log's own list, plus the one logger raised to debug."""
    return ','.join(oslo_log.get_default_log_levels()
                    + ['nova.phases=DEBUG'])


def controller_conf(spec: ClusterSpec, layout: Layout, ports: Ports) -> str:
    """nova.conf of nova-api, nova-conductor and nova-manage."""
    default = _common(spec, layout, ports, CONTROLLER_HOST, 'unused',
                      layout.controller_state)
    # One file serves several programs: each gets --log-file on its
    # command line instead.
    del default['log_file']
    sections = {
        'DEFAULT': default,
        'api': {'listen': '127.0.0.1', 'listen_port': ports.api,
                'auth_strategy': 'keystone' if spec.keystone
                else 'noauth2'},
        'conductor': {'cpu_allocation_ratio': spec.cpu_allocation_ratio},
        'database': {'connection': database_url(ports)},
        'network': {'events_api_url': api_url(ports),
                    'events_api_token': ADMIN_TOKEN},
        # The tests and benchmarks boot dozens of guests in one project
        # (Nova's defaults stop at 10 instances and 20 cores); quotas
        # themselves are tested without a cluster.
        'quota': {'instances': -1, 'cores': -1, 'ram': -1},
    }
    if spec.hamonitor:
        sections['ha'] = {
            # A host is down service_down_time s after its last
            # heartbeat: look about as often.
            'check_interval': max(1, spec.service_down_time // 5),
            'lease_duration': spec.service_down_time,
            # What the leases refused is tried again this soon.
            'lease_retry_interval': spec.service_down_time // 2 or 1}
        if spec.fence_agent:
            sections['ha']['fence_command'] = fence_command(spec)
        # Each host's libvirtd across the "management network": a host
        # whose nova-compute alone stopped is not failed.
        sections['ha']['libvirt_uri'] = (
            'qemu+unix:///system?socket=' + layout.libvirt_relay('%s'))
        if spec.masakari:
            # Masakari evacuates what the monitor fenced, as the nova
            # service user (an admin, which Masakari's policy asks).
            sections['ha']['recovery'] = 'masakari'
            sections['masakari'] = _service_credentials(ports)
    if spec.keystone:
        sections['keystone_authtoken'] = dict(
            _service_credentials(ports),
            www_authenticate_uri=keystone_url(ports))
    sections.update(_glance_sections(spec, layout, ports))
    return _render(sections)


def fence_command(spec: ClusterSpec) -> str:
    """The cluster's fence agent: ``tools/cluster --dir DIR fence``, the
    host's name appended by the monitor."""
    return '%s --dir %s fence' % (TOOLS_CLUSTER, spec.base_dir)


def _glance_sections(spec: ClusterSpec, layout: Layout, ports: Ports):
    """``[image]`` (and ``[glance]``: where Glance is, and the ``nova``
    service user that reads it) of the controller and the hosts."""
    if not spec.glance:
        return {'image': {'store_path': layout.images}}
    return {'image': {'store_path': layout.images, 'backend': 'glance'},
            'glance': dict(_service_credentials(ports),
                           api_servers=glance_url(ports))}


def _service_credentials(ports: Ports) -> dict:
    """Keystone password credentials of the ``nova`` service user."""
    user, password, project = SERVICE_USER
    return {'auth_url': keystone_url(ports), 'auth_type': 'password',
            'username': user, 'password': password,
            'project_name': project, 'user_domain_name': 'Default',
            'project_domain_name': 'Default'}


def host_conf(spec: ClusterSpec, layout: Layout, ports: Ports, host: str,
              libvirt_uri: str) -> str:
    """nova.conf of ``host``'s nova-compute (run inside its namespaces).
    With a Keystone, its network agent posts events with Keystone tokens
    of the ``nova`` service user (``[network] auth_type`` ...)."""
    default = _common(spec, layout, ports, host, 'nova-compute-' + host,
                      layout.state_path(host))
    default.update({
        'instances_path': layout.instances_path,
        'compute_driver': 'libvirt.LibvirtDriver',
        'vif_plugging_timeout': spec.vif_plugging_timeout,
        'vif_plugging_is_fatal': spec.vif_plugging_is_fatal,
        'shutdown_timeout': spec.shutdown_timeout,
        'reap_orphans_interval': spec.reap_orphans_interval,
    })
    if spec.hamonitor:
        # A host back from a partition records its guests' states (and
        # takes back what a refused evacuation left in ERROR) within one
        # service_down_time, not Nova's ten minutes.
        default['sync_power_state_interval'] = spec.service_down_time
    network = {'events_api_url': api_url(ports),
               'events_api_token': ADMIN_TOKEN,
               'agent_poll_interval': spec.agent_poll_interval}
    if spec.keystone:
        del network['events_api_token']
        network.update(_service_credentials(ports))
    sections = {
        'DEFAULT': default,
        'libvirt': {'virt_type': 'qemu', 'connection_uri': libvirt_uri,
                    'vif_driver': 'linuxbridge'},
        'database': {'connection': host_database_url(layout, ports)},
        'network': network,
    }
    sections.update(_glance_sections(spec, layout, ports))
    return _render(sections)
