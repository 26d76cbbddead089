"""nova-hamonitor: finds failed compute hosts, fences them, recovers them.

One module a job:

* ``lease``: one monitor acts per region (a database lease);
* ``evidence``: what the monitor knows of one host, read from the
  database (and libvirtd, where a probe reaches it);
* ``decision``: what to do about a host, a pure function of its evidence;
* ``fencer``: runs the fence agent;
* ``recovery``: the steps of recovering a failed host (fence, force
  down, host-evacuate or a notification to Masakari), each recorded
  before it is taken;
* ``masakari``: Masakari's host-failure notification (``[ha] recovery =
  masakari``);
* ``monitor``: the loop tying them together.

doc/source/ha.rst says what the monitor decides and guarantees.
"""
