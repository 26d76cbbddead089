"""``cluster.json``: what a running cluster is, for tools and tests.

Written by the cluster's owner at every change (atomically), read by
``tools/cluster status`` and ``down`` and by tests, which inspect each host
through it (libvirt URI, instances directory, network namespace)
independently of the compute service. Every process is recorded with the
kernel's start time next to its PID (``procs.ProcessRecord``), so a record
left by a crashed owner never leads to signalling a reused PID.

Format (``format`` 1)::

    {"format": 1, "state": "up", "base_dir": "/tmp/nova-cluster",
     "owner": {"pid": 10, "start_time": 123},
     "api_url": "http://127.0.0.1:35001/v2.1", "api_token": "admin:admin",
     "database_url": "postgresql+psycopg2://postgres@127.0.0.1:35002/nova",
     "host_database_url": "postgresql+psycopg2://postgres@/nova?host=...",
     "transport_url": "rabbit://guest:guest@127.0.0.1:35003/",
     "ports": {"postgres": ..., "rabbitmq": ..., "rabbitmq_epmd": ...,
               "rabbitmq_dist": ..., "api": ...},
     "rabbitmq_node": "nova-test-35003@localhost",
     "processes": {"postgres": {"pid": .., "start_time": ..},
                   "rabbitmq": {..}, "epmd": {..}, "nova-api": {..},
                   "nova-conductor": {..}},
     "network": "public", "network_id": "<uuid>", "bridge": "br-nova",
     "flavor_id": "1", "image_id": "<uuid>",
     "hosts": [{"name": "compute1", "state": "up",
                "libvirt_uri": "qemu+unix:///system?socket=...",
                "instances_path": "<base>/instances",
                "storage_dir": "<base>/storage/compute1",
                "storage_group": "compute1",
                "netns": "nvc1a2b3c-compute1",
                "config_file": "<base>/etc/compute1.conf",
                "log_file": "<base>/logs/nova-compute-compute1.log",
                "tree": "<base>/hosts/compute1",
                "lock_manager": "lockd",
                "processes": {"holder": {..}, "virtlogd": {..},
                              "virtlockd": {..}, "libvirtd": {..},
                              "nova-compute": {..}},
                "compute_overrides": {"fault_injection":
                                      {"crash_point": "..."}},
                "override_file": "<base>/etc/compute1.override.conf",
                "last_exit": {"pid": .., "start_time": ..,
                              "returncode": -9, "signal": "SIGKILL",
                              "cause": "crash point", "crash_point": "..."},
                "mounts": [{"source": "<base>/storage/compute2",
                            "target": "<base>/instances",
                            "storage_group": "compute2",
                            "mount_id": 1234,
                            "covers": "<base>/storage/compute1",
                            "covers_group": "compute1"}]}],
     "timings": {"up": 12.3}}

``instances_path`` is the path as the host's own processes see it (every
host uses the same one, each with its own storage mounted there);
``storage_dir`` is where those files are seen from outside the hosts
(after ``mount-shared``, the mounted storage's). ``last_exit.cause`` is
``crash point`` (it died by SIGKILL and its log says it reached
``crash_point``), ``stopped`` (the harness stopped it), ``host failed``
(``fail``) or ``exited`` (anything else: look at its log). A host's
``state`` is ``partitioned`` between ``partition`` and ``heal`` (its
nova-compute stopped with SIGSTOP, everything else running);
``lock_manager`` is ``lockd`` (its virtlockd leases every disk) or null.
"""

import dataclasses
import json
import os

from nova.testing import procs

FORMAT = 1


def _records(values):
    return {role: procs.ProcessRecord(**record)
            for role, record in (values or {}).items()}


@dataclasses.dataclass
class HostEntry:
    name: str
    libvirt_uri: str
    instances_path: str
    storage_dir: str
    storage_group: str
    netns: str
    config_file: str
    log_file: str
    tree: str
    state: str = 'starting'
    # libvirt's lock manager on the host: 'lockd' (disk leases) or None.
    lock_manager: str | None = 'lockd'
    processes: dict = dataclasses.field(default_factory=dict)
    # The extra options the running nova-compute was started with
    # ({section: {option: value}}, in override_file), e.g. a crash point.
    compute_overrides: dict = dataclasses.field(default_factory=dict)
    override_file: str = ''
    # How the last nova-compute of the host ended (see ComputeExit).
    last_exit: dict | None = None
    # Mounts made over instances_path after the host started, oldest
    # first (see cluster_host.ClusterHost.mount_storage); undone newest
    # first by unmount and down.
    mounts: list = dataclasses.field(default_factory=list)

    @property
    def pids(self):
        return {role: r.pid for role, r in self.processes.items()}

    @classmethod
    def from_dict(cls, values):
        values = dict(values)
        values['processes'] = _records(values.get('processes'))
        return cls(**values)


@dataclasses.dataclass
class ClusterRecord:
    base_dir: str
    owner: procs.ProcessRecord
    state: str = 'starting'
    api_url: str = ''
    api_token: str = ''
    database_url: str = ''
    host_database_url: str = ''
    transport_url: str = ''
    ports: dict = dataclasses.field(default_factory=dict)
    rabbitmq_node: str = ''
    processes: dict = dataclasses.field(default_factory=dict)
    network: str = ''
    network_id: str = ''
    bridge: str = ''
    flavor_id: str = ''
    image_id: str = ''
    hosts: list = dataclasses.field(default_factory=list)
    timings: dict = dataclasses.field(default_factory=dict)
    # With a Keystone: its identity endpoint, and the clients' clouds.yaml
    # (clouds cluster-admin and cluster-demo); api_token is then a
    # Keystone token of the admin.
    keystone_url: str = ''
    clouds_yaml: str = ''
    # Masakari's API and the failover segment of the compute hosts
    # (``up --masakari``).
    masakari_url: str = ''
    masakari_segment: str = ''
    format: int = FORMAT

    def host(self, name) -> HostEntry:
        for entry in self.hosts:
            if entry.name == name:
                return entry
        raise KeyError('no host %s in the cluster (hosts: %s)'
                       % (name, ', '.join(h.name for h in self.hosts)))

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1,
                          sort_keys=True)

    @classmethod
    def from_json(cls, text) -> 'ClusterRecord':
        values = json.loads(text)
        if values.get('format') != FORMAT:
            raise ValueError('cluster record format %r, expected %d'
                             % (values.get('format'), FORMAT))
        values['owner'] = procs.ProcessRecord(**values['owner'])
        values['processes'] = _records(values.get('processes'))
        values['hosts'] = [HostEntry.from_dict(h)
                           for h in values.get('hosts', [])]
        return cls(**values)

    def save(self, path) -> None:
        tmp = '%s.%d.tmp' % (path, os.getpid())
        with open(tmp, 'w') as f:
            f.write(self.to_json())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path) -> 'ClusterRecord':
        with open(path) as f:
            return cls.from_json(f.read())
