"""Options of the REST API service (nova-api)."""

from oslo_config import cfg

api_group = cfg.OptGroup('api', title='REST API options')

api_opts = [
    cfg.HostAddressOpt('listen',
                       default='127.0.0.1',
                       help="""
Address the REST API listens on.

The default keeps the API on the loopback interface, which suits the
embedded default with ``auth_strategy = noauth2``; use ``0.0.0.0`` (and the
``token`` strategy) to serve other machines.
"""),
    cfg.PortOpt('listen_port',
                default=8774,
                help="""
TCP port of the REST API. 0 picks a free port (tests).
"""),
    cfg.StrOpt('auth_strategy',
               default='noauth2',
               choices=[
                   ('noauth2', 'Trust the ``X-Auth-Token`` header as '
                               '``USER:PROJECT``; user ``admin`` is an '
                               'administrator. For one trusted machine.'),
                   ('token', 'Accept only the tokens listed in '
                             '``static_tokens``.'),
                   ('keystone', 'Keystone tokens, validated by '
                                'keystonemiddleware\'s ``auth_token`` '
                                'with the ``[keystone_authtoken]`` '
                                'options.'),
               ],
               help="""
How a request proves who makes it.

Related options: ``static_tokens``; ``[keystone_authtoken]``;
``[oslo_policy] policy_file``.
"""),
    cfg.MultiStrOpt('static_tokens',
                    default=[],
                    secret=True,
                    help="""
Tokens the ``token`` auth strategy accepts, one option line each, as
``TOKEN:USER_ID:PROJECT_ID[:ROLE[,ROLE...]]``. A token with the role
``admin`` is an administrator (evacuate, os-resetState, os-services,
os-migrations, os-server-external-events).

Example::

    [api]
    auth_strategy = token
    static_tokens = s3cret:alice:demo
    static_tokens = 0ps:operator:admin:admin

Related options: ``auth_strategy``.
"""),
    cfg.IntOpt('max_request_body_size',
               default=114688,
               min=1024,
               help="""
Largest request body, in bytes, the API reads; a larger one is refused with
413 before it is parsed.
"""),
    cfg.IntOpt('max_limit',
               default=1000,
               min=1,
               help="""
Most items a list request (``GET /servers``, ``/os-migrations`` ...)
returns; a larger ``limit`` query parameter is lowered to it.
"""),
    cfg.BoolOpt('enable_instance_password',
                default=True,
                help="""
Return ``adminPass`` in the response of ``POST /servers``: the password the
request gave, or a generated one when it gave none, as the Compute API
does.

Nothing here sets it in the guest (there is no guest agent, metadata
service or config drive) and it is never stored: the value only tells a
client written for the Compute API what it expects to read. Set to False
to leave ``adminPass`` out of the response.
"""),
    cfg.StrOpt('compute_link_prefix',
               help="""
Base URL used in the ``links`` of responses instead of the request's own
host URL, for an API behind a proxy. Example: ``https://cloud.example:8774``.
"""),
]


# In [DEFAULT], where Nova has it.
workers_opts = [
    cfg.IntOpt('osapi_compute_workers',
               min=0,
               help="""
Processes serving the REST API, each its own Python interpreter, all
accepting on the one listening socket of ``[api] listen``:``listen_port``
that the service opened.

With 0 the API is served on threads of the service's own process. Unset:
1 for ``nova-all``, whose API then runs on another core than its
conductor and computes (the workers' messages reach ``nova-all``'s
in-process bus over a Unix socket in ``state_path``, with no broker); 0
for ``nova-api``, whose workers use its ``transport_url``.
A worker that dies is started again; the listening socket stays open
meanwhile, so connections wait instead of being refused.
"""),
]


def register_opts(conf):
    conf.register_group(api_group)
    conf.register_opts(api_opts, group=api_group)
    conf.register_opts(workers_opts)


def list_opts():
    return {api_group: api_opts, 'DEFAULT': workers_opts}
