"""Which files of the repository become which pages of the book, in reading order."""
import ast
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


_LISTED_LINE = re.compile(r"^[ \t]+((?:\w+(?:\.py|/), )*\w+(?:\.py|/))\s", re.MULTILINE)


def _listed_order(text):
    """The file stems a map of files lists, in order: lines like "  tensor.py   Tensor and Tape"
    or "  data.py, text.py   old names"."""
    return list(dict.fromkeys(re.findall(r"\w+(?=\.py|/)", "\n".join(_LISTED_LINE.findall(text)))))


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


def code_docname(path):
    return "code/" + path.relative_to(PACKAGE).with_suffix("").as_posix()


def api_docname(path):
    return "api/" + module_name(path)


def notebook_files():
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
