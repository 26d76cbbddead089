"""Choosing hosts: where a new instance goes (the compute API) and where
an evacuated one goes (the conductor). Neither owns it; both use
``target.TargetChooser``."""
