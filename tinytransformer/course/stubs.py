"""Stubs of backward passes, made with `ast` from the library's own source.

    stub_source(source, "tinytransformer/ops/softmax.py", {"softmax_backward"})  ->  new source

A stub keeps the def line, the docstring, and the first line if it unpacks the
cache; in place of the rest it says what to return and raises (its docstring in
triple double quotes):

    def softmax_backward(dout, cache):
        '''Return (dx,): one gradient per input of softmax_forward, each of its input's shape
        and dtype: dx like x.

        Special cases: along any axis; a masked input (-inf) has probability 0, ...

        Derived in: notebooks/03_every_op.ipynb (Softmax).
        '''
        out, axis = cache
        raise NotImplementedError("write softmax_backward first: tinytransformer/ops/softmax.py:34")

The message names the function and its file:line in the new file. What to
return comes from the library itself: the inputs from the forward pass's
signature (and their shapes from its docstring), and which of them get None
(ids, masks) from the reference's return statement; the special cases and
the notebook from stub_notes.py. The comment block right
above a stubbed def goes too (in the library it derives the backward pass);
every other line of the file stays as it was. The library carries no markers:
it is the solution, and the stubs are made from it.
"""
import ast
import re
import textwrap

from .stub_notes import NOTES


def backward_names(source):
    """The module-level functions named *_backward in source, in order."""
    return [node.name for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_backward")]


def stub_source(source, shown_path, names, later=()):
    """source with each function in names (a module-level name or Class.method) replaced by its stub.

    later: the names among them whose stub says the function comes in a later week (not this edition's work).
    """
    tree = ast.parse(source)
    functions = {qualname: node for qualname, node in _functions(tree)}
    missing = set(names) - set(functions)
    if missing:
        raise ValueError(f"stubs: {shown_path} has no function {', '.join(sorted(missing))}")
    forwards = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    lines = source.splitlines(keepends=True)
    out, done = [], 0                                 # the new lines; the old lines used so far
    for qualname in sorted(names, key=lambda q: functions[q].lineno):
        node = functions[qualname]
        first = node.lineno - 1 - len(node.decorator_list)
        out += lines[done:_derivation_start(lines, first)]
        def_line = len(out) + 1
        out += lines[first:_header_end(lines, node)]          # decorators and the def line(s), no comments
        indent = re.match(r"\s*", lines[node.body[0].lineno - 1]).group()
        forward = forwards.get(qualname.removesuffix("_backward") + "_forward")
        out += _docstring(node, forward, qualname, indent)
        rest = node.body[1:] if _is_docstring(node.body[0]) else node.body
        if rest and _unpacks_cache(rest[0]):
            out += lines[rest[0].lineno - 1:rest[0].end_lineno]
        message = (f"{qualname} comes in a later week: not in this edition ({shown_path}:{def_line})"
                   if qualname in later else f"write {qualname} first: {shown_path}:{def_line}")
        out.append(f'{indent}raise NotImplementedError("{message}")\n')
        done = node.end_lineno
    return "".join(out + lines[done:])


def without_derivations(source, names):
    """source without the comment block right above each module-level function in names (the derivation that
    a kept backward pass carries, which can spell out the backward pass it calls)."""
    lines = source.splitlines(keepends=True)
    for node in sorted((n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name in names),
                       key=lambda n: -n.lineno):
        first = node.lineno - 1 - len(node.decorator_list)
        del lines[_derivation_start(lines, first):first]
    return "".join(lines)


def _functions(tree):
    """(qualname, node) for every module-level function and every method of a module-level class."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}.{item.name}", item


def _header_end(lines, node):
    """Index just past the line that ends the def's signature (its closing ':')."""
    ends = [node.lineno] + [n.end_lineno for n in ast.walk(node.args) if hasattr(n, "end_lineno")]
    end = max(ends + ([node.returns.end_lineno] if node.returns else []))
    while not lines[end - 1].split("#")[0].rstrip().endswith(":"):
        end += 1
    return end


def _derivation_start(lines, first):
    """Index of the first line of the comment block just above line `first` (blank lines between
    allowed), if a blank line or the file's start comes before it; else `first`."""
    i = first
    while i > 0 and not lines[i - 1].strip():
        i -= 1
    top = i
    while top > 0 and lines[top - 1].lstrip().startswith("#"):
        top -= 1
    if top == i or (top > 0 and lines[top - 1].strip()):
        return first
    return top


def _is_docstring(statement):
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _unpacks_cache(statement):
    return (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name)
            and statement.value.id == "cache")


def _docstring(node, forward, qualname, indent):
    """The stub's docstring, as lines: the function's own, what to return, its special cases, where derived."""
    own = ast.get_docstring(node) or ""
    special, derived = NOTES.get(qualname.removesuffix("_backward"), ("", ""))
    paragraphs = [own, " ".join(_what_to_return(node, forward)) if forward or not own else ""]
    paragraphs += [f"Special cases: {special}." if special else "", f"Derived in: {derived}." if derived else ""]
    text = "\n\n".join(textwrap.fill(p, 100 - len(indent)) if "\n" not in p else p for p in paragraphs if p)
    body = textwrap.indent(text, indent).splitlines()
    return [f'{indent}"""{body[0].lstrip()}\n'] + [f"{line}\n" if line.strip() else "\n" for line in body[1:]] \
        + [f'{indent}"""\n']


def _what_to_return(node, forward):
    """What the function must return, in a sentence or two."""
    inner = {id(r) for f in ast.walk(node) if f is not node and isinstance(f, ast.FunctionDef) for r in ast.walk(f)}
    returned = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None
                and id(r) not in inner]                      # its own returns, not a function's defined inside it
    if not returned:
        return ["Return nothing."]
    value = returned[-1]
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    if forward is None:
        return [f"Return {len(items)} value{'s' * (len(items) != 1)}."]
    params = forward.args.args
    defaults = dict(zip([a.arg for a in params][len(params) - len(forward.args.defaults):], forward.args.defaults))
    inputs = [a.arg for a in params][:len(items)]
    shapes = _shapes(ast.get_docstring(forward) or "")
    grads = ["None" if _is_none(item) else f"d{name}" for item, name in zip(items, inputs)]
    tuple_text = f"({grads[0]},)" if len(grads) == 1 else f"({', '.join(grads)})"
    given = [f"d{name} like {name}" + (f" {shapes[name]}" if name in shapes else "")
             + (f" (None when {name} is None)" if _is_none(defaults.get(name)) else "")
             for item, name in zip(items, inputs) if not _is_none(item)]
    nones = [name for item, name in zip(items, inputs) if _is_none(item)]
    text = ", ".join(given) + (f"; None for {' and '.join(nones)}: it takes no gradient" if nones else "")
    return [f"Return {tuple_text}: one gradient per input of {forward.name}, each of its input's shape and "
            f"dtype: {text}."]


def _is_none(item):
    return isinstance(item, ast.Constant) and item.value is None


def _shapes(docstring):
    """{'x': '(..., d_in)', ...}: the shapes a forward's docstring gives its inputs ('x (..., d_in)')."""
    return dict(re.findall(r"\b(\w+) (\([^()]*\))", docstring))
