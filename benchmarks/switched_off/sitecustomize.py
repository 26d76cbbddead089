"""Benchmarks only: a Python process started with this directory on
``PYTHONPATH`` switches off the guarantees named in
``NOVA_BENCH_SWITCHED_OFF`` as it starts (``benchmarks/rows/guarantees.py``,
which also says why). Nothing else in the project puts it there."""

import os
import sys

_names = [n for n in os.environ.get('NOVA_BENCH_SWITCHED_OFF', '').split(',')
          if n]
if _names:
    _benchmarks = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # Appended, and taken out again: the benchmarks' own modules must not
    # shadow anything the service imports.
    sys.path.append(_benchmarks)
    try:
        from rows import guarantees
        guarantees.apply(_names)
    finally:
        sys.path.remove(_benchmarks)
        # ``rows`` stays imported, under its own name only.
