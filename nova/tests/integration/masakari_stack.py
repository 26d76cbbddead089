"""What the Masakari integration tests start: RabbitMQ, Keystone and
nova-all behind it (the embedded default: compute1 and compute2 on
libvirt's test driver, the compute endpoint in the catalog, as for
Tempest), and masakari-api and masakari-engine behind the same Keystone,
each stopped by the records taken when it started.

Starting all of it takes minutes, so a test module starts it once
(``setUpModule``/``tearDownModule`` call ``start_shared``/``stop_shared``)
and its tests share it; each test keeps to what it made (its own segment
and servers) and its class restores what it changed.
"""

import os
import shutil
import tempfile

from nova.testing import keystone
from nova.testing import masakari
from nova.testing import rabbitmq
from nova.testing import tempest
from nova.tests import base

MISSING = (masakari.missing_reason() or keystone.missing_reason()
           or rabbitmq.available())


class Stack:
    """RabbitMQ, Keystone with nova-all, and Masakari, under ``base``."""

    def __init__(self, base_dir: str):
        self.base = base_dir
        self.broker = rabbitmq.RabbitMQServer(
            os.path.join(base_dir, 'rabbitmq'), rabbitmq.free_port())
        self.nova = tempest.Run(os.path.join(base_dir, 'stack'))
        self.masakari = masakari.MasakariServer(
            os.path.join(base_dir, 'masakari'), self.nova.keystone,
            'sqlite:///%s' % os.path.join(base_dir, 'masakari.sqlite'),
            self.broker.url)

    def start(self) -> None:
        try:
            self.broker.start()
            self.nova.start()
            self.masakari.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Each part by the records taken when it started; what never
        started is skipped."""
        self.masakari.stop()
        self.nova.stop()
        self.broker.stop()


_shared: Stack | None = None


def start_shared() -> None:
    """The module's stack, started once (a no-op when Masakari or
    Keystone cannot run here: the tests skip)."""
    global _shared
    if MISSING or _shared is not None:
        return
    stack = Stack(tempfile.mkdtemp(prefix='nova-masakari-'))
    stack.start()
    _shared = stack


def stop_shared() -> None:
    global _shared
    stack, _shared = _shared, None
    if stack is not None:
        stack.stop()
        shutil.rmtree(stack.base, True)


class MasakariStackTestCase(base.TestCase):

    # Masakari's [host_failure] evacuate_all_instances.
    evacuate_all_instances = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if _shared is None:
            raise RuntimeError('the module calls masakari_stack.'
                               'start_shared() in setUpModule')
        cls.broker = _shared.broker
        cls.stack = _shared.nova
        cls.masakari = _shared.masakari
        # The engine reads it at start: restarted only when it changes.
        cls.masakari.configure_engine(
            evacuate_all_instances=cls.evacuate_all_instances)
