"""Options of the conductor: evacuation target choice and host-evacuate."""

from oslo_config import cfg

conductor_group = cfg.OptGroup('conductor', title='Conductor options')

conductor_opts = [
    cfg.IntOpt('host_evacuate_workers',
               default=4,
               min=1,
               help="""
How many instances host-evacuate requests to evacuate at the same time.

Each worker runs the request checks of one instance, has its target chosen,
hands it to that target and watches it to its end, retrying it once
elsewhere if that target failed; a failure of one instance never stops the
others.
Higher values finish a large host sooner but load the database and the
targets more at once.

Possible values: any positive integer.
"""),
    cfg.FloatOpt('host_evacuate_poll_interval',
                 default=1.0,
                 min=0.01,
                 help="""
Seconds between two reads of the database while host-evacuate waits for
an evacuation it requested to end (its migration and instance rows).

The target tells the conductors when an evacuation ended there (an RPC
fanout), and the rows are read again at once; this interval is the
backstop for a word that never comes (a target that died, a compute of an
older release).

Shorter notices such ends sooner; longer reads the database less often.

Related options: ``host_evacuate_workers``.
"""),
    cfg.FloatOpt('cpu_allocation_ratio',
                 default=4.0,
                 min=0.0,
                 help="""
Virtual CPUs a compute host may hold per physical CPU, when the conductor
checks whether an evacuation target has room.

Nova's default (``initial_cpu_allocation_ratio``) is 4.0.

Related options: ``ram_allocation_ratio``, ``disk_allocation_ratio``.
"""),
    cfg.FloatOpt('ram_allocation_ratio',
                 default=1.0,
                 min=0.0,
                 help="""
Guest memory a compute host may hold per MiB of its memory, when the
conductor checks whether an evacuation target has room. 1.0 means no
overcommit.
"""),
    cfg.FloatOpt('disk_allocation_ratio',
                 default=1.0,
                 min=0.0,
                 help="""
Guest disk a compute host may hold per GiB of the file system behind its
``instances_path``, when the conductor checks whether an evacuation target
has room. 1.0 means no overcommit.
"""),
]


def register_opts(conf):
    conf.register_group(conductor_group)
    conf.register_opts(conductor_opts, group=conductor_group)


def list_opts():
    return {conductor_group: conductor_opts}
