"""The book's Sphinx extension: what no maintained extension does.

Maintained extensions do the rest (conf.py): MyST-NB renders the notebooks, autosummary
and autodoc the API pages, linkcode their [source] links, sphinx-codeautolink the links
from code cells, sphinx-mathjax-offline bundles MathJax. This file adds:
  - the pages made from the repository before Sphinx reads anything: copies of the
    committed notebooks, one annotated-source page per file of the package, the API
    index (autosummary writes the API pages from it), in reading order (files.py);
  - the annotated-source page: comments and docstrings beside their code (annotate.py);
  - the start page's README commands and map of the package;
  - Jupyter's collapsed cells, collapsed in the book too, and under a notebook's title its .ipynb
    to download (read_notebook);
  - docstrings shown as written, formulas one step a line (prose.py);
  - search results with a summary, from the files too (search_text.py).
"""
import ast
import inspect
import re
import textwrap
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from annotate import annotate, docstring
from files import DOCS, PACKAGE, ROOT, api_docname, code_docname, module_name, notebook_files, package_files
from links import NotebookSourcePaths, link_inline_code, notebooks_depend_on_the_package
from prose import as_rst
from readme_command import readme_command
from search_text import add_search_scripts, write_page_text

GENERATED = ("notebooks", "code", "api")      # folders of docs/ that the build writes


# ---- the pages made from the repository -----------------------------------------------

def _write_if_changed(path, text):
    """Unchanged files keep their time stamp, so Sphinx reads again only what changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _title(text):
    return f"{text}\n{'=' * len(text)}\n"


def generate_sources(app):
    """Write the generated pages, and remove the ones whose file is gone."""
    wanted = {}
    for notebook in notebook_files():
        wanted[DOCS / "notebooks" / notebook.name] = notebook.read_text()
    files = package_files()
    for path in files:
        wanted[DOCS / (code_docname(path) + ".rst")] = (
            _title(path.relative_to(PACKAGE).as_posix())   # code blocks that are parts of a file:
            + "\n.. autolink-skip:: file\n"                # not for codeautolink, which parses wholes
            + f"\n.. annotated-source:: {path.relative_to(ROOT).as_posix()}\n")
    wanted[DOCS / "code" / "index.rst"] = _title("The annotated source") + """
Every file of the package, in reading order. Each page sets the comments and
docstrings (the derivations) beside the code they explain, with the file's own
line numbers. The pages are made from the files each time the book is built.

.. package-map::

.. toctree::
   :hidden:

""" + "".join(f"   {code_docname(p).removeprefix('code/')}\n" for p in files)
    wanted[DOCS / "api" / "index.rst"] = _title("API reference") + """
Every module's public functions and classes, from their docstrings, in the reading
order of the annotated source; each entry's [source] opens its annotated source.

.. autosummary::
   :toctree: .

