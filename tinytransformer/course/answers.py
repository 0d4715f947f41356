"""What a backward pass computes, written so that a copy under other names is recognised: an edition's scan.

    forms = answer_forms({"silu_backward"})          # {"v0 + v1 * v0 * (1.0 - v0)": "silu_backward", ...}
    without_answers(cell, forms)                     # a notebook cell's lines that compute one, left out

A form is an arithmetic expression of a backward pass's body, with its variables renamed v0, v1, ... in order
of appearance (np stays np) and its numbers as floats, so `s + x * s * (1 - s)` in a notebook is silu's
`s + x * s * (1.0 - s)`. Forms shorter than FORM_CHARS, or that any other function of the library computes too
(layer norm's backward centres dxhat as its forward centres x), are no answer: they would flag honest code.
"""
import ast
import copy
import functools

from .grader import PROJECT

FORM_CHARS = 22          # the shortest form that counts: silu's is 26 characters, `v0 * v1 + v2` is no answer
MODULES = {"np", "numpy", "math"}


class Renamed(ast.NodeTransformer):
    """Variables as v0, v1, ... in order of appearance, numbers as floats."""

    def __init__(self):
        self.names = {}

    def visit_Name(self, node):
        if node.id in MODULES:
            return node
        return ast.copy_location(ast.Name(self.names.setdefault(node.id, f"v{len(self.names)}"), node.ctx), node)

    def visit_Constant(self, node):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Constant(float(node.value)), node)
        return node


def forms(tree):
    """The forms of every arithmetic expression in tree (an ast node) of FORM_CHARS or more, with two variables."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            renamer = Renamed()
            text = ast.unparse(renamer.visit(copy.deepcopy(node)))
            if len(text) >= FORM_CHARS and len(renamer.names) >= 2:
                found.add(text)
    return found


@functools.cache
def library_forms(project=PROJECT):
    """({backward pass: its forms}, the forms of every other function of the library) of project's package."""
    backward, other = {}, set()
    for path in sorted((project / "tinytransformer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                if node.name.endswith("_backward") and "ops" in path.parts:
                    body = node.body[1:] if ast.get_docstring(node) else node.body
                    backward[node.name] = set().union(set(), *map(forms, body))
                elif node.name != "backward":
                    other |= forms(node)
    return backward, frozenset(other)


def answer_forms(blanked, project=PROJECT):
    """{form: backward pass} of what the blanked backward passes compute and nothing else of the library does."""
    backward, other = library_forms(project)
    return {form: name for name in sorted(blanked) for form in backward.get(name, ()) if form not in other}


def without_answers(cell, found):
    """A notebook code cell (a dict) with each top-level statement that prints or evaluates one of the `found`
    forms ({form: backward pass}) replaced by a comment, its outputs cleared; the cell as it was when none does
    (or it is no Python: a magic). Assignments are kept: later cells may need what they define."""
    source = "".join(cell["source"])
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return cell
    lines = source.splitlines(keepends=True)
    hits = [(node, sorted(forms(node) & set(found))) for node in tree.body if isinstance(node, ast.Expr)]
    hits = [(node, spelled) for node, spelled in hits if spelled]
    for node, spelled in reversed(hits):
        note = f"# left out of this edition: it printed {found[spelled[0]]}'s answer, which is yours to write\n"
        lines[node.lineno - 1:node.end_lineno] = [note]
    if not hits:
        return cell
    return {**cell, "source": lines, "outputs": [], "execution_count": None}
