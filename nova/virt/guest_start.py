"""The start of a guest, one sequence for every driver.

Spawn, start (power on), hard reboot, resume and resume on host boot all
start a guest the same way: plug its VIFs, define it, start its vCPUs
(paused while the ``network-vif-plugged`` events of its inactive VIFs are
awaited, up to ``vif_plugging_timeout``), then let it run. ``start`` is
that sequence; a driver supplies only the steps (``StartSteps``), as a
small object made for one start.

On any failure, a failed or late network-vif-plugged event included, the
driver's ``undo`` puts the host back, and removes disks only when
``destroy_disks_on_failures`` is true: only spawn sets it (Nova bug
1660647: a failed start, resume or hard reboot must never cost the
instance its disks).

A spawn's ``attempt`` (``journal.Attempt``) has its token checked right
before plugging, defining, starting and resuming, and once more right
after the vCPUs run; a token lost at any of these stops the start, and the
same undo powers a guest that already runs off at once.

Example (a driver's hard reboot)::

    guest_start.start(self.virtapi, self.settings,
                      _LibvirtStart(self, context, instance, network_info,
                                    block_device_info, xml),
                      guest_start.StartRequest(instance, network_info))
"""

import dataclasses
import typing

from oslo_log import log as logging

from nova import crashpoint
from nova import exception
from nova.model import network as network_model
from nova.virt import journal

LOG = logging.getLogger(__name__)

VIF_PLUGGED_EVENT = 'network-vif-plugged'


class StartSteps(typing.Protocol):
    """What one driver does at each step of one start."""

    def plug_vifs(self) -> None:
        """Plug the VIFs (undoing its own partial plug if it fails)."""

    def define(self) -> None:
        """Make the guest's definition (a no-op where it already is)."""

    def launch(self, pause: bool) -> None:
        """Start the vCPUs; ``pause``: stopped until ``resume``."""

    def resume(self) -> None:
        """Let the vCPUs of a guest launched paused run."""

    def undo(self, destroy_disks: bool) -> None:
        """Put the host back after a failed start; remove the disks the
        attempt made only when ``destroy_disks``."""

    def failure(self, exc: Exception) -> Exception:
        """The exception a failed start raises, ``exc`` unless the
        driver knows more (which local guest holds a disk lease)."""


@dataclasses.dataclass(frozen=True)
class StartRequest:
    instance: typing.Any
    network_info: network_model.NetworkInfo
    power_on: bool = True
    # Resume: the ports stayed bound while the guest was suspended, so
    # no event will come for them.
    vifs_already_plugged: bool = False
    # Spawn only (Nova bug 1660647): start, resume and hard reboot keep
    # every disk when the start fails.
    destroy_disks_on_failures: bool = False
    # A spawn's attempt, whose token every step checks.
    attempt: journal.Attempt | None = None


def vif_events(settings, request: StartRequest) -> list[tuple[str, str]]:
    """The events a start waits for: one per inactive VIF, unless the
    VIFs are plugged already, the guest is not to run, or waiting is
    turned off (``vif_plugging_timeout`` 0)."""
    if (request.vifs_already_plugged or not request.power_on
            or not settings.vif_plugging_timeout):
        return []
    return [(VIF_PLUGGED_EVENT, vif.id)
            for vif in request.network_info.inactive()]


def start(virtapi, settings, steps: StartSteps,
          request: StartRequest) -> None:
    """Plug, define, start paused while the VIF events are awaited, run;
    on failure ``steps.undo`` and raise."""
    instance = request.instance
    attempt = request.attempt
    check = attempt.check if attempt is not None else _no_check
    events = vif_events(settings, request)
    pause = bool(events)

    def event_failed(event_name, instance):
        LOG.error('Network reported %s as failed', event_name,
                  instance=instance)
        if settings.vif_plugging_is_fatal:
            raise exception.VirtualInterfaceCreateException()

    defined = False
    try:
        try:
            with virtapi.wait_for_instance_event(
                    instance, events,
                    deadline=settings.vif_plugging_timeout,
                    error_callback=event_failed):
                check(journal.CHECK_PLUG)
                steps.plug_vifs()
                crashpoint.reached('start.after_plug_vifs')
                check(journal.CHECK_DEFINE)
                steps.define()
                defined = True
                crashpoint.reached('start.after_define')
                if request.power_on:
                    check(journal.CHECK_START)
                    steps.launch(pause)
                    crashpoint.reached('start.waiting_for_vif_events')
                    if not pause:
                        check(journal.CHECK_RUNNING)
        except TimeoutError:
            if settings.vif_plugging_is_fatal or not defined:
                raise exception.VirtualInterfaceCreateException()
            LOG.warning('Timed out waiting for network-vif-plugged; '
                        'starting the guest anyway', instance=instance)
        if pause:
            check(journal.CHECK_RESUME)
            steps.resume()
            check(journal.CHECK_RUNNING)
        if request.power_on:
            crashpoint.reached('start.after_resume')
    except Exception as e:
        LOG.error('Failed to start the guest: %s', e, instance=instance)
        try:
            steps.undo(request.destroy_disks_on_failures)
        except Exception:
            LOG.exception('Cleanup of the failed start failed',
                          instance=instance)
        raised = steps.failure(e)
        if raised is not e:
            raise raised from e
        raise


def _no_check(step):
    """The token check of a start that is no spawn attempt (power on,
    resume, hard reboot): none."""
