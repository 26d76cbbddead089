from nova.compute import power
from nova import exception
from nova.model import network as network_model
from nova.model import power_state
from nova.model import vm_states
from nova.tests.fixtures import compute as fixtures
from nova.virt import fake


class RecordingFakeDriver(fake.FakeDriver):
    """The fake driver, remembering the power_off arguments it got."""

    def power_off(self, instance, timeout=0, retry_interval=0):
        self.power_off_args = (timeout, retry_interval)
        super().power_off(instance, timeout, retry_interval)


class TestPower(fixtures.ComputeTestCase):

    def test_stop_then_start(self):
        instance = self.active_instance()
        self.runner.run(self.context, instance, power.STOP,
                        lambda: power.stop(self.compute, instance))
        self.assertEqual((vm_states.STOPPED, None, power_state.SHUTDOWN),
                         self.states(instance))
        self.runner.run(self.context, instance, power.START,
                        lambda: power.start(self.compute, self.context,
                                            instance))
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.states(instance))

    def test_failed_start_is_stopped_with_files_kept(self):
        instance = self.active_instance()
        self.runner.run(self.context, instance, power.STOP,
                        lambda: power.stop(self.compute, instance))
        before = self.files(instance)
        self.driver.fail_at('power_on.plug_vifs')
        self.assertRaises(exception.VirtualInterfacePlugException,
                          self.runner.run, self.context, instance,
                          power.START,
                          lambda: power.start(self.compute, self.context,
                                              instance))
        self.assertEqual((vm_states.STOPPED, None, power_state.SHUTDOWN),
                         self.states(instance))
        self.assertEqual(before, self.files(instance))

    def test_clean_shutdown_waits_for_the_guest(self):
        driver = RecordingFakeDriver(self.virtapi, self.settings)
        compute = self.compute.__class__(
            host=fixtures.HOST, settings=self.settings, driver=driver,
            virtapi=self.virtapi)
        instance = self.new_instance()
        driver.spawn(self.context, instance, {})
        power.stop(compute, instance)
        self.assertEqual((self.settings.shutdown_timeout,
                          power.SHUTDOWN_RETRY_INTERVAL),
                         driver.power_off_args)
        driver.power_on(self.context, instance, network_model.NetworkInfo())
        power.stop(compute, instance, clean_shutdown=False)
        self.assertEqual(0, driver.power_off_args[0])
