"""The orphan reaper: what nothing else removes while the services run.

Without it a crashed target's leftover guest (possibly running) is only
reported, the ``.part-`` files of an interrupted image fetch stay forever,
and base images are never aged out (doc/source/cleanup.rst, "The orphan
reaper"). ``reap`` runs on one compute host, for that host only: as the
compute manager's periodic task (``reap_orphans_interval``), and as
``nova-manage host reap [--yes]``. Each run, in this order:

a. **Evacuations away from this host that are done**
   (``reap_evacuated.py``): the normal source-side cleanup, for each
   instance on its own under its lock. This is what makes a host that
   comes back without a restart stop what it no longer owns. Only an
   operation that involves *this host's copy* holds an instance back,
   until a later run; one instance held back or failing never keeps
   another's stale guest running.
b. **Pending deletes** (``pending_deletes.py``): the domain, VIFs and
   directory of an instance deleted while this host was down (deleted,
   its last host this one) go as a delete would have removed them
   (``destroy(..., destroy_disks=True)``); only while the storage has no
   problem (below), no evacuation of it is in progress and its lock is
   free. Before part c, which would otherwise stop its domain only.
c. **Orphan domains** (``reap_domains.py``): a domain on this host of an
   instance that is deleted, or that the database places on another host
   after its newest migration, an evacuation *to this host*, failed, is
   powered off and undefined, never its disks. Never a domain the
   database has never heard of, never one whose instance has an operation
   in progress. Other orphans are reported and kept (``nova-manage host
   audit`` / ``cleanup`` decide about them).
d. **Stale temporary files** (the driver's
   ``remove_stale_temporary_files``): ``<name>.part-<attempt id>`` in
   instance directories whose attempt has no journal of any host on this
   storage (``<instances_path>/_journal``) and does not run in this
   driver (``live_attempts``); the temporary files of the driver's image
   fetches (libvirt: ``_base/<hash>.part-<uuid>``, removed under the
   image's lock taken without waiting); a journal's own temporary
   ``_journal/*.journal-<uuid>``. Each only when last modified before this
   process started *and* at least ``STALE_MIN_AGE`` seconds ago
   (``stale_before``): the work of a running process (this one or another
   host's, with some clock skew) is never taken for a dead one.
   ``reap_at_start`` runs this part and part b alone, once at
   ``init_host``.
e. **Unused base images** (``[image_cache] remove_unused_base_images``,
   the driver's ``manage_image_cache``): a base image no disk of any
   directory under ``instances_path`` (quarantined ones included) uses,
   last used more than ``remove_unused_original_minimum_age_seconds``
   ago, removed under the image's lock with its age read again there. A
   directory whose disks cannot all be told keeps every base image in
   that run (libvirt: ``nova/virt/libvirt/cache_cleanup.py``).

Parts b, d and e change nothing while the storage has a problem
(``storage_report.storage_problem``: a required mount missing, or the
marker of a host that recorded one gone); part e needs a known storage
identity too. One failure does not stop the rest: it is logged and
reported (``ERROR``). With ``dry_run`` nothing changes; the report says
what would be done (``reap_orphans_dry_run`` for the periodic task).

Example::

    report = reaper.reap(ctx, settings, driver, manager.instance_locks)
    print(audit.format_table(report.findings, reaper.COLUMNS))
"""

import time

from oslo_log import log as logging

from nova.compute import locks
from nova.compute import pending_deletes
from nova.compute import reap_domains
from nova.compute import reap_evacuated
from nova.compute.reap_report import BASE
from nova.compute.reap_report import DOMAIN
from nova.compute.reap_report import ERROR
from nova.compute.reap_report import EVACUATED
from nova.compute.reap_report import KEEP
from nova.compute.reap_report import PART
from nova.compute.reap_report import PENDING_DELETE
from nova.compute.reap_report import ReapReport
from nova.compute.reap_report import STORAGE
from nova.compute import shared_storage
from nova.compute import storage_report
from nova.conf import CONF
from nova import exception
from nova import objects
from nova.virt import instances_scan

LOG = logging.getLogger(__name__)

# When this process started: the module is imported when a service or
# nova-manage starts (the manager imports it).
PROCESS_STARTED = time.time()
# A temporary file modified less than this long ago is never stale: a
# write in progress on another host sharing the storage (whose clock may
# be off by some seconds) is not this process's to judge.
STALE_MIN_AGE = 3600


