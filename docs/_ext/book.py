"""The book's Sphinx extension: pages generated from the repository at build time.

Before Sphinx reads anything it writes, from whatever files exist then:
  notebooks/NN_*.ipynb       copies of the committed notebooks (rendered, never executed)
  code/<path>.rst            one annotated-source page per file of tinytransformer/
  api/<module>.rst           one API page per module (autodoc)
so no page can drift from the code. It also supplies the directives the start
page uses (the README's commands, the package map) and, once a notebook is
resolved, links its inline code (`F.attention`, `tt.nn.MultiHeadAttention`) to
the annotated source of what it names.
"""
import ast
import filecmp
import importlib
import json
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from annotate import annotate
from prose import prose_nodes, rst_safe_docstring

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
PACKAGE = ROOT / "tinytransformer"
GENERATED = ("notebooks", "code", "api")      # folders of docs/ that the build writes
DEFAULT_ALIASES = {"tt": "tinytransformer", "F": "tinytransformer.functional"}
MATHJAX_FILES = ["tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions",
                 "ui", "a11y", "adaptors", "sre"]


# ---- which files become which pages -------------------------------------------------

def module_name(path):
    """tinytransformer/ops/softmax.py -> tinytransformer.ops.softmax (packages without __init__)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


_LISTED_FILE = re.compile(r"^\s+(\w+)(?:\.py|/)\s", re.MULTILINE)


def _listed_order(text):
    """The file stems a map of files lists, in order: lines like "  tensor.py   Tensor and Tape"."""
    return list(dict.fromkeys(_LISTED_FILE.findall(text)))


def _reading_key(path):
    """Reading order: a package's __init__ first, then its files in the order its map lists
    them (the README's "What is inside" for the package, a sub-package's own docstring
    for that sub-package), then the files no map lists, alphabetically."""
    key = []
    folder = PACKAGE
    for part in path.relative_to(PACKAGE).parts:
        stem = part.removesuffix(".py")
        if folder == PACKAGE:
            readme = (ROOT / "README.md").read_text()
            listed = _listed_order(readme.partition("## What is inside")[2])
        elif (folder / "__init__.py").is_file():
            listed = _listed_order(ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or "")
        else:
            listed = []
        rank = -1 if stem == "__init__" else listed.index(stem) if stem in listed else len(listed)
        key.append((rank, stem))
        folder = folder / part
    return key


def package_files():
    """Every .py file of the package, in reading order (a package's __init__ first)."""
    files = [p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(files, key=_reading_key)


def code_docname(path):
    return "code/" + path.relative_to(PACKAGE).with_suffix("").as_posix()


def api_docname(path):
    return "api/" + module_name(path)


def notebook_files():
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


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


def _unlink_missing_api_entries(app, doctree):
    """A private helper has no API entry: show its name without a link."""
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


# ---- links from a notebook's inline code to the annotated source ---------------------

def _notebook_aliases(path):
    """{name: dotted path} for the tinytransformer imports of a notebook's code cells."""
    aliases = dict(DEFAULT_ALIASES)
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for name in node.names:
                    if name.name.startswith("tinytransformer"):
                        aliases[name.asname or name.name] = name.name
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tinytransformer"):
                for name in node.names:
                    aliases[name.asname or name.name] = f"{node.module}.{name.name}"
    return aliases


def _top_level_names():
    """{name: module.name} for the package's top-level defs and classes whose name is unique."""
    seen = {}
    for path in package_files():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                seen.setdefault(node.name, []).append(f"{module_name(path)}.{node.name}")
    return {name: paths[0] for name, paths in seen.items() if len(paths) == 1}


def _lookup(dotted):
    """The object a dotted path names, importing the longest module prefix; None if none."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attribute in parts[split:]:
            obj = getattr(obj, attribute, None)
        return obj
    return None


def _target(obj):
    """(annotated docname, anchor or None) for a module, function or class of the package."""
    if isinstance(obj, type(importlib)):
        module, qualname = obj, None
    elif callable(obj) and hasattr(obj, "__qualname__") and hasattr(obj, "__module__"):
        module, qualname = importlib.import_module(obj.__module__), obj.__qualname__
    else:
        return None
    source = getattr(module, "__file__", None)
    if not source or not Path(source).resolve().is_relative_to(PACKAGE):
        return None
    return code_docname(Path(source).resolve()), qualname


def resolve_inline_code(text, aliases, unique_names):
    """The (docname, anchor) an inline-code span of a notebook names, or None.

    `F.attention(q, k, v)` -> functional.attention; `tt.nn.MultiHeadAttention`;
    a name the notebook imported (`greedy`); a unique top-level name (`layer_norm_backward`).
    """
    name = re.split(r"[\s(\[=]", text.strip(), maxsplit=1)[0]
    if not re.fullmatch(r"[A-Za-z]\w*(\.\w+)*", name):
        return None
    head, _, rest = name.partition(".")
    candidates = []
    if head in aliases:
        candidates.append(aliases[head] + ("." + rest if rest else ""))
    if rest:
        candidates.append("tinytransformer." + name)
    elif name in unique_names:
        candidates.append(unique_names[name])
    for dotted in candidates:
        target = _target(_lookup(dotted))
        if target:
            return target
    return None


def notebooks_depend_on_the_package(app, doctree):
    """A notebook's links follow the package: re-read it when any file of the package changes."""
    if app.env.docname.startswith("notebooks/") or app.env.docname == "index":
        for path in package_files():
            app.env.note_dependency(str(path))


def link_notebook_code(app, doctree, docname):
    if docname.startswith("code/"):
        _unlink_missing_api_entries(app, doctree)
    if not docname.startswith("notebooks/") and docname != "index":
        return
    source = Path(app.env.doc2path(docname))
    aliases = _notebook_aliases(source) if source.suffix == ".ipynb" else DEFAULT_ALIASES
    unique_names = _top_level_names()
    for literal in list(doctree.findall(nodes.literal)):
        if isinstance(literal.parent, (nodes.reference, nodes.literal_block)):
            continue
        target = resolve_inline_code(literal.astext(), aliases, unique_names)
        if not target:
            continue
        target_doc, anchor = target
        uri = app.builder.get_relative_uri(docname, target_doc) + (f"#{anchor}" if anchor else "")
        reference = nodes.reference("", "", internal=True, refuri=uri, classes=["book-xref"])
        literal.replace_self(reference)
        reference += literal


class NotebookSourcePaths(SphinxPostTransform):
    """A notebook's Markdown link to a file of the package (`../tinytransformer/ops/softmax.py`,
    right in Jupyter) goes to that file's annotated page. Runs before MyST's own resolver,
    which would call the target missing."""

    default_priority = 5

    def run(self, **kwargs):
        for node in list(self.document.findall(addnodes.pending_xref)):
            target, docname = node.get("reftarget", ""), node.get("refdoc", "")
            if node.get("reftype") != "myst" or not docname.startswith("notebooks/") \
                    or not target.endswith(".py"):
                continue
            path = (ROOT / "notebooks" / target).resolve()
            if path.is_file() and path.is_relative_to(PACKAGE):
                uri = self.app.builder.get_relative_uri(docname, code_docname(path))
                node.replace_self(nodes.reference("", "", *node.children, internal=True, refuri=uri))


# ---- linkcode: API entries link to their annotated source ----------------------------

def linkcode_resolve(domain, info):
    """Used as conf.linkcode_resolve: the [source] link of an API entry, relative to api/."""
    if domain != "py" or not info.get("module"):
        return None
    target = _target(_lookup(f"{info['module']}.{info['fullname']}"))
    if not target:
        return None
    docname, anchor = target
    return "../" + docname + ".html" + (f"#{anchor}" if anchor else "")


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
    app.add_post_transform(NotebookSourcePaths)
    app.connect("build-finished", copy_mathjax)
    app.connect("build-finished", remove_stale_pages)
    app.add_directive("annotated-source", AnnotatedSource)
    app.add_directive("readme-command", ReadmeCommand)
    app.add_directive("package-map", PackageMap)
    app.connect("autodoc-process-docstring", _docstring_as_prose)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
