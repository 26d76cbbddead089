"""What may happen to an instance directory, from its stamp and the
storage evidence: every row of the decision, as the module lists it."""

from nova.compute import disk_ownership as do
from nova.tests import base
from nova.virt import ownership

X = '11111111-1111-4111-8111-111111111111'
Y = '22222222-2222-4222-8222-222222222222'
UUID = '33333333-3333-4333-8333-333333333333'


def stamp(host, identity=X):
    return ownership.OwnerStamp.new(UUID, host, identity, 'build',
                                    '44444444-4444-4444-8444-444444444444')


def target(shared, stamped, exists=True, launched=True, identity=X):
    return do.on_target(instance_launched=launched, shared=shared,
                        source='a', host='b', identity=identity,
                        stamp=stamped, directory_exists=exists,
                        path='/srv/instances/' + UUID)


class TestOnTarget(base.TestCase):

    def test_not_shared_nothing_there_builds(self):
        self.assertEqual(do.BUILD, target(False, None, exists=False).action)

    def test_not_shared_own_leftover_is_quarantined(self):
        self.assertEqual(do.QUARANTINE, target(False, stamp('b')).action)

    def test_not_shared_anything_else_is_refused(self):
        for stamped in (None, stamp('a', Y), stamp('b', Y), stamp('c', Y)):
            verdict = target(False, stamped)
            self.assertEqual(do.REFUSE, verdict.action, stamped)
            self.assertIn('nothing touched', verdict.reason)

    def test_not_shared_but_the_source_wrote_it_on_this_storage(self):
        # The boot-order race: a's recorded identity is stale, but a
        # stamped the directory on b's very storage.
        verdict = target(False, stamp('a', X))
        self.assertEqual(do.REFUSE, verdict.action)
        self.assertIn('evidently shared', verdict.reason)
        self.assertIn('record-storage-identity a --from /srv/instances',
                      verdict.reason)

    def test_shared_stamped_by_the_source_is_reused(self):
        self.assertEqual(do.REUSE, target(True, stamp('a')).action)
        self.assertEqual(do.REUSE, target(True, stamp('a', None)).action)
        self.assertEqual(do.REUSE, target(True, None).action)

    def test_shared_old_copies_are_refused(self):
        # Another host's stamp, or one written on other storage: a copy
        # restored from a backup, or markers cloned between hosts.
        for stamped in (stamp('b'), stamp('c'), stamp('a', Y)):
            verdict = target(True, stamped)
            self.assertEqual(do.REFUSE, verdict.action, stamped)
            self.assertIn('old copy', verdict.reason)

    def test_shared_missing_directory(self):
        self.assertEqual(do.BUILD, target(True, None, exists=False,
                                          launched=False).action)
        verdict = target(True, None, exists=False, launched=True)
        self.assertEqual(do.REFUSE, verdict.action)
        self.assertIn('cloned', verdict.reason)


class TestOnSource(base.TestCase):

    def source(self, shared, stamped, exists=True, identity=X):
        return do.on_source(host='a', identity=identity, shared=shared,
                            stamp=stamped, directory_exists=exists,
                            owner='b')

    def test_own_copy_not_shared_is_quarantined(self):
        self.assertEqual(do.QUARANTINE,
                         self.source(False, stamp('a')).action)

    def test_everything_else_is_kept(self):
        for shared, stamped, identity in (
                (False, stamp('b'), X),       # the new owner's (mirror)
                (False, None, X),             # no stamp
                (False, stamp('a', Y), X),    # other storage
                (False, stamp('a'), None),    # own identity unknown
                (True, stamp('a'), X),        # identities say shared
                (None, stamp('a'), X)):       # unknown
            self.assertEqual(do.KEEP, self.source(shared, stamped,
                                                  identity=identity).action,
                             (shared, stamped, identity))
        self.assertEqual(do.KEEP, self.source(False, None,
                                              exists=False).action)
