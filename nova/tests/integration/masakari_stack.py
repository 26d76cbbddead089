"""What the Masakari integration tests start: RabbitMQ, Keystone and
nova-all behind it (the embedded default: compute1 and compute2 on
libvirt's test driver, the compute endpoint in the catalog, as for
Tempest), and masakari-api and masakari-engine behind the same Keystone,
each stopped by the records taken when it started."""

import os

from nova.testing import keystone
from nova.testing import masakari
from nova.testing import rabbitmq
from nova.testing import tempest
from nova.tests import base

MISSING = (masakari.missing_reason() or keystone.missing_reason()
           or rabbitmq.available())


class MasakariStackTestCase(base.TestCase):

    # Masakari's [host_failure] evacuate_all_instances.
    evacuate_all_instances = True

    def setUp(self):
        super().setUp()
        self.broker = rabbitmq.RabbitMQServer(
            os.path.join(self.tmp, 'rabbitmq'), rabbitmq.free_port())
        self.broker.start()
        self.addCleanup(self.broker.stop)
        self.stack = tempest.Run(os.path.join(self.tmp, 'stack'))
        self.addCleanup(self.stack.stop)
        self.stack.start()
        self.masakari = masakari.MasakariServer(
            os.path.join(self.tmp, 'masakari'), self.stack.keystone,
            'sqlite:///%s' % os.path.join(self.tmp, 'masakari.sqlite'),
            self.broker.url,
            evacuate_all_instances=self.evacuate_all_instances)
        self.addCleanup(self.masakari.stop)
        self.masakari.start()
