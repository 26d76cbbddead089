"""RPC plumbing: one oslo.messaging transport per process, clients, servers
and the serializer that carries the project's typed values.

``transport_url`` (oslo.messaging's own option, on the global ``cfg.CONF``)
selects the bus: ``inproc://`` inside one process (``nova-all``, functional
tests), ``rabbit://user:pass@host:port/`` across processes.

NOTE: the global ``cfg.CONF`` is used on purpose. oslo.messaging registers
some options (``oslo_messaging_tracing`` ...) only there; with a private
``ConfigOpts`` every call fails and servers silently never reply.

NOTE: ``inproc://`` (``nova/rpc_inproc.py``) works only between clients
and servers sharing the one transport object of this module (its queues
live in the driver instance); a message reaches its server at once (under
a millisecond a call), where oslo.messaging's ``fake://`` polls every
50 ms.

Example::

    rpc.init(CONF)
    target = messaging.Target(topic='compute', server='compute1')
    server = rpc.get_server(target, [manager])
    server.start()
    client = rpc.get_client(messaging.Target(topic='compute', version='1.0'),
                            version_cap='1.0')
    client.prepare(server='compute1').cast(ctxt, 'stop_instance',
                                           instance=instance)
"""

import dataclasses
import datetime
import importlib
import threading

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from nova import context as nova_context
from nova.model import network as network_model

LOG = logging.getLogger(__name__)

# Exceptions of these modules raised by an endpoint are rebuilt with their
# own class on the caller's side of a call(); others become RemoteError.
ALLOWED_EXMODS = ['nova.exception']

_LOCK = threading.Lock()
TRANSPORT = None


def register_transport_opts(conf=cfg.CONF, default_url=None):
    """Register oslo.messaging's ``transport_url`` now, optionally changing
    its default (``nova-all`` defaults to ``inproc://``).

    oslo.messaging registers its transport options itself on first use;
    ``TransportURL.parse`` with an explicit URL is its public way to do that
    without reading the option, so a default can be set before parsing the
    command line.
    """
    messaging.TransportURL.parse(conf, default_url or 'inproc://')
    if default_url is not None:
        conf.set_default('transport_url', default_url)


def init(conf=cfg.CONF, url=None):
    """Create this process's transport (idempotent); return it.

    ``url`` overrides ``conf.transport_url`` (tests).
    """
    global TRANSPORT
    with _LOCK:
        if TRANSPORT is None:
            TRANSPORT = messaging.get_rpc_transport(
                conf, url=url, allowed_remote_exmods=ALLOWED_EXMODS)
            LOG.debug('RPC transport %s ready',
                      TRANSPORT.conf.transport_url if url is None else url)
        return TRANSPORT


def initialized():
    return TRANSPORT is not None


def cleanup():
    """Close the transport; clients and servers made from it stop working."""
    global TRANSPORT
    with _LOCK:
        if TRANSPORT is not None:
            TRANSPORT.cleanup()
            TRANSPORT = None


def in_process():
    """Whether this process's bus is ``inproc://`` (``nova-all``'s
    default): then other processes reach it only through ``serve_hub``."""
    from nova import rpc_inproc
    return isinstance(_driver(), rpc_inproc.InProcessDriver)


def serve_hub(path):
    """Serve this process's ``inproc://`` bus on the Unix socket ``path``
    for processes whose ``transport_url`` is ``ipc://<path>``; returns the
    started ``nova.rpc_ipc.Hub`` (``stop()`` it)."""
    from nova import rpc_ipc
    if not in_process():
        raise RuntimeError('only an inproc:// transport is served on a hub')
    return rpc_ipc.Hub(_driver(), path).start()


def _driver():
    # NOTE: oslo.messaging offers no public way to reach a transport's
    # driver; the hub needs the in-process driver's queues themselves.
    return _transport()._driver


def _transport():
    if TRANSPORT is None:
        raise RuntimeError('nova.rpc.init() was not called')
    return TRANSPORT


def get_client(target, version_cap=None, serializer=None, timeout=None):
    """An RPC client for ``target``; messages carry ``RequestContext`` and
    typed values through ``serializer`` (``RequestContextSerializer`` by
    default). ``version_cap`` refuses to send a newer version than it."""
    return messaging.get_rpc_client(
        _transport(), target, version_cap=version_cap,
        serializer=serializer or RequestContextSerializer(),
        timeout=timeout)


