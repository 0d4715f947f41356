"""The book's Sphinx extension: pages generated from the repository at build time.

Before Sphinx reads anything it writes, from whatever files exist then:
  notebooks/NN_*.ipynb       copies of the committed notebooks (rendered, never executed)
  code/<path>.rst            one annotated-source page per file of tinytransformer/
  api/<module>.rst           one API page per module (autodoc)
so no page can drift from the code. It also supplies the directives of the
annotated-source pages and of the start page (the README's commands, the package
map), bundles MathJax into the site and connects links.py (links into the
annotated source) and files.py (which file is which page).
"""
import ast
import filecmp
import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

from annotate import annotate
from files import DOCS, PACKAGE, ROOT, api_docname, code_docname, module_name, notebook_files, package_files
from links import NotebookSourcePaths, link_notebook_code, notebooks_depend_on_the_package
from prose import prose_nodes, rst_safe_docstring

GENERATED = ("notebooks", "code", "api")      # folders of docs/ that the build writes
MATHJAX_FILES = ["tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions",
                 "ui", "a11y", "adaptors", "sre"]


# ---- writing the generated sources ---------------------------------------------------

def _write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _copy_if_changed(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists() or not filecmp.cmp(source, target, shallow=False):
        shutil.copy2(source, target)


def _title(text):
    return f"{text}\n{'=' * len(text)}\n"


def generate_sources(app):
    """Write the generated pages, and remove the ones whose file is gone."""
    wanted = set()
    for notebook in notebook_files():
        target = DOCS / "notebooks" / notebook.name
        _copy_if_changed(notebook, target)
        wanted.add(target)

    files = package_files()
    for path in files:
        code = DOCS / (code_docname(path) + ".rst")
        _write_if_changed(code, f"{_title(path.relative_to(PACKAGE).as_posix())}\n"
                                f".. annotated-source:: {path.relative_to(ROOT).as_posix()}\n")
        api = DOCS / (api_docname(path) + ".rst")
        _write_if_changed(api, f"{_title(module_name(path))}\n.. automodule:: {module_name(path)}\n"
                               "   :members:\n   :undoc-members:\n   :show-inheritance:\n")
        wanted.update({code, api})

    code_toc = "\n".join("   " + code_docname(p)[len("code/"):] for p in files)
    index = DOCS / "code" / "index.rst"
    _write_if_changed(index, _title("The annotated source") + """
Every file of the package, in reading order. Each page sets the comments and
docstrings (the derivations) beside the code they explain, with the file's own
line numbers. The pages are made from the files each time the book is built.

.. package-map::

.. toctree::
   :hidden:

""" + code_toc + "\n")
    api_toc = "\n".join("   " + module_name(p) for p in files)
    index_api = DOCS / "api" / "index.rst"
    _write_if_changed(index_api, _title("API reference") + """
Every module's public functions and classes, from their docstrings.

.. toctree::
   :maxdepth: 1

""" + api_toc + "\n")
    wanted.update({index, index_api})

    for folder in GENERATED:
        for stale in (DOCS / folder).rglob("*"):
            if stale.is_file() and stale not in wanted:
                stale.unlink()


# ---- the annotated-source page -------------------------------------------------------

def _code_block(section):
    text = "\n".join(section.code)
    block = nodes.literal_block(text, text, language="python", linenos=True)
    block["highlight_args"] = {"linenostart": section.first_line, "force": True}
    return block


class AnnotatedSource(SphinxDirective):
    """.. annotated-source:: tinytransformer/x.py  -- the file as rows of prose | code."""

    required_arguments = 1

    def run(self):
        path = ROOT / self.arguments[0]
        self.env.note_dependency(str(path))
        intro, sections = annotate(path.read_text())
        page = nodes.container(classes=["annotated-source"])
        if intro:
            page += nodes.container("", *prose_nodes(intro), classes=["annotated-intro"])
        for section in sections:
            row = nodes.container(classes=["annotated-row"])
            prose = nodes.container("", *prose_nodes("\n".join(section.prose)),
                                    classes=["annotated-prose"])
            if section.anchor:
                row["ids"].append(section.anchor)
                prose.insert(0, _api_link(self.env.docname, api_docname(path), module_name(path),
                                          section.anchor, self.env.app.builder))
            row += prose
            row += nodes.container("", _code_block(section), classes=["annotated-code"])
            page += row
        return [page]


def _api_link(fromdoc, api_doc, module, qualname, builder):
    """A small heading for a def/class: its name, linking to its API entry (kept only if
    autodoc made that entry: see _unlink_missing_api_entries)."""
    full_name = f"{module}.{qualname}"
    uri = builder.get_relative_uri(fromdoc, api_doc) + "#" + full_name
    ref = nodes.reference("", "", internal=True, refuri=uri, classes=["annotated-api"])
    ref["book_api_entry"] = full_name
    ref += nodes.literal(qualname, qualname)
    return nodes.paragraph("", "", ref, classes=["annotated-name"])


def _unlink_missing_api_entries(app, doctree, docname):
    """A private helper has no API entry: show its name without a link."""
    if not docname.startswith("code/"):
        return
    entries = app.env.domaindata.get("py", {}).get("objects", {})
    for ref in list(doctree.findall(nodes.reference)):
        if ref.get("book_api_entry") and ref["book_api_entry"] not in entries:
            ref.replace_self(ref.children)


# ---- the start page's directives -----------------------------------------------------

def readme_command(marker):
    """The line after the README's `<!-- marker -->` and its ```bash fence (as .ci/run reads it)."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index(f"<!-- {marker} -->")
    fence = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    return lines[fence + 1]


class ReadmeCommand(SphinxDirective):
    """.. readme-command:: main-command  -- that README command, as a bash block."""

    required_arguments = 1

    def run(self):
        self.env.note_dependency(str(ROOT / "README.md"))
        command = readme_command(self.arguments[0])
        return [nodes.literal_block(command, command, language="bash", classes=["readme-command"])]


def _first_line(path):
    tree = ast.parse(path.read_text())
    doc = ast.get_docstring(tree) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


class PackageMap(SphinxDirective):
    """.. package-map::  -- every file of the package: what it is, its annotated page and API."""

    def run(self):
        table = nodes.table(classes=["package-map"])
        group = nodes.tgroup(cols=3)
        table += group
        for width in (22, 63, 15):
            group += nodes.colspec(colwidth=width)
        body = nodes.tbody()
        group += body
        for path in package_files():
            self.env.note_dependency(str(path))
            shown = path.relative_to(PACKAGE).as_posix()
            cells = [
                _doc_ref("/" + code_docname(path), nodes.literal(shown, shown), self.env.docname),
                nodes.paragraph("", "", *_inline(_first_line(path))),
                _doc_ref("/" + api_docname(path), nodes.Text("API"), self.env.docname),
            ]
            row = nodes.row()
            for cell in cells:
                entry = nodes.entry()
                entry += cell if isinstance(cell, nodes.paragraph) else nodes.paragraph("", "", cell)
                row += entry
            body += row
        return [table]


def _doc_ref(docname, content, fromdoc):
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=docname,
                                refexplicit=True, refdoc=fromdoc)
    ref += content
    return ref


def _inline(text):
    paragraph = prose_nodes(text)[0]
    return list(paragraph.children)


def remove_stale_pages(app, exception):
    """Sphinx leaves the page of a removed source in the output: a renamed notebook or a
    moved file would stay on the site under its old name. Remove those pages."""
    if exception or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for folder in GENERATED:
        for page in (outdir / folder).rglob("*.html"):
            if page.relative_to(outdir).with_suffix("").as_posix() not in app.env.all_docs:
                page.unlink()


# ---- the math renderer, copied into the site -----------------------------------------

def copy_mathjax(app, exception):
    """Bundle MathJax 3 (from the django-static-mathjax wheel) into _static/mathjax."""
    if exception or app.builder.format != "html":
        return
    import mathjax
    source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_FILES:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            _copy_if_changed(source / part, target / part)


def _docstring_as_prose(app, what, name, obj, options, lines):
    lines[:] = rst_safe_docstring(lines)


def setup(app):
    app.connect("builder-inited", generate_sources)
    app.connect("doctree-read", notebooks_depend_on_the_package)
    app.connect("doctree-resolved", link_notebook_code)
    app.connect("doctree-resolved", _unlink_missing_api_entries)
    app.add_post_transform(NotebookSourcePaths)
    app.connect("build-finished", copy_mathjax)
    app.connect("build-finished", remove_stale_pages)
    app.add_directive("annotated-source", AnnotatedSource)
    app.add_directive("readme-command", ReadmeCommand)
    app.add_directive("package-map", PackageMap)
    app.connect("autodoc-process-docstring", _docstring_as_prose)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
