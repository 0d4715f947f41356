"""Stubs of backward passes, made with `ast` from the library's own source.

    stub_source(source, "tinytransformer/ops/softmax.py", {"softmax_backward"})  ->  new source

A stub keeps the def line, the docstring, and the first line if it unpacks the
cache; in place of the rest it says what to return and raises:

    def softmax_backward(dout, cache):
        out, axis = cache
        # return (dx,): one gradient per input of softmax_forward, each of its input's shape:
        #   dx like x
        raise NotImplementedError("write softmax_backward first: tinytransformer/ops/softmax.py:28")

The message names the function and its file:line in the new file. What to
return comes from the library itself: the inputs from the forward pass's
signature (and their shapes from its docstring), and which of them get None
(ids, masks) from the reference's return statement. The comment block right
above a stubbed def goes too (in the library it derives the backward pass);
every other line of the file stays as it was. The library carries no markers:
it is the solution, and the stubs are made from it.
"""
import ast
import re
import textwrap


def backward_names(source):
    """The module-level functions named *_backward in source, in order."""
    return [node.name for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_backward")]


def stub_source(source, shown_path, names):
    """source with each function in names (a module-level name or Class.method) replaced by its stub."""
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
        kept = node.body[:1] if _is_docstring(node.body[0]) else []
        rest = node.body[len(kept):]
        if rest and _unpacks_cache(rest[0]):
            kept.append(rest[0])
        for statement in kept:
            out += lines[statement.lineno - 1:statement.end_lineno]
        indent = re.match(r"\s*", lines[node.body[0].lineno - 1]).group()
        forward = forwards.get(qualname.removesuffix("_backward") + "_forward")
        out += [f"{indent}# {line}\n" for line in _what_to_return(node, forward)]
        out.append(f'{indent}raise NotImplementedError("write {qualname} first: {shown_path}:{def_line}")\n')
        done = node.end_lineno
    return "".join(out + lines[done:])


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


def _what_to_return(node, forward):
    """The comment lines of a stub: what the function must return."""
    returned = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
    if not returned:
        return ["return nothing: see the docstring for what it must do"]
    value = returned[-1]
    items = value.elts if isinstance(value, ast.Tuple) else [value]
    if forward is None:
        return [f"return {len(items)} value{'s' * (len(items) != 1)}"]
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
    return ([f"return {tuple_text}: one gradient per input of {forward.name}, each of its input's shape:"]
            + textwrap.wrap(text, 92, initial_indent="  ", subsequent_indent="  "))


def _is_none(item):
    return isinstance(item, ast.Constant) and item.value is None


def _shapes(docstring):
    """{'x': '(..., d_in)', ...}: the shapes a forward's docstring gives its inputs ('x (..., d_in)')."""
    return dict(re.findall(r"\b(\w+) (\([^()]*\))", docstring))
