from nova import exception
from nova.tests import base


class TestMessageOf(base.TestCase):

    def test_nova_exception_gives_its_message(self):
        e = exception.InstanceNotFound(instance_id='x')
        self.assertEqual('Instance x could not be found.',
                         exception.message_of(e))

    def test_other_exceptions_give_their_text_or_class(self):
        self.assertEqual('boom', exception.message_of(RuntimeError('boom')))
        self.assertEqual('RuntimeError',
                         exception.message_of(RuntimeError()))
