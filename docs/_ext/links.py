"""Links into the annotated source: from a notebook's inline code (`F.attention`,
`tt.nn.MultiHeadAttention`, which sphinx-codeautolink leaves alone: it links code cells),
from its Markdown links to a file of the package, and from each API entry's [source]."""
import functools
import importlib
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform

from annotate import annotate
from files import PACKAGE, ROOT, code_docname, package_files

ALIASES = {"tt": "tinytransformer", "F": "tinytransformer.functional"}   # as every notebook imports them


@functools.cache
def _anchors(path):
    return {anchor for section in annotate(path.read_text())[1] for anchor in section.anchors()}


def source_link(module, qualname=None):
    """(annotated docname, anchor or None) for a module of the package and a def/class in it;
    None for a module outside the package."""
    base = ROOT.joinpath(*module.split("."))
    path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
    if path is None or not path.is_relative_to(PACKAGE):
        return None
    return code_docname(path), qualname if qualname in _anchors(path) else None


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


def resolve_inline_code(text, documented):
    """The (docname, anchor) an inline-code span names, or None: `F.attention(q, k, v)`,
    `tt.nn.MultiHeadAttention`, `data.make_batch` (a module of the package), or a function
    or class the API documents once (`greedy`). Followed to where it is defined."""
    name = re.split(r"[\s(\[=]", text.strip(), maxsplit=1)[0]
    if not re.fullmatch(r"[A-Za-z]\w*(\.\w+)*", name):
        return None
    head, _, rest = name.partition(".")
    if head in ALIASES:
        return _definition(ALIASES[head] + ("." + rest if rest else ""))
    if rest:
        return _definition("tinytransformer." + name)
    # a bare name: the API may document one function under two modules (a re-export)
    targets = {_definition(full) for full in documented if full.endswith("." + name)}
    return targets.pop() if len(targets) == 1 else None


def _definition(dotted):
    """source_link of the module, class or function a dotted path names, where it is defined."""
    obj = _lookup(dotted)
    if isinstance(obj, type(importlib)):
        return source_link(obj.__name__)
    if callable(obj) and hasattr(obj, "__qualname__"):
        return source_link(getattr(obj, "__module__", ""), obj.__qualname__)
    return None


def notebooks_depend_on_the_package(app, doctree):
    """A notebook's links follow the package: read it again when a file of the package changes."""
    if app.env.docname.startswith("notebooks/") or app.env.docname == "index":
        for path in package_files():
            app.env.note_dependency(str(path))


def link_inline_code(app, doctree, docname):
    if not docname.startswith("notebooks/") and docname != "index":
        return
    documented = [name for name, entry in app.env.domains["py"].objects.items()
                  if entry.objtype in ("function", "class", "exception")]
    for literal in list(doctree.findall(nodes.literal)):
        if isinstance(literal.parent, (nodes.reference, nodes.literal_block)):
            continue
        target = resolve_inline_code(literal.astext(), documented)
        if target:
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


def linkcode_resolve(domain, info):
    """conf.linkcode_resolve: an API entry's [source] link, to its row of the annotated source
    (none for data, which has no row of its own)."""
    target = source_link(info["module"], info["fullname"]) if domain == "py" and info.get("module") else None
    if not target or not target[1]:
        return None
    return f"../{target[0]}.html#{target[1]}"
