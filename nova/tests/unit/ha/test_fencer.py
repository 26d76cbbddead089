"""The fence agent run for real: only exit 0 in time counts as fenced."""

from nova.ha import fencer as fencer_mod
from nova.tests import base
from nova.tests.unit.ha import fence_agents


class TestFencer(base.TestCase):

    def test_exit_zero_fences_and_the_host_is_the_last_argument(self):
        agent, record = fence_agents.recording_agent(self.tmp)
        result = fencer_mod.Fencer(agent, timeout=10).fence('compute1')
        self.assertEqual((True, 'powered off compute1'),
                         (result.fenced, result.detail))
        self.assertEqual(['compute1'], fence_agents.fenced(record))

    def test_a_non_zero_exit_is_not_fenced(self):
        agent, record = fence_agents.recording_agent(self.tmp, exit_code=3)
        result = fencer_mod.Fencer(agent, timeout=10).fence('compute1')
        self.assertFalse(result.fenced)
        self.assertIn('exited with 3', result.detail)

    def test_no_answer_in_time_is_not_fenced(self):
        result = fencer_mod.Fencer('sleep', timeout=1).fence('30')
        self.assertFalse(result.fenced)
        self.assertIn('within 1 s', result.detail)

    def test_a_missing_agent_is_not_fenced(self):
        result = fencer_mod.Fencer(self.tmp + '/missing',
                                   timeout=1).fence('compute1')
        self.assertFalse(result.fenced)
        self.assertIn('could not run', result.detail)

    def test_a_host_name_that_reads_as_an_option_is_refused(self):
        agent, record = fence_agents.recording_agent(self.tmp)
        result = fencer_mod.Fencer(agent, timeout=10).fence('--all')
        self.assertFalse(result.fenced)
        self.assertEqual([], fence_agents.fenced(record))

    def test_without_agent_nothing_is_fenced(self):
        fencer = fencer_mod.Fencer(None, timeout=10)
        self.assertFalse(fencer.configured)
        self.assertFalse(fencer.fence('compute1').fenced)
