"""What a cleanup decided for one thing it found: the words every report
of the project uses (``nova-manage host audit``, ``host reap``, the
reaper's periodic run, the drivers' housekeeping).

Defined once here, on the ground floor, so that a verdict of the compute
layer and a finding of a driver compare equal.
"""

KEEP = 'keep'        # left as it is, with the reason reported
REMOVE = 'remove'    # removed (with dry_run: would be)
ERROR = 'error'      # the attempt to decide or act failed; left as it is
