"""/servers: list, show, create, delete against the real compute API."""

import dataclasses
import datetime

import sqlalchemy as sa

from nova.db import api as db_api
from nova.db import models
from nova.model import network as network_model
from nova.model import task_states
from nova.model import vm_states
from nova import objects
from nova.objects import instance_metadata as metadata_obj
from nova.tests.fixtures import database as dbf
from nova.tests.unit.api.openstack import fakes

NETWORK = '9d3c2a4e-8b7f-4e21-a0c5-6f1e2d3c4b5a'


class ListTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.mine = self.make_instance(name='web-1')
        self.stopped = self.make_instance(name='db-1',
                                          vm_state=vm_states.STOPPED,
                                          power_state=4, host='host2')
        self.other = self.make_instance(name='other', project_id='p2',
                                        user_id='bob')

    def ids(self, response):
        self.assertEqual(200, response.status_int, response.text)
        return {s['id'] for s in response.json['servers']}

    def test_user_sees_own_project_only(self):
        self.assertEqual({self.mine.uuid, self.stopped.uuid}, self.ids(
            self.request('GET', '/v2.1/servers', token=fakes.USER_TOKEN)))

    def test_user_cannot_list_all_tenants(self):
        self.assertFault(self.request('GET', '/v2.1/servers?all_tenants=1',
                                      token=fakes.USER_TOKEN), 403,
                         'forbidden')

    def test_admin_lists_all_tenants_and_filters_by_host(self):
        self.assertEqual(
            {self.mine.uuid, self.stopped.uuid, self.other.uuid},
            self.ids(self.request('GET', '/v2.1/servers?all_tenants=1')))
        self.assertEqual({self.stopped.uuid}, self.ids(self.request(
            'GET', '/v2.1/servers/detail?all_tenants=1&host=host2')))

    def test_host_filter_is_ignored_for_users(self):
        self.assertEqual({self.mine.uuid, self.stopped.uuid}, self.ids(
            self.request('GET', '/v2.1/servers?host=host2',
                         token=fakes.USER_TOKEN)))

    def test_status_and_name_filters(self):
        self.assertEqual({self.stopped.uuid}, self.ids(self.request(
            'GET', '/v2.1/servers?status=SHUTOFF', token=fakes.USER_TOKEN)))
        self.assertEqual({self.mine.uuid}, self.ids(self.request(
            'GET', '/v2.1/servers?name=^web', token=fakes.USER_TOKEN)))

    def test_unknown_status_empty_before_238_and_400_after(self):
        self.assertEqual(set(), self.ids(self.request(
            'GET', '/v2.1/servers?status=BOGUS', token=fakes.USER_TOKEN)))
        self.assertFault(self.request('GET', '/v2.1/servers?status=BOGUS',
                                      token=fakes.USER_TOKEN,
                                      version='2.38'), 400, 'badRequest')

    def test_invalid_name_regex_is_400(self):
        self.assertFault(self.request('GET', '/v2.1/servers?name=(',
                                      token=fakes.USER_TOKEN), 400,
                         'badRequest')

    def test_basic_view_and_newest_first(self):
        response = self.request('GET', '/v2.1/servers',
                                token=fakes.USER_TOKEN)
        servers = response.json['servers']
        self.assertEqual([self.stopped.uuid, self.mine.uuid],
                         [s['id'] for s in servers])
        self.assertEqual({'id', 'name', 'links'}, set(servers[0]))

    def test_limit_and_marker(self):
        first = self.request('GET', '/v2.1/servers?limit=1',
                             token=fakes.USER_TOKEN).json['servers']
        self.assertEqual([self.stopped.uuid], [s['id'] for s in first])
        rest = self.request('GET', '/v2.1/servers?marker=%s'
                            % self.stopped.uuid,
                            token=fakes.USER_TOKEN).json['servers']
        self.assertEqual([self.mine.uuid], [s['id'] for s in rest])
        self.assertFault(self.request('GET', '/v2.1/servers?limit=x',
                                      token=fakes.USER_TOKEN), 400,
                         'badRequest')

    def test_a_full_page_links_to_the_next(self):
        for path in ('/v2.1/servers', '/v2.1/servers/detail'):
            with self.subTest(path=path):
                body = self.request('GET', path + '?limit=1',
                                    token=fakes.USER_TOKEN).json
                (link,) = body['servers_links']
                self.assertEqual('next', link['rel'])
                self.assertIn(path + '?limit=1&marker=%s'
                              % self.stopped.uuid, link['href'])
                # The last page is not full: no link.
                last = self.request('GET', path + '?limit=5',
                                    token=fakes.USER_TOKEN).json
                self.assertNotIn('servers_links', last)

    def _give_addresses(self, instance, *ips):
        instance.network_info = network_model.NetworkInfo([
            network_model.VIF(id='vif-%s' % instance.uuid,
                              address='fa:16:3e:00:00:01',
                              network=network_model.Network(
                                  NETWORK, 'private', 'br0'),
                              ips=tuple(ips))])
        instance.save()

    def test_ip_and_ip6_filters(self):
        self._give_addresses(self.mine, '10.0.0.15', 'fd00::15')
        self._give_addresses(self.stopped, '10.0.1.5', 'fd00::1:5')

        def found(query, version=None, token=fakes.USER_TOKEN):
            return self.ids(self.request('GET', '/v2.1/servers?' + query,
                                         token=token, version=version))
        # A regular expression matched from the start of an address.
        self.assertEqual({self.mine.uuid, self.stopped.uuid},
                         found('ip=10.0.'))
        self.assertEqual({self.mine.uuid}, found('ip=10.0.0.1'))
        self.assertEqual({self.stopped.uuid}, found(r'ip=10\.0\.1\.'))
        self.assertEqual(set(), found('ip=0.0.15'))
        # ip looks at IPv4 addresses only, ip6 at IPv6 ones only.
        self.assertEqual(set(), found('ip=fd00'))
        self.assertEqual({self.stopped.uuid},
                         found('ip6=fd00::1:', version='2.5'))
        self.assertEqual(set(), found('ip6=10.0.', version='2.5'))
        # ip6 is for administrators below 2.5: ignored for users there.
        self.assertEqual({self.mine.uuid, self.stopped.uuid},
                         found('ip6=fd00::1:', version='2.4'))
        self.assertEqual({self.stopped.uuid},
                         found('all_tenants=1&ip6=fd00::1:', version='2.4',
                               token=fakes.ADMIN_TOKEN))
        # Known from 2.75, when unknown parameters are refused.
        self.assertEqual({self.mine.uuid},
                         found('ip=10.0.0.15&ip6=fd00::15', version='2.75'))

    def test_invalid_ip_regex_is_400(self):
        for query in ('ip=(', 'ip6=['):
            with self.subTest(query=query):
                self.assertFault(self.request(
                    'GET', '/v2.1/servers?' + query, token=fakes.USER_TOKEN,
                    version='2.5'), 400, 'badRequest')

    def test_deleted_servers_for_admin(self):
        self.mine.destroy()
        self.assertEqual({self.mine.uuid}, self.ids(self.request(
            'GET', '/v2.1/servers?all_tenants=1&deleted=true')))


