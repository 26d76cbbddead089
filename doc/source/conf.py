"""Sphinx configuration of the project's documentation.

Built with warnings as errors (``tox -e docs``, and by ``.ci/run``)::

    sphinx-build -W --keep-going -b html doc/source doc/build/html
"""

project = 'nova'
copyright = "the project's founding engineers"
author = "The project's founding engineers"

extensions = [
    'reno.sphinxext',
]

root_doc = 'index'
exclude_patterns = []
# Every ``literal`` in these pages is a name in the code or on the command
# line; nothing is meant as a cross-reference.
default_role = 'literal'
nitpicky = False

html_theme = 'alabaster'
html_static_path = []
html_title = 'nova: a compute service that cleans up after itself'
