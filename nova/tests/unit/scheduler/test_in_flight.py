import dataclasses

from nova.scheduler import in_flight
from nova.tests import base


@dataclasses.dataclass(frozen=True)
class Host:
    host: str
    free_mb: int


def roomiest(candidate, counted_mb):
    return (counted_mb - candidate.free_mb, candidate.host)


HOSTS = [Host('b', 4096), Host('c', 4096)]


class TestInFlight(base.TestCase):

    def setUp(self):
        super().setUp()
        self.ledger = in_flight.InFlight()

    def pick(self, candidates=HOSTS, memory_mb=512):
        with self.ledger.reading() as read:
            return self.ledger.pick(read, candidates, roomiest, memory_mb)

    def test_a_claim_being_written_counts_for_the_next_pick(self):
        first, claim = self.pick()
        self.assertEqual('b', first)
        self.assertEqual('c', self.pick()[0])
        self.assertEqual(['b', 'c'],
                         [c.host for c in self.ledger.claims()])

    def test_counted_only_to_rank_the_host_stays_a_candidate(self):
        # b is the only candidate: counting a claim on it reorders
        # nothing and refuses nothing.
        self.pick(candidates=[Host('b', 512)], memory_mb=512)
        self.assertEqual('b', self.pick(candidates=[Host('b', 512)])[0])

    def test_an_ended_claim_counts_for_reads_that_began_before_its_end(self):
        with self.ledger.reading() as early:
            host, claim = self.ledger.pick(early, HOSTS, roomiest, 512)
            # Written while this read runs: the read may have missed it.
            self.ledger.done(claim)
            self.assertEqual('c', self.ledger.pick(
                early, HOSTS, roomiest, 512)[0])

    def test_an_ended_claim_does_not_count_for_later_reads(self):
        with self.ledger.reading() as early:
            host, claim = self.ledger.pick(early, HOSTS, roomiest, 512)
            self.ledger.done(claim)
            with self.ledger.reading() as late:
                # This read sees the claim in the database (b has 512 MiB
                # less); counted a second time, b would rank after c.
                self.assertEqual('b', self.ledger.pick(
                    late, [Host('b', 4096 - 512), Host('c', 3300)],
                    roomiest, 512)[0])

    def test_ended_claims_are_forgotten_once_no_earlier_read_runs(self):
        with self.ledger.reading() as early:
            host, claim = self.ledger.pick(early, HOSTS, roomiest, 512)
            self.ledger.done(claim)
            self.assertEqual([claim], self.ledger.claims())
        self.assertEqual([], self.ledger.claims())

    def test_a_claim_given_up_is_forgotten_too(self):
        host, claim = self.pick()
        self.ledger.done(claim)
        self.assertEqual([], self.ledger.claims())
        self.assertEqual('b', self.pick()[0])