class ShowTest(fakes.APITestCase):

    def test_show(self):
        instance = self.make_instance()
        response = self.request('GET', '/v2.1/servers/%s' % instance.uuid,
                                token=fakes.USER_TOKEN)
        self.assertEqual(200, response.status_int)
        server = response.json['server']
        self.assertEqual((instance.uuid, 'vm1', 'ACTIVE'),
                         (server['id'], server['name'], server['status']))

    def test_one_server_is_read_in_one_transaction(self):
        # The server, its metadata, its host's service (host_status) and
        # zone: one BEGIN and COMMIT for the four reads.
        instance = self.make_instance()
        metadata_obj.InstanceMetadata.replace(self.ctx, instance.uuid,
                                              {'role': 'web'})
        with dbf.recorded_transactions() as transactions:
            with dbf.recorded_statements() as statements:
                response = self.request(
                    'GET', '/v2.1/servers/%s' % instance.uuid,
                    version='2.16')
        server = response.json['server']
        self.assertEqual(({'role': 'web'}, 'UP'),
                         (server['metadata'], server['host_status']))
        self.assertEqual(1, len(transactions), transactions)
        for table in ('instances', 'instance_metadata', 'services',
                      'aggregate_hosts'):
            self.assertTrue(any('FROM %s' % table in s for s in statements),
                            table)

    def test_servers_in_detail_are_read_in_one_transaction(self):
        for name in ('web-1', 'web-2'):
            instance = self.make_instance(name=name)
            metadata_obj.InstanceMetadata.replace(self.ctx, instance.uuid,
                                                  {'name': name})
        with dbf.recorded_transactions() as transactions:
            response = self.request('GET', '/v2.1/servers/detail'
                                    '?all_tenants=1',
                                    version='2.16')
        self.assertEqual(
            [('web-1', {'name': 'web-1'}, 'UP'),
             ('web-2', {'name': 'web-2'}, 'UP')],
            sorted((s['name'], s['metadata'], s['host_status'])
                   for s in response.json['servers']))
        self.assertEqual(1, len(transactions), transactions)

    def test_unknown_invalid_and_foreign_servers_are_404(self):
        other = self.make_instance(project_id='p2')
        for server_id in ('3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c', 'nope',
                          '%252e%252e', other.uuid.upper(), other.uuid):
            with self.subTest(server_id=server_id):
                self.assertFault(self.request(
                    'GET', '/v2.1/servers/%s' % server_id,
                    token=fakes.USER_TOKEN), 404, 'itemNotFound')


