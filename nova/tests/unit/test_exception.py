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


def _project_exceptions():
    return [value for value in vars(exception).values()
            if isinstance(value, type)
            and issubclass(value, exception.NovaException)]


class TestSafeMessageOf(base.TestCase):
    """What a server's owner reads instead of the operator's message."""

    # Raised by the workflows that record faults and action events
    # (record_fault, end_evacuation, InstanceFault.create): each says in
    # its own words what failed, naming no host, path or storage identity.
    RECORDED = (
        'DiskLeaseHeld', 'InvalidSharedStorage', 'StorageUnavailable',
        'StorageEvidenceStale', 'InvalidOwnershipStamp',
        'OperationInterrupted', 'VirtualInterfaceCreateException',
        'VirtualInterfacePlugException', 'ImageNotFound',
        'InstancePowerOnFailure', 'InstancePowerOffFailure', 'DiskNotFound',
        'InstanceInvalidState', 'NoValidHost',
        'HypervisorUnavailable', 'InvalidStorageIdentity', 'InvalidJournal',
        'UnknownDiskFormat', 'QuarantineUnusable', 'InstanceNotOnThisHost',
        'AttemptSuperseded', 'AttemptCheckFailed', 'InstanceEventsCancelled',
        'ComputeServiceStillUp')

    def test_the_recorded_exceptions_have_their_own_sentence(self):
        missing = [name for name in self.RECORDED
                   if 'safe_msg' not in vars(getattr(exception, name))]
        self.assertEqual([], missing)

    def test_sentences_are_never_filled_from_values(self):
        for cls in _project_exceptions():
            with self.subTest(cls=cls.__name__):
                if cls.safe_msg is not None:
                    self.assertNotIn('%', cls.safe_msg)
                    self.assertTrue(cls.safe_msg.endswith('.'))
                    self.assertLessEqual(len(cls.safe_msg), 255)

    def test_the_owner_never_reads_the_hosts_or_paths(self):
        # A host can be named anything ("a" is a word of many sentences):
        # the sentence is the class's, whatever the values were.
        cases = [
            exception.DiskLeaseHeld(disk='/srv/i/x/disk', holder='cmp-17',
                                    reason='locked by cmp-17'),
            exception.InvalidSharedStorage(
                reason='target host cmp-17 has /srv/i/x'),
            exception.StorageEvidenceStale(host='cmp-17', live='id-1',
                                           recorded='id-2', path='/srv/i'),
            exception.OperationInterrupted(operation='rebuild',
                                           host='cmp-17',
                                           power_state='running'),
            exception.InvalidOwnershipStamp(path='/srv/i/x/.owner',
                                            reason='written by cmp-17'),
        ]
        for exc in cases:
            with self.subTest(exc=type(exc).__name__):
                safe = exception.safe_message_of(exc)
                self.assertEqual(type(exc).safe_msg, safe)
                self.assertIn('cmp-17', exception.message_of(exc))
                for value in ('/srv', 'id-1', 'cmp-17'):
                    self.assertNotIn(value, safe)

    def test_without_a_sentence_the_code_decides(self):
        self.assertEqual(exception.safe_message_for_code(409),
                         exception.safe_message_of(
                             exception.Conflict(reason='on compute-17')))
        self.assertEqual(exception.safe_message_for_code(400),
                         exception.safe_message_of(
                             exception.InvalidInput(reason='x')))
        self.assertEqual(exception.GENERIC_SAFE_MESSAGE,
                         exception.safe_message_of(
                             exception.InternalError(err='compute-17')))

    def test_other_exceptions_get_the_generic_sentence(self):
        for exc in (RuntimeError('compute-17 /srv/i'), OSError(),
                    KeyError('a')):
            with self.subTest(exc=exc):
                self.assertEqual(exception.GENERIC_SAFE_MESSAGE,
                                 exception.safe_message_of(exc))

    def test_code_of(self):
        class WithCode(Exception):
            code = 'EACCES'

        self.assertEqual(404, exception.code_of(
            exception.InstanceNotFound(instance_id='x')))
        self.assertEqual(500, exception.code_of(RuntimeError()))
        self.assertEqual(500, exception.code_of(WithCode()))
