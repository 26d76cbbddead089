"""/os-disk-leases: this project's own resource for what /os-services
may not show (the reference's fields only)."""

from nova import objects
from nova.tests.unit.api.openstack import fakes

FIELDS = {'host', 'service_uuid', 'disk_leases', 'reason',
          'storage_identity', 'unprotected_sharing',
          'fence_before_evacuating', 'summary'}


class DiskLeasesTest(fakes.APITestCase):

    def setUp(self):
        super().setUp()
        self.conductor = self.make_service('ctl', binary='nova-conductor')

    def leases(self, query='', version=None):
        response = self.request('GET', '/v2.1/os-disk-leases' + query,
                                version=version)
        self.assertEqual(200, response.status_int, response.text)
        return {e['host']: e for e in response.json['disk_leases']}

    def _record(self, service, identity, leases, reason=None):
        row = objects.Service.get_by_id(self.ctx, service.id)
        row.storage_identity = identity
        row.disk_leases = leases
        row.disk_leases_reason = reason
        row.save()

    def test_every_compute_host_not_reported_yet(self):
        for version in ('2.1', '2.53', '2.95'):
            with self.subTest(version=version):
                leases = self.leases(version=version)
                self.assertEqual(['host1', 'host2'], sorted(leases))
                self.assertEqual(
                    {'host': 'host1', 'service_uuid': self.host1.uuid,
                     'disk_leases': None, 'reason': None,
                     'storage_identity': None, 'unprotected_sharing': [],
                     'fence_before_evacuating': False, 'summary': None},
                    leases['host1'])

    def test_shared_storage_without_leases_on_one_side(self):
        self._record(self.host1, 'shared', 'lockd')
        self._record(self.host2, 'shared', 'lockd')
        leases = self.leases()
        self.assertEqual(('lockd', 'lockd', False),
                         (leases['host1']['disk_leases'],
                          leases['host1']['summary'],
                          leases['host1']['fence_before_evacuating']))
        # host2 takes none now: both sides say so.
        self._record(self.host2, 'shared', 'none')
        host2 = self.leases('?host=host2')
        self.assertEqual(['host2'], list(host2))
        self.assertEqual(
            {'host': 'host2', 'service_uuid': self.host2.uuid,
             'disk_leases': 'none', 'reason': None,
             'storage_identity': 'shared', 'unprotected_sharing': ['host1'],
             'fence_before_evacuating': True,
             'summary': 'none: shares storage with host1 without disk '
                        'leases; fence it before evacuating'},
            host2['host2'])
        host1 = self.leases()['host1']
        self.assertEqual((['host2'], True,
                          'lockd, but host2 sharing its storage takes no '
                          'disk leases; fence before evacuating'),
                         (host1['unprotected_sharing'],
                          host1['fence_before_evacuating'],
                          host1['summary']))
        # Separate storage: no warning, whatever the leases.
        self._record(self.host2, 'other', 'none')
        leases = self.leases()
        self.assertEqual(('lockd', 'none'), (leases['host1']['summary'],
                                             leases['host2']['summary']))
        self.assertFalse(leases['host2']['fence_before_evacuating'])

    def test_why_configured_leases_count_as_none(self):
        why = ('file_lockspace_dir /var/lib/libvirt/lockd/files is on / '
               '(ext4 /dev/vda1), not on the storage of instances_path '
               '/var/lib/nova/instances, which is on /var/lib/nova/instances '
               '(nfs4 srv:/nova): leases taken there do not cross hosts')
        unreadable = ('cannot read /proc/self/mountinfo (Permission '
                      'denied): whether disk leases cross hosts is unknown')
        self._record(self.host1, 'shared', 'none', why)
        self._record(self.host2, 'other', None, unreadable)
        leases = self.leases()
        self.assertEqual(('none', why, 'none: ' + why),
                         (leases['host1']['disk_leases'],
                          leases['host1']['reason'],
                          leases['host1']['summary']))
        self.assertEqual((None, unreadable, 'unknown: ' + unreadable),
                         (leases['host2']['disk_leases'],
                          leases['host2']['reason'],
                          leases['host2']['summary']))
        self._record(self.host2, 'shared', 'lockd')
        leases = self.leases()
        self.assertEqual('none: %s; it shares storage with host2 without '
                         'disk leases; fence it before evacuating' % why,
                         leases['host1']['summary'])
        self.assertEqual('lockd, but host1 sharing its storage takes no '
                         'disk leases; fence before evacuating',
                         leases['host2']['summary'])

    def test_every_entry_has_exactly_its_fields(self):
        self._record(self.host1, 'shared', 'lockd')
        for entry in self.leases().values():
            self.assertEqual(FIELDS, set(entry))

    def test_admin_only(self):
        self.assertFault(self.request('GET', '/v2.1/os-disk-leases',
                                      token=fakes.USER_TOKEN), 403,
                         'forbidden')

    def test_unknown_host_lists_nothing(self):
        self.assertEqual({}, self.leases('?host=nowhere'))
