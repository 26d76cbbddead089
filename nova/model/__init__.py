"""The project's shared vocabulary: values every layer speaks.

Instance states (``vm_states``, ``task_states``, ``power_state``), the
network model of an instance (``network``), what a hypervisor reports
(``hardware``) and the external event a network backend sends
(``external_event``). These modules import nothing of the project but
``nova.exception``, so any layer may import them
(``nova/tests/unit/test_layers.py`` holds it so).
"""
