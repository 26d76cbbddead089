import os

# NOTE: this project runs on native threads and never uses eventlet, but
# oslo.service's default backend imports it (through oslo.messaging), and
# eventlet's green DNS resolver then loads dnspython: about 200 modules
# and 7 MiB in every process, for nothing. Set before anything imports
# eventlet; an operator's own setting wins.
os.environ.setdefault('EVENTLET_NO_GREENDNS', 'yes')
