"""Whether anything still runs on a compute host, asked of its libvirtd
(``[ha] libvirt_uri``): what tells a host whose nova-compute alone died
(its guests run on: not failed) from one that lost power or its network
(libvirtd does not answer either).

::

    probe = LibvirtProbe('qemu+tcp://%s/system', timeout=5,
                         count_running=binding.active_domain_count)
    probe('compute1')   # True: guests run; False: none; None: no answer

``count_running(uri)`` is libvirt's answer (``nova.virt.libvirt.binding``,
handed in by ``nova-hamonitor``: this layer does not reach libvirt
itself); whatever it raises means the libvirtd was not reached.

A libvirtd that takes longer than ``timeout`` counts as not reached; the
call still waiting for it goes on in its thread, and the host is not asked
again until it ends (a hung host never collects threads). The connection
is read-only: the monitor only looks.
"""

import re
import threading
from typing import Callable

from oslo_log import log as logging

from nova import exception

LOG = logging.getLogger(__name__)

# Host names as services record them; anything else is not put in a URI.
_HOST_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')


def _check_template(template: str) -> None:
    """``InvalidConfiguration`` unless ``template`` names the host once
    (``%s``): one URI for every host would make every host look alive
    whenever one of them is."""
    try:
        first, second = template % 'host-a', template % 'host-b'
    except (TypeError, ValueError) as e:
        raise exception.InvalidConfiguration(
            reason='[ha] libvirt_uri %r: %s (it takes one %%s, the host '
                   'name)' % (template, e))
    if first == second:
        raise exception.InvalidConfiguration(
            reason='[ha] libvirt_uri %r does not name the host (%%s)'
                   % template)


class LibvirtProbe:

    def __init__(self, uri_template: str, timeout: float,
                 count_running: Callable[[str], int]):
        _check_template(uri_template)
        self.uri_template = uri_template
        self.timeout = timeout
        self.count_running = count_running
        self._lock = threading.Lock()
        # host -> the thread of its last call, while it waits.
        self._waiting: dict[str, threading.Thread] = {}

    def uri(self, host: str) -> str:
        return self.uri_template % host

    def __call__(self, host: str) -> bool | None:
        if not _HOST_NAME.match(host):
            LOG.warning('Not asking libvirtd of host %r: not a host name',
                        host)
            return None
        answer: dict[str, bool | None] = {}
        with self._lock:
            earlier = self._waiting.get(host)
            if earlier is not None and earlier.is_alive():
                LOG.warning('libvirtd of host %s has not answered the '
                            'last call yet: not reached', host)
                return None
            thread = threading.Thread(
                target=self._ask, args=(host, answer), daemon=True,
                name='ha-probe-%s' % host)
            self._waiting[host] = thread
            thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            LOG.warning('libvirtd of host %s did not answer within %s s: '
                        'not reached', host, self.timeout)
            return None
        return answer.get('running')

    def _ask(self, host: str, answer: dict) -> None:
        uri = self.uri(host)
        try:
            running = self.count_running(uri)
        except Exception as e:
            # Whatever went wrong, the host's libvirtd gave no answer:
            # the heartbeats decide.
            LOG.info('libvirtd of host %s not reached at %s: %s', host,
                     uri, e)
            answer['running'] = None
            return
        LOG.debug('libvirtd of host %s reports %d guests running', host,
                  running)
        answer['running'] = running > 0


def from_conf(conf, count_running: Callable[[str], int]):
    """The probe ``[ha] libvirt_uri`` asks for; None when unset (the
    monitor then goes by heartbeats alone)."""
    if not conf.ha.libvirt_uri:
        return None
    return LibvirtProbe(conf.ha.libvirt_uri, conf.ha.probe_timeout,
                        count_running)