class CreateTest(fakes.APITestCase):

    def body(self, **changes):
        server = {'name': 'new-vm', 'imageRef': fakes.IMAGE.id,
                  'flavorRef': '1'}
        server.update(changes)
        return {'server': server}

    def create(self, body, **kwargs):
        return self.request('POST', '/v2.1/servers', body,
                            token=fakes.USER_TOKEN, **kwargs)

    def test_create(self):
        response = self.create(self.body(min_count=1, max_count=1))
        self.assertEqual(202, response.status_int, response.text)
        server = response.json['server']
        instance = self.reload(objects.Instance(self.ctx, uuid=server['id']))
        self.assertEqual(('new-vm', 'demo', vm_states.BUILDING),
                         (instance.display_name, instance.project_id,
                          instance.vm_state))
        self.assertEqual(response.headers['Location'],
                         server['links'][0]['href'])
        self.assertEqual(['build_and_run_instance'],
                         self.compute_rpc.methods())

    def test_an_image_needing_more_than_the_flavor_is_refused(self):
        # The flavor has 512 MiB and a 1 GiB root disk.
        for needs, message in (
                (dict(min_ram=1024), "Flavor's memory is too small"),
                (dict(min_disk=2), "Flavor's disk is too small")):
            with self.subTest(needs=needs):
                image = dataclasses.replace(
                    fakes.IMAGE, id='6c1a3f0e-7d1b-4c2a-9e5f-0a1b2c3d4e5f',
                    **needs)
                self.images.images[image.id] = image
                response = self.create(self.body(imageRef=image.id))
                self.assertIn(message, self.assertFault(response, 400,
                                                        'badRequest'))
                self.assertEqual([], objects.Instance.get_all(
                    self.ctx, include_deleted=True))
                self.assertEqual([], self.compute_rpc.methods())
        image = dataclasses.replace(
            fakes.IMAGE, id='6c1a3f0e-7d1b-4c2a-9e5f-0a1b2c3d4e5f',
            min_ram=512, min_disk=1)
        self.images.images[image.id] = image
        self.assertEqual(202, self.create(
            self.body(imageRef=image.id)).status_int)

    def test_create_with_the_image_as_local_root_disk_mapping(self):
        # What python-openstackclient sends with every image boot.
        root = {'uuid': fakes.IMAGE.id, 'boot_index': 0,
                'source_type': 'image', 'destination_type': 'local',
                'delete_on_termination': True}
        response = self.create(self.body(block_device_mapping_v2=[root]))
        self.assertEqual(202, response.status_int, response.text)
        instance = self.reload(objects.Instance(
            self.ctx, uuid=response.json['server']['id']))
        self.assertEqual(fakes.IMAGE.id, instance.image_ref)

    def test_create_with_any_other_mapping_is_refused(self):
        root = {'uuid': fakes.IMAGE.id, 'boot_index': 0,
                'source_type': 'image', 'destination_type': 'local'}
        volume = dict(root, source_type='volume', destination_type='volume')
        other_image = dict(root, uuid=fakes.KERNEL.id)
        for mappings in ([volume], [other_image], [root, root],
                         [dict(root, boot_index=1)]):
            with self.subTest(mappings=mappings):
                response = self.create(self.body(
                    block_device_mapping_v2=mappings))
                self.assertFault(response, 400, 'badRequest')
        self.assertEqual([], objects.Instance.get_all(self.ctx))

    def test_create_on_a_network(self):
        network = objects.Network(self.ctx, uuid=NETWORK, name='public',
                                  bridge='br0').create()
        response = self.create(self.body(networks=[{'uuid': network.uuid}]))
        self.assertEqual(202, response.status_int, response.text)
        instance = self.reload(objects.Instance(
            self.ctx, uuid=response.json['server']['id']))
        (vif,) = instance.network_info
        self.assertEqual('public', vif.network.label)
        self.assertEqual([vif.id], [p.uuid for p in
                                    objects.Port.get_by_instance_uuid(
                                        self.ctx, instance.uuid)])

    def test_a_create_reads_its_network_once(self):
        # Checked to exist before anything is created, then handed on as
        # read: neither the create nor its ports read it again.
        network = objects.Network(self.ctx, uuid=NETWORK, name='public',
                                  bridge='br0').create()
        with dbf.recorded_statements() as statements:
            self.created(self.create(self.body(
                networks=[{'uuid': network.uuid}])))
        reads = [s for s in statements
                 if s.lstrip().startswith('SELECT') and ' networks' in s]
        self.assertEqual(1, len(reads), reads)

    def created(self, response):
        self.assertEqual(202, response.status_int, response.text)
        return self.reload(objects.Instance(
            self.ctx, uuid=response.json['server']['id']))

    def test_the_only_network_is_chosen_automatically(self):
        objects.Network(self.ctx, uuid=NETWORK, name='public',
                        bridge='br0').create()
        for body, version in ((self.body(), None),
                              (self.body(networks='auto'), '2.37')):
            with self.subTest(version=version):
                instance = self.created(self.create(body, version=version))
                self.assertEqual([NETWORK], [vif.network.id for vif in
                                             instance.network_info])
        instance = self.created(self.create(self.body(networks='none'),
                                            version='2.37'))
        self.assertEqual((), tuple(instance.network_info))

    def test_several_networks_to_choose_from_is_400(self):
        for name in ('a', 'b'):
            objects.Network(self.ctx, name=name, bridge='br-' + name).create()
        self.assertFault(self.create(self.body(networks='auto'),
                                     version='2.37'), 400, 'badRequest',
                         'Multiple possible networks found')
        self.assertEqual([], objects.Instance.get_all(self.ctx))

    def test_image_and_flavor_refs_may_be_urls(self):
        response = self.create(self.body(
            imageRef='http://glance/images/%s' % fakes.IMAGE.id,
            flavorRef='http://localhost/flavors/1'))
        self.assertEqual(202, response.status_int, response.text)

    def test_bad_bodies_are_400_and_create_nothing(self):
        bodies = [
            {},
            {'server': 'x'},
            self.body(name=''),
            self.body(name='../../etc'),
            self.body(name=' padded'),
            self.body(imageRef='not-a-uuid'),
            self.body(flavorRef='99'),
            self.body(imageRef='3f7a5c0e-2b1d-4e8a-9f6c-0d1e2f3a4b5c'),
            self.body(imageRef=fakes.KERNEL.id),
            self.body(networks=[{'uuid': NETWORK}]),
            self.body(networks=[{'port': NETWORK}]),
            self.body(networks='auto'),
            self.body(max_count=2),
            self.body(key_name='mine'),
            self.body(metadata={'': 'b'}),
            self.body(metadata={'k' * 256: 'b'}),
            self.body(metadata={'a': 'v' * 256}),
            self.body(metadata={'a': 1}),
            self.body(metadata=['a']),
        ]
        for body in bodies:
            with self.subTest(body=body):
                self.assertFault(self.create(body), 400, 'badRequest')
        self.assertEqual([], objects.Instance.get_all(self.ctx,
                                                      include_deleted=True))
        self.assertEqual([], self.compute_rpc.casts)

    def test_networks_required_from_237(self):
        self.assertFault(self.create(self.body(), version='2.37'), 400,
                         'badRequest', "'networks' is a required property")
        response = self.create(self.body(networks='none'), version='2.37')
        self.assertEqual(202, response.status_int, response.text)

    def test_description_from_219(self):
        self.assertFault(self.create(self.body(description='d')), 400,
                         'badRequest')
        response = self.create(self.body(description='d'), version='2.19')
        self.assertEqual(202, response.status_int, response.text)


