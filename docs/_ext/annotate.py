"""Split a Python file into annotated sections: prose beside the code it explains.

A section is the prose a reader should see next to a piece of code: the
full-line comments just above it and, for a def or class, its docstring. The
code column keeps everything else, inline comments (shape comments) included,
with the file's own line numbers. Each def and class starts a section of its
own and gets an anchor: its qualified name (`Tensor.backward`), except that a
run of short defs (two lines at most) of one class or module, with no prose
between them (`Tensor.__add__`, `__radd__`, ...), is one section with an
anchor for each.

Pure: reads text, returns data; the Sphinx side lives in book.py.
"""
import ast
from dataclasses import dataclass, field


@dataclass
class Section:
    prose: list = field(default_factory=list)     # lines of text, "" between paragraphs
    code: list = field(default_factory=list)      # lines of source, as written
    first_line: int = 0                           # 1-based line number of code[0]
    anchor: str | None = None                     # qualified name of the def/class it opens
    grouped: list = field(default_factory=list)   # the short defs after it in the same section

    def has_code(self):
        return any(line.strip() for line in self.code)

    def anchors(self):
        return [self.anchor, *self.grouped] if self.anchor else []


def docstring(node):
    """The docstring of a module, class or def node as written, or None.

    Lines after the first lose only the indentation of the code around the docstring, so
    a formula indented inside it stays indented, even when every line after the first is
    part of it (inspect.cleandoc, and so autodoc, would take that indentation away too)."""
    body = getattr(node, "body", None)
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return None
    column = body[0].col_offset
    first, *rest = body[0].value.value.expandtabs().splitlines() or [""]
    rest = [line[min(column, len(line) - len(line.lstrip())):].rstrip() for line in rest]
    return "\n".join([first.strip()] + rest).strip("\n")


def _docstrings(tree):
    """{first line: (last line, text, owner)} for every docstring; owner is the def/class
    node, or the module."""
    found = {}
    for node in ast.walk(tree):
        text = docstring(node) if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                                    ast.AsyncFunctionDef)) else None
        if text is not None:
            found[node.body[0].lineno] = (node.body[0].end_lineno, text, node)
    return found


def _definitions(tree):
    """{line of the first decorator or of `def`/`class`: (qualified name, whether it is short: two lines
    at most)}, methods included."""
    starts = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                starts[first] = name, child.end_lineno - first <= 1
                visit(child, name + ".")
    visit(tree, "")
    return starts


def _joins(section, definition, short_names):
    """Whether a short def joins the section before it: that section is a run of short defs of the same class
    (or module), without prose."""
    name, short = definition
    parent = name.rpartition(".")[0]
    return (short and bool(section.anchors()) and not section.prose and set(section.anchors()) <= short_names
            and all(anchor.rpartition(".")[0] == parent for anchor in section.anchors()))


def annotate(source):
    """(module docstring or "", [Section]) for the text of one Python file."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    definitions = _definitions(tree)
    short_names = {name for name, short in definitions.values() if short}
    lines = source.splitlines()
    intro = ""
    sections = [Section()]
    number = 1
    while number <= len(lines):
        line = lines[number - 1]
        stripped = line.strip()
        current = sections[-1]
        if number in docstrings:
            last, text, owner = docstrings[number]
            if isinstance(owner, ast.Module):
                intro = text
            else:
                _add_paragraph(current.prose, text)
            number = last + 1
            continue
        if number in definitions and _joins(current, definitions[number], short_names):
            current.grouped.append(definitions[number][0])
        else:
            if (number in definitions or stripped.startswith("#")) and current.has_code():
                current = Section()
                sections.append(current)
            if number in definitions:
                current.anchor = definitions[number][0]
        if stripped.startswith("#") and not current.code:
            _add_prose_line(current.prose, stripped[1:])
        elif not stripped and current.prose and not current.code:
            current.prose.append("")      # a blank line between two comment blocks
        elif current.code or stripped:
            if not current.code:
                current.first_line = number
            current.code.append(line)
        number += 1
    for section in sections:
        _trim(section)
    return intro, [s for s in sections if s.has_code() or s.prose]


def _add_paragraph(prose, text):
    if prose:
        prose.append("")
    prose.extend(text.splitlines())


def _add_prose_line(prose, text):
    # text is what follows the "#": "" (a bare "#") is a paragraph break
    prose.append(text[1:] if text.startswith(" ") else text)


def _trim(section):
    while section.code and not section.code[-1].strip():
        section.code.pop()
    while section.prose and not section.prose[-1].strip():
        section.prose.pop()
