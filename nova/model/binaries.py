"""The names the project's services run under.

Each is the ``binary`` of the service's row in ``services`` (what the API's
``os-services`` lists and what an operator forces down) and the program
name its logs and configuration parsing use. Defined here, at the bottom
of the layers, so that every layer (the CLI included) names them alike.
"""

COMPUTE = 'nova-compute'
CONDUCTOR = 'nova-conductor'
API = 'nova-api'
HAMONITOR = 'nova-hamonitor'
# Every service in one process (development and tests).
ALL = 'nova-all'