def _row_values(uuid) -> list:
    """Every column of the server's database row, as stored."""
    with db_api.session(read_only=True) as session:
        row = session.execute(sa.select(models.Instance.__table__).where(
            models.Instance.uuid == uuid)).one()
    return list(row)


class CreateFieldsTest(fakes.APITestCase):
    """``adminPass``, ``accessIPv4``/``accessIPv6`` (every version) and
    ``hostname`` (2.90, FQDN from 2.94) in server create."""

    def create(self, version=None, token=fakes.USER_TOKEN, **changes):
        server = {'name': 'Web Server_1', 'imageRef': fakes.IMAGE.id,
                  'flavorRef': '1'}
        if version is not None and version != '2.1':
            server['networks'] = 'none'
        server.update(changes)
        return self.request('POST', '/v2.1/servers', {'server': server},
                            token=token, version=version)

    def created(self, response):
        self.assertEqual(202, response.status_int, response.text)
        return self.reload(objects.Instance(
            self.ctx, uuid=response.json['server']['id']))

    def show(self, instance, version=None, token=fakes.USER_TOKEN):
        response = self.request('GET', '/v2.1/servers/%s' % instance.uuid,
                                token=token, version=version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['server']

    def listed(self, version=None, token=fakes.USER_TOKEN):
        response = self.request('GET', '/v2.1/servers/detail', token=token,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return response.json['servers']

    def assertNothingCreated(self):
        self.assertEqual([], objects.Instance.get_all(
            self.ctx, include_deleted=True))
        self.assertEqual([], self.compute_rpc.casts)

    # -- adminPass -----------------------------------------------------------

    def test_create_response_keys(self):
        for version in ('2.1', '2.90', 'latest'):
            with self.subTest(version=version):
                response = self.create(version=version)
                self.assertEqual(202, response.status_int, response.text)
                self.assertEqual(
                    {'id', 'links', 'OS-DCF:diskConfig', 'security_groups',
                     'adminPass'}, set(response.json['server']))

    def test_given_admin_pass_is_returned_and_stored_nowhere(self):
        secret = 'Zq7-given-pass'
        response = self.create(adminPass=secret)
        instance = self.created(response)
        self.assertEqual(secret, response.json['server']['adminPass'])
        self.assertFalse([v for v in _row_values(instance.uuid)
                          if secret in str(v)])
        self.assertNotIn(secret, repr(self.compute_rpc.casts))
        for token in (fakes.USER_TOKEN, fakes.ADMIN_TOKEN):
            for version in ('2.1', 'latest'):
                self.assertNotIn(secret, repr(self.show(
                    instance, version=version, token=token)))

    def test_a_password_is_generated_when_none_is_given(self):
        first = self.create().json['server']['adminPass']
        second = self.create().json['server']['adminPass']
        self.assertEqual((12, 12), (len(first), len(second)))
        self.assertNotEqual(first, second)
        for instance in objects.Instance.get_all(self.ctx):
            self.assertFalse([v for v in _row_values(instance.uuid)
                              if first in str(v) or second in str(v)])
        # Given empty, it is answered empty, as the reference does.
        self.assertEqual('', self.create(
            adminPass='').json['server']['adminPass'])

    def test_no_admin_pass_when_instance_passwords_are_disabled(self):
        self.flags(group='api', enable_instance_password=False)
        for changes in ({}, {'adminPass': 'Zq7-given-pass'}):
            with self.subTest(changes=changes):
                response = self.create(**changes)
                self.assertEqual(202, response.status_int, response.text)
                self.assertNotIn('adminPass', response.json['server'])

    def test_bad_admin_pass_is_400_and_creates_nothing(self):
        for value in (12, None, 'x' * 256):
            with self.subTest(value=value):
                self.assertFault(self.create(adminPass=value), 400,
                                 'badRequest', 'adminPass')
        self.assertNothingCreated()

    # -- OS-DCF:diskConfig ---------------------------------------------------

    def test_disk_config_is_stored_and_shown(self):
        for value, stored in (('AUTO', True), ('MANUAL', False),
                              (None, False)):
            with self.subTest(value=value):
                changes = ({} if value is None
                           else {'OS-DCF:diskConfig': value})
                response = self.create(**changes)
                instance = self.created(response)
                self.assertEqual(stored, instance.auto_disk_config)
                shown = value or 'MANUAL'
                self.assertEqual(
                    shown, response.json['server']['OS-DCF:diskConfig'])
                for version in ('2.1', 'latest'):
                    self.assertEqual(shown, self.show(
                        instance, version)['OS-DCF:diskConfig'])
                listed = {s['id']: s['OS-DCF:diskConfig']
                          for s in self.listed('latest')}
                self.assertEqual(shown, listed[instance.uuid])

    def test_bad_disk_config_is_400_and_creates_nothing(self):
        for value in ('auto', 'NONE', '', None, True):
            with self.subTest(value=value):
                self.assertFault(self.create(**{'OS-DCF:diskConfig': value}),
                                 400, 'badRequest', 'OS-DCF:diskConfig')
        self.assertNothingCreated()

    # -- accessIPv4 / accessIPv6 ---------------------------------------------

    def test_access_ips_are_stored_and_shown(self):
        instance = self.created(self.create(
            accessIPv4='192.0.2.10', accessIPv6='2001:DB8:0::1'))
        self.assertEqual(('192.0.2.10', '2001:db8::1'),
                         (instance.access_ip_v4, instance.access_ip_v6))
        for server in (self.show(instance), self.show(instance, 'latest'),
                       self.show(instance, token=fakes.ADMIN_TOKEN),
                       self.listed()[0], self.listed('latest')[0]):
            self.assertEqual(('192.0.2.10', '2001:db8::1'),
                             (server['accessIPv4'], server['accessIPv6']))

    def test_access_ips_not_given_are_empty_strings(self):
        instance = self.created(self.create(accessIPv6='::1'))
        self.assertEqual((None, '::1'),
                         (instance.access_ip_v4, instance.access_ip_v6))
        server = self.show(instance)
        self.assertEqual(('', '::1'),
                         (server['accessIPv4'], server['accessIPv6']))

    def test_bad_access_ips_are_400_and_create_nothing(self):
        for field, value in (('accessIPv4', '192.0.2'),
                             ('accessIPv4', '256.0.0.1'),
                             ('accessIPv4', '2001:db8::1'),
                             ('accessIPv4', ''),
                             ('accessIPv4', 3232235777),
                             ('accessIPv6', '192.0.2.1'),
                             ('accessIPv6', '2001:db8::g'),
                             ('accessIPv6', 'fe80::1%eth0'),
                             ('accessIPv6', '')):
            with self.subTest(field=field, value=value):
                self.assertFault(self.create(**{field: value}), 400,
                                 'badRequest', field)
        self.assertNothingCreated()

    # -- hostname ------------------------------------------------------------

    def test_hostname_is_refused_below_290(self):
        self.assertFault(self.create(version='2.89', hostname='web'), 400,
                         'badRequest', "'hostname' was unexpected")
        self.assertNothingCreated()

    def test_given_hostname_is_stored_and_shown(self):
        instance = self.created(self.create(version='2.90',
                                            hostname='Web-01'))
        self.assertEqual('Web-01', instance.hostname)
        self.assertEqual('Web-01', self.show(
            instance, '2.90')['OS-EXT-SRV-ATTR:hostname'])
        self.assertEqual('Web-01', self.show(
            instance, '2.3', token=fakes.ADMIN_TOKEN)[
                'OS-EXT-SRV-ATTR:hostname'])
        self.assertEqual('db1.example.org', self.created(self.create(
            version='2.94', hostname='db1.example.org')).hostname)

    def test_hostname_defaults_to_the_sanitized_display_name(self):
        instance = self.created(self.create(version='2.90'))
        self.assertEqual('web-server-1', instance.hostname)
        self.assertEqual('web-server-1', self.show(
            instance, '2.90')['OS-EXT-SRV-ATTR:hostname'])
        nothing_left = self.created(self.create(name='日本'))
        self.assertEqual('Server-%s' % nothing_left.uuid,
                         nothing_left.hostname)

    def test_a_row_without_hostname_shows_the_derived_one(self):
        # Written before hostnames were stored (0011).
        instance = self.make_instance(name='web 1.old')
        self.assertIsNone(instance.hostname)
        self.assertEqual('web-1-old', self.show(
            instance, '2.90')['OS-EXT-SRV-ATTR:hostname'])

    def test_bad_hostnames_are_400_and_create_nothing(self):
        for version, hostname in (
                ('2.90', 'a'), ('2.90', '-web'), ('2.90', 'web-'),
                ('2.90', 'web.example.org'), ('2.90', 'web_1'),
                ('2.90', 'x' * 64), ('2.90', ''), ('2.90', 7),
                ('2.94', ''), ('2.94', 'web 1'), ('2.94', 'web/1'),
                ('2.94', 'x' * 256), ('latest', 'caf\u00e9')):
            with self.subTest(version=version, hostname=hostname):
                self.assertFault(self.create(version=version,
                                             hostname=hostname), 400,
                                 'badRequest', 'hostname')
        self.assertNothingCreated()

    def test_longest_hostnames(self):
        self.assertEqual('x' * 63, self.created(self.create(
            version='2.90', hostname='x' * 63)).hostname)
        self.assertEqual('x' * 255, self.created(self.create(
            version='2.94', hostname='x' * 255)).hostname)

    # -- what the server shows, by microversion ------------------------------

    BASE_KEYS = frozenset((
        'id', 'name', 'links', 'status', 'tenant_id', 'user_id',
        'metadata', 'hostId', 'image', 'flavor', 'created', 'updated',
        'addresses', 'accessIPv4', 'accessIPv6', 'key_name', 'config_drive',
        'progress', 'OS-DCF:diskConfig', 'OS-EXT-AZ:availability_zone',
        'OS-EXT-STS:vm_state', 'OS-EXT-STS:task_state',
        'OS-EXT-STS:power_state', 'OS-SRV-USG:launched_at',
        'OS-SRV-USG:terminated_at', 'os-extended-volumes:volumes_attached'))
    ADMIN_KEYS = frozenset((
        'OS-EXT-SRV-ATTR:host', 'OS-EXT-SRV-ATTR:hypervisor_hostname',
        'OS-EXT-SRV-ATTR:instance_name'))
    ADMIN_KEYS_23 = frozenset((
        'OS-EXT-SRV-ATTR:hostname', 'OS-EXT-SRV-ATTR:reservation_id',
        'OS-EXT-SRV-ATTR:launch_index', 'OS-EXT-SRV-ATTR:kernel_id',
        'OS-EXT-SRV-ATTR:ramdisk_id', 'OS-EXT-SRV-ATTR:root_device_name',
        'OS-EXT-SRV-ATTR:user_data'))
    KEYS_289 = frozenset((
        'locked', 'description', 'tags', 'trusted_image_certificates',
        'server_groups', 'locked_reason'))

    def test_shown_keys_by_microversion(self):
        instance = self.created(self.create(
            version='2.90', hostname='web', adminPass='Zq7-given-pass',
            accessIPv4='192.0.2.10'))
        user, admin = fakes.USER_TOKEN, fakes.ADMIN_TOKEN
        expected = {
            ('2.1', user): self.BASE_KEYS,
            ('2.1', admin): self.BASE_KEYS | self.ADMIN_KEYS,
            ('2.3', admin): (self.BASE_KEYS | self.ADMIN_KEYS
                             | self.ADMIN_KEYS_23),
            ('2.89', user): self.BASE_KEYS | self.KEYS_289,
            ('2.90', user): (self.BASE_KEYS | self.KEYS_289
                             | {'OS-EXT-SRV-ATTR:hostname'}),
            ('2.94', admin): (self.BASE_KEYS | self.KEYS_289
                              | self.ADMIN_KEYS | self.ADMIN_KEYS_23
                              | {'host_status'}),
        }
        for (version, token), keys in expected.items():
            with self.subTest(version=version, admin=token == admin):
                self.assertEqual(set(keys), set(self.show(
                    instance, version, token=token)))


class CreateOnAHostTest(fakes.APITestCase):
    """2.74: ``host`` and ``hypervisor_hostname`` in server create."""

    def create(self, token=fakes.ADMIN_TOKEN, version='2.74', **changes):
        server = {'name': 'placed', 'imageRef': fakes.IMAGE.id,
                  'flavorRef': '1', 'networks': 'none'}
        server.update(changes)
        return self.request('POST', '/v2.1/servers', {'server': server},
                            token=token, version=version)

    def created_on(self, response):
        self.assertEqual(202, response.status_int, response.text)
        instance = self.reload(objects.Instance(
            self.ctx, uuid=response.json['server']['id']))
        return instance.host, instance.node

    def placed(self):
        return [i.display_name for i in objects.Instance.get_all(self.ctx)]

    def test_the_named_host_or_hypervisor_is_used(self):
        self.assertEqual(('host2', 'host2'),
                         self.created_on(self.create(host='host2')))
        self.assertEqual(('host1', 'host1'), self.created_on(
            self.create(hypervisor_hostname='host1')))
        self.assertEqual(('host2', 'host2'), self.created_on(self.create(
            host='host2', hypervisor_hostname='host2')))

    def test_refusals_create_nothing(self):
        # Not in the body below 2.74.
        self.assertFault(self.create(host='host2', version='2.73'), 400,
                         'badRequest', "'host' was unexpected")
        # Administrators only.
        self.assertFault(self.create(host='host2', token=fakes.USER_TOKEN),
                         403, 'forbidden', 'requested_destination')
        self.assertFault(self.create(host='nowhere'), 400, 'badRequest',
                         'nowhere')
        self.assertFault(self.create(host='host1',
                                     hypervisor_hostname='host2'), 400,
                         'badRequest')
        self.set_down(self.host2)
        self.assertFault(self.create(host='host2'), 400, 'badRequest')
        self.assertEqual([], self.placed())
        self.assertEqual([], self.compute_rpc.casts)


class DeleteTest(fakes.APITestCase):

    def test_delete_on_a_live_host_casts(self):
        instance = self.make_instance()
        response = self.request('DELETE', '/v2.1/servers/%s' % instance.uuid,
                                token=fakes.USER_TOKEN)
        self.assertEqual(204, response.status_int)
        self.assertEqual(b'', response.body)
        self.assertEqual(task_states.DELETING,
                         self.reload(instance).task_state)
        self.assertEqual(['terminate_instance'], self.compute_rpc.methods())

    def test_delete_on_a_dead_host_is_local(self):
        self.set_down(self.host1)
        instance = self.make_instance()
        response = self.request('DELETE', '/v2.1/servers/%s' % instance.uuid)
        self.assertEqual(204, response.status_int)
        self.assertTrue(self.reload(instance).deleted)

    def test_delete_unknown_or_foreign_is_404(self):
        other = self.make_instance(project_id='p2')
        self.assertFault(self.request('DELETE', '/v2.1/servers/%s'
                                      % other.uuid, token=fakes.USER_TOKEN),
                         404, 'itemNotFound')
        self.assertFalse(self.reload(other).deleted)
        self.assertIsNone(self.reload(other).task_state)


class ListFrom266Test(fakes.APITestCase):
    """The servers list's query parameters from 2.66 to 2.95."""

    def setUp(self):
        super().setUp()
        self.old = self.make_instance(name='old')
        # Written behind the object's back: save() stamps updated_at.
        with db_api.session() as session:
            session.execute(sa.update(models.Instance).where(
                models.Instance.uuid == self.old.uuid).values(
                    updated_at=datetime.datetime(2020, 1, 1)))
        self.new = self.make_instance(name='new', vm_state=vm_states.STOPPED,
                                      power_state=4, user_id='carol')

    def ids(self, query, version=None, token=fakes.USER_TOKEN):
        response = self.request('GET', '/v2.1/servers' + query, token=token,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return {s['id'] for s in response.json['servers']}

    def test_changes_since_and_from_266_changes_before(self):
        self.assertEqual({self.new.uuid},
                         self.ids('?changes-since=2021-01-01T00:00:00Z'))
        # changes-before is ignored below 2.66.
        self.assertEqual({self.old.uuid, self.new.uuid}, self.ids(
            '?changes-before=2021-01-01T00:00:00Z', version='2.65'))
        self.assertEqual({self.old.uuid}, self.ids(
            '?changes-before=2021-01-01T00:00:00Z', version='2.66'))
        # A server deleted in the window is listed too.
        self.old.destroy()
        self.assertEqual({self.old.uuid, self.new.uuid}, self.ids(
            '?changes-since=2019-01-01T00:00:00Z', version='2.66'))
        self.assertEqual({self.new.uuid}, self.ids('', version='2.66'))

    def test_changes_window_errors_are_400(self):
        self.assertFault(self.request(
            'GET', '/v2.1/servers?changes-since=2021-01-01T00:00:00Z&'
            'changes-before=2020-01-01T00:00:00Z', token=fakes.USER_TOKEN,
            version='2.66'), 400, 'badRequest', 'changes-since')
        self.assertFault(self.request(
            'GET', '/v2.1/servers?changes-since=yesterday',
            token=fakes.USER_TOKEN), 400, 'badRequest', 'ISO 8601')

    def test_locked_filter_from_273(self):
        self.assertEqual({self.old.uuid, self.new.uuid},
                         self.ids('?locked=true', version='2.72'))
        self.assertEqual(set(), self.ids('?locked=true', version='2.73'))
        self.assertEqual({self.old.uuid, self.new.uuid},
                         self.ids('?locked=false', version='2.73'))
        self.assertFault(self.request('GET', '/v2.1/servers?locked=maybe',
                                      token=fakes.USER_TOKEN,
                                      version='2.73'), 400, 'badRequest')

    def test_unknown_query_parameter_is_400_from_275(self):
        self.assertEqual({self.old.uuid, self.new.uuid},
                         self.ids('?bogus=1', version='2.74'))
        for path in ('/v2.1/servers', '/v2.1/servers/detail'):
            with self.subTest(path=path):
                self.assertFault(self.request(
                    'GET', path + '?bogus=1', token=fakes.USER_TOKEN,
                    version='2.75'), 400, 'badRequest', 'bogus')
        # Known ones still work, admin-only ones are ignored for users.
        self.assertEqual({self.old.uuid, self.new.uuid},
                         self.ids('?host=host2&limit=5', version='2.75'))

    def test_state_and_user_filters_for_users_from_283(self):
        query = '?vm_state=stopped&user_id=carol&power_state=4'
        # Ignored for users below 2.83, as the reference ignores them.
        self.assertEqual({self.old.uuid, self.new.uuid},
                         self.ids(query, version='2.82'))
        self.assertEqual({self.new.uuid}, self.ids(query, version='2.83'))
        self.assertEqual({self.new.uuid}, self.ids(
            query + '&all_tenants=1', version='2.82',
            token=fakes.ADMIN_TOKEN))
        self.assertEqual(set(), self.ids('?task_state=rebooting',
                                         version='2.83'))
        self.assertFault(self.request(
            'GET', '/v2.1/servers?power_state=on', token=fakes.USER_TOKEN,
            version='2.83'), 400, 'badRequest')
