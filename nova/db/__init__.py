"""Persistence: SQLAlchemy models, the engine and sessions, and migrations.

Only ``nova/objects/`` uses this package; layers above speak in objects.
"""
