"""The rows of ``benchmarks/run``: one module per row (or group of rows),
each with a ``run(quick)`` function returning ``common.Line`` objects.

See ``benchmarks/suite.py`` for how they are run and printed.
"""