""" + "".join(f"   {module_name(p)}\n" for p in files)
    for path, text in wanted.items():
        _write_if_changed(path, text)
    autosummary_pages = {DOCS / (api_docname(p) + ".rst") for p in files}
    for folder in GENERATED:
        for stale in (DOCS / folder).rglob("*"):
            if stale.is_file() and stale not in wanted and stale not in autosummary_pages:
                stale.unlink()


# How the notebooks name the course documents, and the section of docs/references.md each links to
COURSE_DOCUMENTS = [
    (r"Borealis AI tutorial|document 001", "tutorial"),
    (r"notes with PyTorch snippets|document 002", "notes-with-pytorch-snippets"),
    (r"lecture slides|document 003", "lecture-slides"),
    (r"course notes|document 000", "course-notes"),
    (r"(?:worked example's |common )?write-up|document 004", "worked-example"),
]


def cite_course_documents(markdown):
    """The first name of each course document in a markdown cell, as a link to its entry on the references page
    (not inside code, math or an existing link)."""
    for pattern, anchor in COURSE_DOCUMENTS:
        outside = r"(?<![`$\[\w-])"
        markdown = re.sub(outside + rf"({pattern})(?![^\[]*\])", rf"[\1](../references.md#{anchor})", markdown, count=1)
    return markdown


def read_notebook(text):
    """MyST-NB's reader for .ipynb (conf.nb_custom_formats): under the title, the notebook's links (its
    .ipynb, the annotated source); a cell whose code Jupyter shows collapsed (metadata jupyter.source_hidden)
    is collapsed in the book too, its output shown; a solution cell is collapsed whole, code and output,
    under a bar that says which exercise it solves (the check it calls), not "Show code cell content"; a
    figure's alt text is its cell's first line, a comment that says what the figure shows."""
    notebook = nbformat.reads(text, as_version=4)
    first = notebook.cells[0] if notebook.cells else None
    if first is not None and first.cell_type == "markdown" and first.source.startswith("# "):
        title, _, rest = first.source.partition("\n")
        first.source = f"{title}\n\n```{{notebook-links}}\n```\n{rest}"
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = cite_course_documents(cell.source)
            continue
        hidden = cell.metadata.get("jupyter", {})
        tags = cell.metadata.setdefault("tags", [])
        if "solution" in tags:                  # code and output one block, closed: its output is the answer too
            tags.append("hide-cell")
        else:
            for key, tag in (("source_hidden", "hide-input"), ("outputs_hidden", "hide-output")):
                if hidden.get(key) and tag not in tags:
                    tags.append(tag)
        figures = [key for output in cell.outputs for key in output.get("data", {}) if key.startswith("image/")]
        caption = cell.source.partition("\n")[0]
        if figures and caption.startswith("# "):
            cell.metadata.setdefault("mystnb", {})["image"] = {"alt": caption.removeprefix("# ")}
        exercise = re.search(r"check_exercise_(\d+)\(", cell.source) if "solution" in tags else None
        if exercise:
            cell.metadata.setdefault("mystnb", {}).update(
                code_prompt_show=f"Solution to exercise {exercise.group(1)}",
                code_prompt_hide=f"Hide the solution to exercise {exercise.group(1)}")
    return notebook


# ---- the annotated-source page ---------------------------------------------------------

def _code_block(section):
    text = "\n".join(section.code)
    block = nodes.literal_block(text, text, language="python", linenos=True)
    block["highlight_args"] = {"linenostart": section.first_line, "force": True}
    return block


def _api_links(module, qualnames):
    """The names a row defines, each linking to its API entry where autodoc made one (a private
    helper has none: Sphinx then shows the name without a link)."""
    names = nodes.paragraph("", "", classes=["annotated-name"])
    for i, qualname in enumerate(qualnames):
        shown = qualname if i == 0 else qualname.rpartition(".")[2]     # Tensor.__add__, __radd__, ...
        names += addnodes.pending_xref("", nodes.literal(shown, shown), refdomain="py", reftype="obj",
                                       reftarget=f"{module}.{qualname}", refexplicit=True)
        if i < len(qualnames) - 1:
            names += nodes.Text(" ")
    return names


class AnnotatedSource(SphinxDirective):
    """.. annotated-source:: tinytransformer/x.py  -- the file as rows of prose | code."""

    required_arguments = 1

    def run(self):
        path = ROOT / self.arguments[0]
        self.env.note_dependency(str(path))
        intro, sections = annotate(path.read_text())
        page = nodes.container(classes=["annotated-source"])
        if intro:
            page += nodes.container("", *self._prose(intro.splitlines()), classes=["annotated-intro"])
        for section in sections:
            row = nodes.container(classes=["annotated-row"])
            prose = nodes.container("", *self._prose(section.prose), classes=["annotated-prose"])
            row["ids"].extend(section.anchors())
            if section.anchors():
                prose.insert(0, _api_links(module_name(path), section.anchors()))
            row += prose
            row += nodes.container("", _code_block(section), classes=["annotated-code"])
            page += row
        return [page]

    def _prose(self, lines):
        return self.parse_text_to_nodes("\n".join(as_rst(lines)))


# ---- the start page: the README's commands and the map of the package ------------------

class ReadmeCommand(SphinxDirective):
    """.. readme-command:: main-command  -- that README command, as a bash block."""

    required_arguments = 1

    def run(self):
        self.env.note_dependency(str(ROOT / "README.md"))
        command = readme_command(self.arguments[0])
        return [nodes.literal_block(command, command, language="bash", classes=["readme-command"])]


def _doc_xref(docname, content, fromdoc):
    """A link to the page docname (from the root of docs/), showing content."""
    return addnodes.pending_xref("", content, refdomain="std", reftype="doc", reftarget="/" + docname,
                                 refexplicit=True, refdoc=fromdoc)


def _doc_ref(docname, content, fromdoc):
    """_doc_xref as a paragraph of its own (a table cell)."""
    return nodes.paragraph("", "", _doc_xref(docname, content, fromdoc))


class PackageMap(SphinxDirective):
    """.. package-map::  -- every file of the package: what it is, its annotated page and API."""

    def run(self):
        rows = []
        for path in package_files():
            self.env.note_dependency(str(path))
            shown = path.relative_to(PACKAGE).as_posix()
            summary = (docstring(ast.parse(path.read_text())) or "").split("\n\n")[0]
            cells = [_doc_ref(code_docname(path), nodes.Text(shown), self.env.docname),
                     *(self.parse_text_to_nodes("\n".join(as_rst([summary]))) or [nodes.paragraph()]),
                     _doc_ref(api_docname(path), nodes.Text("API"), self.env.docname)]
            rows.append(nodes.row("", *(nodes.entry("", cell) for cell in cells)))
        group = nodes.tgroup("", *(nodes.colspec(colwidth=width) for width in (22, 63, 15)),
                             nodes.tbody("", *rows), cols=3)
        return [nodes.table("", group, classes=["package-map"])]


class NotebookLinks(SphinxDirective):
    """```{notebook-links}```  -- a notebook's page: its .ipynb to download (the committed notebook,
    copied into the site by Sphinx) and the annotated source of the package it uses."""

    def run(self):
        name = Path(self.env.docname).name + ".ipynb"
        download = addnodes.download_reference("", "", nodes.literal(name, name), refdomain="", reftype="download",
                                               reftarget=name, refdoc=self.env.docname, refexplicit=True)
        code = _doc_xref("code/index", nodes.Text("the annotated source"), self.env.docname)
        return [nodes.paragraph("", "", nodes.Text("Download this notebook: "), download,
                                nodes.Text(". The package's code it calls, with its derivations: "), code,
                                nodes.Text("."), classes=["notebook-links"])]


# ---- docstrings on the API pages --------------------------------------------------------

def _codeautolink(app):
    """sphinx-codeautolink's state object, reached through its build-finished handler (None without it)."""
    for listener in app.events.listeners.get("build-finished", []):
        owner = getattr(listener.handler, "__self__", None)
        if isinstance(getattr(owner, "outdated_docs", None), set):
            return owner
    return None


