"""``/os-instance_usage_audit_log``: the state of the instance usage
audit of a period, by compute host (admin only).

This project runs no usage audit task (Nova's
``instance_usage_audit``), so no host ever has a log: the answer is the
document Nova gives for a period none ran in, every compute host listed
as not run. The period is the last completed month (Nova's default
``instance_usage_audit_period``) before now, or before
``{before_timestamp}`` (``YYYY-mm-dd HH:MM:SS[.ffffff]``; anything else is
a 400).
"""

import datetime

from nova.api.openstack import common
from nova.api.openstack import policy
from nova.api.openstack.router import Route
from nova import objects
from nova.objects import base as obj_base
from nova.objects import service as service_obj

RULE = 'os_compute_api:os-instance-usage-audit-log:%s'
_FORMATS = ('%Y-%m-%d %H:%M:%S.%f', '%Y-%m-%d %H:%M:%S')
_SHOWN = '%Y-%m-%d %H:%M:%S'


def _parse(before: str) -> datetime.datetime:
    return common.parse_time(
        before, _FORMATS, 'Invalid timestamp for date %s' % before[:100])


def last_completed_month(before: datetime.datetime
                         ) -> tuple[datetime.datetime, datetime.datetime]:
    """(start, end) of the last whole month that ended by ``before``."""
    end = datetime.datetime(before.year, before.month, 1)
    start = (datetime.datetime(end.year - 1, 12, 1) if end.month == 1
             else datetime.datetime(end.year, end.month - 1, 1))
    return start, end


def _no_audit(context, before: datetime.datetime) -> dict:
    start, end = last_completed_month(before)
    hosts = sorted({s.host or '' for s in objects.Service.get_all(
        context, binary=service_obj.COMPUTE_BINARY)})
    return {
        'hosts_not_run': hosts,
        'log': {},
        'num_hosts': len(hosts),
        'num_hosts_done': 0,
        'num_hosts_not_run': len(hosts),
        'num_hosts_running': 0,
        'overall_status': ('ALL hosts done. 0 errors.' if not hosts else
                           '0 of %d hosts done. 0 errors.' % len(hosts)),
        'period_beginning': start.strftime(_SHOWN),
        'period_ending': end.strftime(_SHOWN),
        'total_errors': 0,
        'total_instances': 0,
    }


class InstanceUsageAuditLogController:
    def routes(self) -> list[Route]:
        return [
            Route('GET', '/os-instance_usage_audit_log', self.index),
            Route('GET', '/os-instance_usage_audit_log/{before_timestamp}',
                  self.show),
        ]

    def index(self, req):
        policy.authorize(req.context, RULE % 'list')
        now = obj_base.utcnow().replace(tzinfo=None)
        return {'instance_usage_audit_logs': _no_audit(req.context, now)}

    def show(self, req, before_timestamp):
        policy.authorize(req.context, RULE % 'show')
        before = _parse(before_timestamp)
        return {'instance_usage_audit_log': _no_audit(req.context, before)}
