"""The server view: fields by policy and microversion, faults, addresses."""

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova import exception
from nova.model import network as network_model
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import fields
from nova.tests.fixtures import database as dbf
from nova.tests.unit.api.openstack import fakes

PORT = 'a3b0c6a2-1f0e-4b8e-9c11-5d2f7e8a9b01'


class ServerViewTest(fakes.APITestCase):

    def show(self, instance, token=fakes.ADMIN_TOKEN, version=None):
        response = self.request('GET', '/v2.1/servers/%s' % instance.uuid,
                                token=token, version=version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['server']

    def test_state_fields_and_status(self):
        instance = self.make_instance(vm_state=vm_states.ACTIVE,
                                      task_state=task_states.REBOOTING_HARD)
        server = self.show(instance)
        self.assertEqual(('HARD_REBOOT', 'active', 'rebooting_hard', 1),
                         (server['status'], server['OS-EXT-STS:vm_state'],
                          server['OS-EXT-STS:task_state'],
                          server['OS-EXT-STS:power_state']))

    def test_host_attributes_for_admin_only(self):
        instance = self.make_instance()
        admin_view = self.show(instance)
        self.assertEqual(('host1', 'host1', 'instance-%s' % instance.uuid),
                         (admin_view['OS-EXT-SRV-ATTR:host'],
                          admin_view['OS-EXT-SRV-ATTR:hypervisor_hostname'],
                          admin_view['OS-EXT-SRV-ATTR:instance_name']))
        user_view = self.show(instance, token=fakes.USER_TOKEN)
        self.assertFalse([k for k in user_view
                          if k.startswith('OS-EXT-SRV-ATTR')])
        self.assertEqual(56, len(user_view['hostId']))

    def test_addresses_from_network_info(self):
        network = network_model.Network(id='n1', label='public',
                                        bridge='br0')
        instance = self.make_instance(network_info=network_model.NetworkInfo(
            [network_model.VIF(id=PORT, address='fa:16:3e:00:00:01',
                               network=network,
                               ips=('172.24.4.8', '2001:db8::9'))]))
        self.assertEqual({'public': [
            {'version': 4, 'addr': '172.24.4.8', 'OS-EXT-IPS:type': 'fixed',
             'OS-EXT-IPS-MAC:mac_addr': 'fa:16:3e:00:00:01'},
            {'version': 6, 'addr': '2001:db8::9', 'OS-EXT-IPS:type': 'fixed',
             'OS-EXT-IPS-MAC:mac_addr': 'fa:16:3e:00:00:01'}]},
            self.show(instance)['addresses'])

    def fault_of(self, instance, exc):
        """The fault ``exc`` leaves, raised on compute-17 (a host name the
        owner must never read); the server as admin and as its owner."""
        try:
            raise exc
        except exception.NovaException as e:
            objects.InstanceFault.create(self.ctx, instance.uuid, e,
                                         'compute-17')
        return (self.show(instance)['fault'],
                self.show(instance, token=fakes.USER_TOKEN)['fault'])

    def test_fault_of_an_error_server(self):
        instance = self.make_instance(vm_state=vm_states.ERROR)
        admin, owner = self.fault_of(
            instance, exception.InstancePowerOnFailure(
                reason='disk full on compute-17'))
        self.assertEqual((500, 'Failed to power on instance: disk full on '
                               'compute-17'),
                         (admin['code'], admin['message']))
        self.assertIn('Traceback', admin['details'])
        self.assertEqual({'code': 500, 'created': admin['created'],
                          'message': 'The server could not be powered on.'},
                         owner)

    def test_a_refusal_shows_the_owner_no_host_path_or_traceback(self):
        # A 4xx: Nova showed its traceback to the owner; no more, and the
        # operator's message (whom to fence, which path) is theirs alone.
        instance = self.make_instance(vm_state=vm_states.ERROR)
        admin, owner = self.fault_of(instance, exception.DiskLeaseHeld(
            disk='/var/lib/nova/instances/%s/disk' % instance.uuid,
            holder='compute-17', reason='lock held'))
        self.assertEqual(409, admin['code'])
        self.assertTrue(admin['message'].startswith(
            'disk in use by another host: fence compute-17 first'))
        self.assertIn('/var/lib/nova/instances', admin['message'])
        self.assertNotIn('details', admin)
        self.assertEqual({'code': 409, 'created': admin['created'],
                          'message': exception.DiskLeaseHeld.safe_msg},
                         owner)

    def test_an_old_fault_shows_the_owner_the_sentence_of_its_code(self):
        # Written before 0009: no owner's sentence, a traceback for a 409.
        instance = self.make_instance(vm_state=vm_states.ERROR)
        with db_api.session() as session:
            session.execute(sa.insert(models.InstanceFault).values(
                instance_uuid=instance.uuid, code=409,
                message='fence compute-17 first', details='Traceback ...',
                host='compute-17', created_at=fields.utcnow()))
        owner = self.show(instance, token=fakes.USER_TOKEN)['fault']
        self.assertEqual((409, exception.safe_message_for_code(409)),
                         (owner['code'], owner['message']))
        self.assertNotIn('details', owner)
        admin = self.show(instance)['fault']
        self.assertEqual(('fence compute-17 first', 'Traceback ...'),
                         (admin['message'], admin['details']))

    def test_no_fault_unless_error(self):
        instance = self.make_instance()
        objects.InstanceFault.create(self.ctx, instance.uuid,
                                     RuntimeError('old'), 'host1')
        self.assertNotIn('fault', self.show(instance))

    def test_flavor_by_microversion(self):
        instance = self.make_instance()
        self.assertEqual('1', self.show(instance)['flavor']['id'])
        flavor = self.show(instance, version='2.47')['flavor']
        self.assertEqual(('m1.tiny', 512, 1, 1),
                         (flavor['original_name'], flavor['ram'],
                          flavor['vcpus'], flavor['disk']))
        self.assertNotIn('id', flavor)

    def test_fields_added_by_microversions(self):
        instance = self.make_instance()
        base = self.show(instance)
        for key in ('locked', 'description', 'tags', 'host_status'):
            self.assertNotIn(key, base)
        latest = self.show(instance, version='latest')
        self.assertEqual((False, None, [], 'UP'),
                         (latest['locked'], latest['description'],
                          latest['tags'], latest['host_status']))

    def test_host_status(self):
        instance = self.make_instance()
        self.set_down(self.host1)
        self.assertEqual('DOWN', self.show(instance,
                                           version='2.16')['host_status'])
        self.host1.heartbeat()
        self.host1.disabled = True
        self.host1.save()
        self.assertEqual('MAINTENANCE', self.show(
            instance, version='2.16')['host_status'])
        self.assertNotIn('host_status', self.show(
            instance, token=fakes.USER_TOKEN, version='2.16'))

    def test_host_status_of_one_server_reads_its_hosts_service_only(self):
        instance = self.make_instance()
        with dbf.recorded_statements() as statements:
            self.assertEqual('UP', self.show(
                instance, version='2.16')['host_status'])
        reads = [s for s in statements if 'FROM services' in s]
        self.assertEqual(1, len(reads), reads)
        self.assertIn('services.host =', reads[0])

    def test_host_status_of_a_host_without_service(self):
        instance = self.make_instance()
        with db_api.session() as session:
            session.execute(sa.update(models.Instance).where(
                models.Instance.uuid == instance.uuid).values(
                    host='gone', node='gone'))
        self.assertEqual('UNKNOWN', self.show(
            instance, version='2.16')['host_status'])


class ServerViewFrom254Test(fakes.APITestCase):
    """The fields of server details added from 2.54 to 2.95."""

    def setUp(self):
        super().setUp()
        self.instance = self.make_instance(name='web-1')

    def show(self, version, token=fakes.ADMIN_TOKEN):
        response = self.request('GET', '/v2.1/servers/%s'
                                % self.instance.uuid, token=token,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['server']

    def listed(self, version, token=fakes.USER_TOKEN):
        response = self.request('GET', '/v2.1/servers/detail', token=token,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        (server,) = response.json['servers']
        return server

    def test_trusted_image_certificates_from_263(self):
        self.assertNotIn('trusted_image_certificates', self.show('2.62'))
        self.assertIsNone(self.show('2.63')['trusted_image_certificates'])
        self.assertIsNone(self.listed('2.63')['trusted_image_certificates'])

    def test_server_groups_in_show_only_from_271(self):
        self.assertNotIn('server_groups', self.show('2.70'))
        self.assertEqual([], self.show('2.71')['server_groups'])
        self.assertNotIn('server_groups', self.listed('2.71'))

    def test_locked_reason_from_273(self):
        self.assertNotIn('locked_reason', self.show('2.72'))
        for server in (self.show('2.73'), self.listed('2.73')):
            self.assertEqual((False, None), (server['locked'],
                                             server['locked_reason']))

    def test_hostname_for_every_user_from_290(self):
        self.assertNotIn('OS-EXT-SRV-ATTR:hostname',
                         self.show('2.89', token=fakes.USER_TOKEN))
        for server in (self.show('2.90', token=fakes.USER_TOKEN),
                       self.listed('2.90', token=fakes.USER_TOKEN)):
            self.assertEqual('web-1', server['OS-EXT-SRV-ATTR:hostname'])
            # Only the hostname: the other attributes stay admin-only.
            self.assertEqual(['OS-EXT-SRV-ATTR:hostname'],
                             [k for k in server
                              if k.startswith('OS-EXT-SRV-ATTR')])
        self.assertEqual('web-1',
                         self.show('2.90')['OS-EXT-SRV-ATTR:hostname'])