def _link_every_page_read(app, env, docnames):
    """sphinx-codeautolink links the code cells of the pages it found out of date when the build began, before
    generate_sources had written them (a fresh build: none), and of no page re-read because the package changed:
    every page this build reads is one it must link."""
    state = _codeautolink(app)
    if state is not None and not state.do_nothing:
        state.outdated_docs |= {str(Path(docname)) for docname in docnames}


def _written_docstring(obj):
    """obj's docstring as its source file has it (annotate.docstring), or None."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError):
        return None
    return docstring(tree if inspect.ismodule(obj) else tree.body[0])


def _docstring_as_prose(app, what, name, obj, options, lines):
    """autodoc hands over docstrings with the indentation of an indented block taken away
    when every line after the first is in it: use the written one where it is the same text."""
    written = _written_docstring(obj)
    if written is not None and written.split() == "\n".join(lines).split():
        lines[:] = written.splitlines()
    lines[:] = as_rst(lines) or _backward_summary(name, obj)


def _backward_summary(name, obj):
    """An entry for a backward pass of ops/, which has no docstring (a student's stub keeps a docstring, and its
    derivation would be the answer): which forward pass it undoes; its [source] shows the derivation."""
    module, _, function = name.rpartition(".")
    forward = function.removesuffix("_backward") + "_forward"
    if not module.startswith("tinytransformer.ops") or not hasattr(inspect.getmodule(obj), forward):
        return []
    return [f"The backward pass of :func:`{forward}`: its inputs' gradients, from dout and the cache it returned.",
            "Its derivation is the comment beside its code ([source]).", ""]


def setup(app):
    app.connect("builder-inited", generate_sources, priority=400)     # before autosummary's 500
    app.connect("env-before-read-docs", _link_every_page_read)
    app.connect("doctree-read", notebooks_depend_on_the_package)
    app.connect("doctree-resolved", link_inline_code)
    app.add_post_transform(NotebookSourcePaths)
    app.connect("autodoc-process-docstring", _docstring_as_prose)
    app.add_directive("annotated-source", AnnotatedSource)
    app.add_directive("readme-command", ReadmeCommand)
    app.add_directive("package-map", PackageMap)
    app.add_directive("notebook-links", NotebookLinks)
    app.connect("html-collect-pages", write_page_text)
    app.connect("html-page-context", add_search_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
