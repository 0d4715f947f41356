"""Links into the annotated source: from a notebook's inline code (`F.attention`,
`tt.nn.MultiHeadAttention`) and Markdown links (`../tinytransformer/ops/softmax.py`),
and from each API entry ([source])."""
import ast
import importlib
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from files import PACKAGE, ROOT, code_docname, module_name, package_files

DEFAULT_ALIASES = {"tt": "tinytransformer", "F": "tinytransformer.functional"}


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
