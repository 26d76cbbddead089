import setuptools

# Everything is declared in setup.cfg.
setuptools.setup()
