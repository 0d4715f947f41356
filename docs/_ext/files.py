"""Which files of the repository become which pages of the book, in reading order."""
import ast
import importlib
import inspect
import re
from pathlib import Path

from annotate import docstring

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
PACKAGE = ROOT / "tinytransformer"


def module_name(path):
    """tinytransformer/ops/softmax.py -> tinytransformer.ops.softmax (packages without __init__)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# The book's reading order of the package's top level: the order a reader learns it in, ops to the tape to the
# layers to training, then what surrounds them (the tokenizer, the course kit, the tools, the command line) and
# last the infrastructure, as the README's map lists it (tests/test_layout.py checks that the two agree). A
# sub-package's files follow the map in its own docstring (ops/__init__.py, nn/__init__.py, ...).
READING_ORDER = ["ops", "tensor", "functional", "gradcheck", "nn", "optim", "decode", "train", "tasks", "vocabulary",
                 "checkpoint", "metrics", "tokenizer", "pretrained", "course", "tools", "cli", "__main__", "files", "memory"]

_LISTED_LINE = re.compile(r"^[ \t]+((?:\w+(?:\.py|/), )*\w+(?:\.py|/))\s", re.MULTILINE)


def _listed_order(text):
    """The file stems a sub-package's map of files lists, in order: lines like "  softmax.py   softmax and log-softmax"."""
    return list(dict.fromkeys(re.findall(r"\w+(?=\.py|/)", "\n".join(_LISTED_LINE.findall(text)))))


def _reading_key(path):
    """Reading order: a package's __init__ first, then its files in the order READING_ORDER (the top level) or
    the package's own docstring lists them, then the files no list names, alphabetically."""
    key = []
    folder = PACKAGE
    for part in path.relative_to(PACKAGE).parts:
        stem = part.removesuffix(".py")
        if folder == PACKAGE:
            listed = READING_ORDER
        elif (folder / "__init__.py").is_file():
            listed = _listed_order(docstring(ast.parse((folder / "__init__.py").read_text())) or "")
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


def defined_names(path):
    """The names a file's top level defines (def, class, assignment), in the order the file defines them."""
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)]
    return list(dict.fromkeys(names))


def public_definitions(path):
    """The public classes and functions a file's top level defines, in order: what its API page lists."""
    return [node.name for node in ast.parse(path.read_text()).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_")]


def shadowed_modules():
    """{module: public_definitions} for a module the package re-exports a same-named function of
    (tinytransformer.gradcheck): autosummary finds the function and writes the page from the function template
    (docs/_templates/autosummary/function.rst), which documents the module from this list."""
    shadowed = {}
    for path in package_files():
        name = module_name(path)
        parent, _, last = name.rpartition(".")
        if parent and not inspect.ismodule(getattr(importlib.import_module(parent), last, None)):
            shadowed[name] = public_definitions(path)
    return shadowed


def source_order():
    """{module: its defined_names} for every file of the package: the order of the API pages' summary tables."""
    return {module_name(path): defined_names(path) for path in package_files()}


def code_docname(path):
    return "code/" + path.relative_to(PACKAGE).with_suffix("").as_posix()


def api_docname(path):
    return "api/" + module_name(path)


def notebook_files():
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