def stale_before(now: float | None = None) -> float:
    """The time a temporary file must be older than to be stale."""
    now = time.time() if now is None else now
    return min(PROCESS_STARTED, now - STALE_MIN_AGE)


def _step(report, kind, func, *args):
    try:
        func(*args)
    except Exception as e:
        LOG.exception('Reaper: %s step failed', kind)
        report.add(kind, '-', None, ERROR, exception.message_of(e))


def reap(context, settings, driver, instance_locks=None,
         dry_run: bool = False) -> ReapReport:
    """One run of the reaper on ``settings.host`` (see the module
    docstring); ``driver`` is that host's connected virt driver and
    ``instance_locks`` its manager's (``locks.InstanceLocks``; a new one
    outside the compute service). Never raises for one thing."""
    report = ReapReport(settings.host, settings.instances_path, dry_run)
    instance_locks = instance_locks or locks.InstanceLocks()
    _step(report, EVACUATED, reap_evacuated.reap, context, settings.host,
          driver, instance_locks, report)
    status = _usable_storage(context, settings, driver, report)
    if status is not None:
        _step(report, PENDING_DELETE, _reap_pending_deletes, context,
              settings, driver, instance_locks, report)
    _step(report, DOMAIN, reap_domains.reap, context, settings.host, driver,
          instance_locks, report)
    if status is not None:
        _step(report, PART, _reap_stale_files, driver, report)
        if CONF.image_cache.remove_unused_base_images:
            if status.identity is None:
                report.add(STORAGE, settings.instances_path, None, KEEP,
                           '%s: no base image aged out'
                           % status.describe())
            else:
                _step(report, BASE, _reap_unused_bases, driver, report)
    _log_summary(report)
    return report


def reap_at_start(context, settings, driver, instance_locks,
                  dry_run: bool = False) -> ReapReport:
    """Parts b and d alone: the pending deletes, then the stale
    temporary files (``init_host`` runs it once, after the interrupted
    attempts were recovered)."""
    report = ReapReport(settings.host, settings.instances_path, dry_run)
    if _usable_storage(context, settings, driver, report) is not None:
        _step(report, PENDING_DELETE, _reap_pending_deletes, context,
              settings, driver, instance_locks, report)
        _step(report, PART, _reap_stale_files, driver, report)
    _log_summary(report)
    return report


def _usable_storage(context, settings, driver, report):
    """The storage status, or None (reported) when nothing may be
    removed there."""
    status = driver.get_storage_status()
    problem = storage_report.storage_problem(
        status, *shared_storage.recorded_storage(context, settings.host))
    if problem:
        report.add(STORAGE, settings.instances_path, None, KEEP,
                   '%s: no file removed' % problem)
        return None
    return status


def _log_summary(report):
    LOG.info('Reaper on %(host)s%(dry)s: %(acted)d acted on, %(kept)d '
             'kept, %(errors)d failed',
             {'host': report.host,
              'dry': ' (dry run)' if report.dry_run else '',
              'acted': len(report.acted), 'kept': len(report.kept),
              'errors': len(report.errors)})


# -- b. pending deletes ----------------------------------------------------

def _reap_pending_deletes(context, settings, driver, instance_locks,
                          report):
    own = {i.uuid for i in objects.Instance.get_by_host(context,
                                                        settings.host)}
    scan = instances_scan.InstancesScan(settings.instances_path)
    candidates = (set(scan.instance_dirs) | set(
        driver.list_instance_uuids())) - own
    for outcome in pending_deletes.finish(context, settings.host, driver,
                                          instance_locks, candidates,
                                          dry_run=report.dry_run):
        report.add(PENDING_DELETE, outcome.uuid, outcome.uuid,
                   outcome.action, outcome.reason)


# -- d. stale temporary files ----------------------------------------------

def _reap_stale_files(driver, report):
    report.add_files(driver.remove_stale_temporary_files(
        stale_before(), dry_run=report.dry_run))


# -- e. unused base images -------------------------------------------------

def _reap_unused_bases(driver, report):
    report.add_files(driver.manage_image_cache(
        CONF.image_cache.remove_unused_original_minimum_age_seconds,
        dry_run=report.dry_run))
