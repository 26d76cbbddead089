"""Power state of a guest as the hypervisor reports it (Nova's values).

Stored as an integer in the database; ``STATE_MAP`` gives the names the
REST API shows.
"""

NOSTATE = 0x00
RUNNING = 0x01
PAUSED = 0x03
SHUTDOWN = 0x04
CRASHED = 0x06
SUSPENDED = 0x07

STATE_MAP = {
    NOSTATE: 'pending',
    RUNNING: 'running',
    PAUSED: 'paused',
    SHUTDOWN: 'shutdown',
    CRASHED: 'crashed',
    SUSPENDED: 'suspended',
}
