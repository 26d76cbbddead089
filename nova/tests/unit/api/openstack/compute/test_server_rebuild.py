"""The rebuild action through the API: what is cast, what the row and the
metadata hold, and the keys answered by microversion."""

from nova.compute import rebuild_request
from nova.model import task_states
from nova.model import vm_states
from nova.objects import flavor_catalog
from nova.objects import instance_metadata as metadata_obj
from nova.objects import keypair as keypair_obj
from nova.tests.unit.api.openstack.compute import test_server_update
from nova.tests.unit.api.openstack import fakes

ALT = fakes.image_meta.ImageMeta(id='0b9cc4bd-2d47-4d3b-97e0-2b1c1f6f4a41',
                                 name='alt', disk_format='qcow2', size=1024)


class RebuildTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.images.images[ALT.id] = ALT
        self.instance = self.make_instance(name='before')
        metadata_obj.InstanceMetadata.replace(self.ctx, self.instance.uuid,
                                              {'old': '1'})

    def rebuild(self, version=None, token=fakes.USER_TOKEN, **argument):
        argument.setdefault('imageRef', ALT.id)
        return self.action(self.instance, {'rebuild': argument},
                           version=version, token=token)

    def test_rebuild_is_cast_with_the_new_image_and_fields_set(self):
        response = self.rebuild(name='after', metadata={'rebuild': 'server'},
                                accessIPv4='192.0.2.9', adminPass='pw')
        self.assertEqual(202, response.status_int, response.text)
        server = response.json['server']
        self.assertEqual((ALT.id, 'after', {'rebuild': 'server'}, 'REBUILD'),
                         (server['image']['id'], server['name'],
                          server['metadata'], server['status']))
        self.assertEqual('pw', server['adminPass'])
        row = self.reload(self.instance)
        self.assertEqual(('after', '192.0.2.9', task_states.REBUILDING),
                         (row.display_name, row.access_ip_v4,
                          row.task_state))
        # The instance records the new image when the rebuild lands.
        self.assertEqual(fakes.IMAGE.id, row.image_ref)
        self.assertEqual({'rebuild': 'server'},
                         metadata_obj.InstanceMetadata.get(self.ctx, row.uuid))
        name, _args, kwargs = self.compute_rpc.casts[-1]
        self.assertEqual('rebuild_instance', name)
        self.assertEqual(rebuild_request.RebuildRequest(
            recreate=False, image_ref=ALT.id), kwargs['request'])
        self.assertEqual('host1', kwargs['host'])

    def test_disk_config_is_recorded_and_answered(self):
        response = self.rebuild(**{'OS-DCF:diskConfig': 'AUTO'})
        self.assertEqual(202, response.status_int, response.text)
        self.assertEqual('AUTO',
                         response.json['server']['OS-DCF:diskConfig'])
        self.assertTrue(self.reload(self.instance).auto_disk_config)
        self._idle()
        # A rebuild that names none keeps what the server had.
        response = self.rebuild()
        self.assertEqual('AUTO',
                         response.json['server']['OS-DCF:diskConfig'])
        self._idle()
        response = self.rebuild(**{'OS-DCF:diskConfig': 'MANUAL'})
        self.assertEqual('MANUAL',
                         response.json['server']['OS-DCF:diskConfig'])
        self.assertFalse(self.reload(self.instance).auto_disk_config)

    def test_bad_disk_config_is_400_and_changes_nothing(self):
        for value in ('auto', 'NONE', '', None, 1):
            with self.subTest(value=value):
                self.assertFault(self.rebuild(
                    name='x', **{'OS-DCF:diskConfig': value}), 400,
                    'badRequest', 'OS-DCF:diskConfig')
        self._assert_untouched()
        self.assertFalse(self.reload(self.instance).auto_disk_config)

    def test_fields_of_later_microversions(self):
        keypair_obj.KeyPair(name='k', user_id='alice', fingerprint='f',
                            public_key='ssh-rsa AAAA').create()
        response = self.rebuild(version='2.57', description='d',
                                key_name='k', user_data='aGVsbG8=')
        self.assertEqual(202, response.status_int, response.text)
        server = response.json['server']
        self.assertEqual(('d', 'k', 'aGVsbG8='),
                         (server['description'], server['key_name'],
                          server['user_data']))
        row = self.reload(self.instance)
        self.assertEqual(('d', 'k', 'aGVsbG8='),
                         (row.display_description, row.key_name,
                          row.user_data))

    def test_keys_by_microversion(self):
        base = test_server_update.CHANGED_KEYS | {'adminPass'}
        for version, extra in (('2.1', set()),
                               ('2.54', {'key_name'}),
                               ('2.57', {'key_name', 'user_data'})):
            with self.subTest(version=version):
                self._idle()
                response = self.rebuild(version=version)
                self.assertEqual(202, response.status_int, response.text)
                keys = set(response.json['server'])
                self.assertTrue(base | extra <= keys, keys)
                self.assertFalse({'OS-EXT-STS:vm_state', 'config_drive',
                                  'OS-EXT-SRV-ATTR:host'} & keys)
        self._idle()
        show = self.request('GET', '/v2.1/servers/%s' % self.instance.uuid,
                            version='2.75').json['server']
        self._idle()
        response = self.rebuild(version='2.75', token=fakes.ADMIN_TOKEN)
        expected = (set(show) - {'OS-EXT-SRV-ATTR:user_data'}) | {
            'user_data', 'adminPass'}
        self.assertEqual(expected, set(response.json['server']))

    def _idle(self):
        row = self.reload(self.instance)
        row.task_state = None
        row.save()

    def test_bad_requests_change_nothing(self):
        for argument, version, status in (
                ({'imageRef': 'not-a-uuid'}, None, 400),
                ({'imageRef': '3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'},
                 None, 400),
                ({'imageRef': fakes.KERNEL.id}, None, 400),
                ({'name': ''}, None, 400),
                ({'metadata': {'k' * 256: 'v'}}, None, 400),
                ({'description': 'd'}, '2.18', 400),
                ({'key_name': 'nope'}, '2.54', 400),
                ({'user_data': 'not base64!'}, '2.57', 400),
                ({'personality': []}, None, 400),
                ({'unknown': 1}, None, 400)):
            with self.subTest(argument=argument, version=version):
                self.assertFault(
                    self.rebuild(version=version, **argument), status,
                    'badRequest')
        self._assert_untouched()

    def test_preserve_ephemeral_with_an_ephemeral_disk_is_refused(self):
        flavor = flavor_catalog.create(self.ctx, '2', 'eph', 512, 1, 1,
                                       ephemeral_gb=1)
        self.instance.flavor = flavor
        self.instance.save()
        self.assertFault(self.rebuild(preserve_ephemeral=True, name='x'),
                         400, 'badRequest', 'preserve_ephemeral')
        self._assert_untouched()
        # Without an ephemeral disk there is nothing to keep.
        self.instance.flavor = self.flavor
        self.instance.save()
        self.assertEqual(202, self.rebuild(
            preserve_ephemeral=True).status_int)

    def test_invalid_state_is_409_and_changes_nothing(self):
        self.instance.vm_state = vm_states.SUSPENDED
        self.instance.save()
        self.assertFault(self.rebuild(name='x', metadata={}), 409,
                         'conflictingRequest')
        self._assert_untouched(vm_state=vm_states.SUSPENDED)

    def _assert_untouched(self, vm_state=vm_states.ACTIVE):
        row = self.reload(self.instance)
        self.assertEqual(('before', vm_state, None, fakes.IMAGE.id),
                         (row.display_name, row.vm_state, row.task_state,
                          row.image_ref))
        self.assertEqual({'old': '1'},
                         metadata_obj.InstanceMetadata.get(self.ctx, row.uuid))
        self.assertEqual([], self.compute_rpc.casts)