def get_server(target, endpoints, serializer=None):
    """An RPC server dispatching to ``endpoints`` on native threads.

    NOTE: the executor is left to oslo.messaging, which picks ``threading``
    when eventlet has not monkey-patched the process (it never is here);
    passing ``executor='threading'`` explicitly only triggers its
    deprecation warning for the argument.
    """
    return messaging.get_rpc_server(
        _transport(), target, endpoints,
        serializer=serializer or RequestContextSerializer())


# -- serialization ----------------------------------------------------------

# Keys that mark an encoded value; plain dicts never use them.
TYPE_KEY = 'nova_value.type'
DATA_KEY = 'nova_value.data'
_NETWORK_INFO = 'NetworkInfo'
_TUPLE = 'tuple'
_DATETIME = 'datetime'


def _objects_base():
    """``nova.objects.base`` if the persistence layer is importable."""
    try:
        return importlib.import_module('nova.objects.base')
    except ImportError:
        return None


def _is_nova_object(value):
    base = _objects_base()
    return base is not None and base.is_object(value)


def _import_dataclass(path):
    """The dataclass named ``module:Class``, only from this project."""
    module_name, _, class_name = path.partition(':')
    if not (module_name == 'nova' or module_name.startswith('nova.')):
        raise ValueError('refusing to decode type %r' % path)
    cls = getattr(importlib.import_module(module_name), class_name)
    if not dataclasses.is_dataclass(cls):
        raise ValueError('%r is not a dataclass' % path)
    return cls


class ValueSerializer(messaging.Serializer):
    """Turns the project's values into JSON-able primitives and back.

    Handles, recursively: persistent objects (``nova.objects.base``
    ``obj_to_primitive``/``obj_from_primitive``, given the message's
    context), ``NetworkInfo``, any dataclass of a ``nova.*`` module
    (``InstanceExternalEvent``, ``Flavor``...),
    tuples, datetimes, lists and dicts.
    """

    def serialize_entity(self, ctxt, entity):
        return self._encode(entity)

    def deserialize_entity(self, ctxt, entity):
        return self._decode(ctxt, entity)

    def serialize_context(self, ctxt):
        return ctxt

    def deserialize_context(self, ctxt):
        return ctxt

    def _encode(self, value):
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if _is_nova_object(value):
            return _objects_base().obj_to_primitive(value)
        # NetworkInfo before tuple: it is one.
        if isinstance(value, network_model.NetworkInfo):
            return {TYPE_KEY: _NETWORK_INFO, DATA_KEY: value.to_list()}
        if isinstance(value, datetime.datetime):
            return {TYPE_KEY: _DATETIME, DATA_KEY: value.isoformat()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            fields = {f.name: self._encode(getattr(value, f.name))
                      for f in dataclasses.fields(value) if f.init}
            return {TYPE_KEY: '%s:%s' % (cls.__module__, cls.__qualname__),
                    DATA_KEY: fields}
        if isinstance(value, tuple):
            return {TYPE_KEY: _TUPLE, DATA_KEY: [self._encode(v)
                                                 for v in value]}
        if isinstance(value, (list, set, frozenset)):
            return [self._encode(v) for v in value]
        if isinstance(value, dict):
            return {k: self._encode(v) for k, v in value.items()}
        raise TypeError('cannot send %s over RPC' % type(value).__name__)

    def _decode(self, ctxt, value):
        if isinstance(value, list):
            return [self._decode(ctxt, v) for v in value]
        if not isinstance(value, dict):
            return value
        base = _objects_base()
        if base is not None and base.is_primitive_object(value):
            return base.obj_from_primitive(ctxt, value)
        kind = value.get(TYPE_KEY)
        if kind is None:
            return {k: self._decode(ctxt, v) for k, v in value.items()}
        data = value[DATA_KEY]
        if kind == _NETWORK_INFO:
            return network_model.NetworkInfo.from_list(data)
        if kind == _DATETIME:
            return datetime.datetime.fromisoformat(data)
        if kind == _TUPLE:
            return tuple(self._decode(ctxt, v) for v in data)
        cls = _import_dataclass(kind)
        return cls(**{k: self._decode(ctxt, v) for k, v in data.items()})


class RequestContextSerializer(ValueSerializer):
    """``ValueSerializer`` that also carries the ``RequestContext``."""

    def serialize_context(self, ctxt):
        if ctxt is None:
            return {}
        if isinstance(ctxt, dict):
            return ctxt
        return ctxt.to_dict()

    def deserialize_context(self, ctxt):
        return nova_context.RequestContext.from_dict(ctxt or {})
