"""Sphinx configuration of the book: python -m sphinx -b html docs docs/_build/html"""
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]   # this tree's package; the book's extension

from files import shadowed_modules, source_order  # noqa: E402  (needs the path above)
from links import linkcode_resolve  # noqa: E402,F401  (needs the path above; read by linkcode)

project = "tinytransformer"
author = "the tinytransformer authors"
copyright = "the tinytransformer authors, MIT licence"
html_title = "tinytransformer: the book"

extensions = [
    "myst_nb",                  # the notebooks, from their committed outputs
    "sphinx.ext.autodoc",       # the API reference, from the docstrings ...
    "sphinx.ext.autosummary",   # ... one page per module, listed in api/index (book.py writes it)
    "sphinx.ext.linkcode",      # each API entry links to its annotated source (links.py)
    "sphinx.ext.mathjax",       # math, rendered in the browser by MathJax ...
    "sphinx-mathjax-offline",   # ... copied into the site: nothing comes from a CDN
    "sphinx_codeautolink",      # names in the notebooks' code cells link to their API entries
    "book",                     # generated pages, annotated source, inline-code links (_ext/)
]

nb_execution_mode = "off"                    # never execute: render the committed outputs
nb_merge_streams = True
nb_custom_formats = {".ipynb": "book.read_notebook"}   # Jupyter's collapsed cells stay collapsed
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 2                     # references.md#lecture-slides: the course documents, cited
# a notebook jumping from # to ### renders fine: not worth failing the book's test over
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

smartquotes = False                          # shapes stay (..., T, d_k), quotes stay as in the code
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autosummary_generate = ["api/index.rst"]
autosummary_context = {"source_order": source_order(),   # the tables list a module's names as its file does
                       "shadowed_modules": shadowed_modules()}
templates_path = ["_templates"]
codeautolink_concat_default = True           # a notebook's cells build on its earlier imports

html_theme = "furo"
html_static_path = ["_static"]
html_css_files = ["book.css"]
html_favicon = "_static/favicon.svg"         # without one, every browser asks for /favicon.ico: a 404
html_copy_source = False
html_show_search_summary = False             # a summary fetches each result page: refused from file://
html_show_sourcelink = False

exclude_patterns = ["_build", "_ext", "_templates", "examples", "**/.ipynb_checkpoints"]
