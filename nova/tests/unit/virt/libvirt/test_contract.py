"""LibvirtDriver on libvirt's test driver, against the shared contract."""

import itertools
import os

from nova.model import power_state
from nova.tests import base
from nova.tests.fixtures import driver_contract as contract
from nova.tests.fixtures import libvirt_host as fixtures


class LibvirtDriverHooks:
    """The contract's hooks for ``LibvirtDriver`` on the test driver."""

    _hosts = itertools.count(1)

    _store = None

    def make_driver(self, instances_path=None):
        if self._store is None:
            # The contract spawns image_meta {'id': 'cirros'}; the driver
            # finds it by name in the store all simulated hosts share.
            self._store = fixtures.make_image_store(self.tmp)
            fixtures.add_disk_image(self._store, self.tmp, name='cirros')
        name = 'libvirt%d' % next(self._hosts)
        host = fixtures.make_host(
            self.tmp, name, instances_path=instances_path,
            image_store_path=self._store.path, bridges=(contract.BRIDGE,),
            virtapi=self.virtapi, connect=False)
        self.addCleanup(host.close)
        return host.driver, host.settings

    def artefacts(self, instance, driver=None):
        driver = driver or self.driver
        guest = driver.host.find_guest(instance.uuid)
        path = os.path.join(driver.settings.instances_path, instance.uuid)
        return contract.Artefacts(
            domain_defined=guest is not None,
            running=(guest is not None
                     and guest.get_power_state() == power_state.RUNNING),
            vifs=frozenset(driver.plugged_vif_ids(instance.uuid)),
            instance_dir_exists=os.path.isdir(path),
            files=contract.files_of(path))

    def break_vif_plugging(self, driver=None):
        # The simulated host loses the bridge the contract's port needs.
        (driver or self.driver).vif_driver.bridges.discard(contract.BRIDGE)

    def fix_vif_plugging(self, driver=None):
        (driver or self.driver).vif_driver.bridges.add(contract.BRIDGE)


class TestLibvirtDriverContract(LibvirtDriverHooks,
                                contract.DriverContractTests,
                                base.TestCase):
    pass
