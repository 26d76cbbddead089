"""The conductor: orchestration that belongs to no single compute host.

``manager.ConductorManager`` chooses evacuation targets (``target``) and
runs host-evacuate; ``rpcapi.ConductorAPI`` is its client.
"""
