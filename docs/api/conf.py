"""Sphinx configuration of the glns API reference (built from the docstrings, numpydoc style).

Build it with::

    pip install ".[docs]"
    python -m sphinx -b html docs/api build/api

``tests/test_api_docs.py`` builds it with ``-W`` (a warning is an error).
"""

import glns

project = "glns"
author = "glns developers"
copyright = "glns developers"
release = glns.__version__
version = release

extensions = ["sphinx.ext.autodoc", "numpydoc"]

# numpydoc: autodoc's :members: lists the methods; numpydoc would add its own member tables
# (and autosummary stubs) on top of them
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
# checks of the docstrings themselves are tests/test_api_docs.py's job
numpydoc_validation_checks: set[str] = set()

autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
add_module_names = False

nitpicky = False
master_doc = "index"
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = f"glns {release} API reference"
