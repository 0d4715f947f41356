"""Reading a submission's functions from its source, in a short-lived process of their own.

    found = parse(files, wanted)     # {op: {"function": {...}, "note", "review", "calls"} or {"status", "problem"}}

files is {edition path: text}; wanted is {op: {"file", "qualname", "forwards"}}, forwards being the forward
passes the instructor's own backward of that op calls. The source is parsed with `ast` in a process
started per submission (`python -I -S` this file; no student code runs in it), so a parser that
recurses too deep, runs out of memory or crashes costs that submission a line, never the class. The
answer comes back as JSON on a pipe, read with a bound.

For each op it takes what Python would run: the LAST top-level definition of the name (a note says when
there are two, with both lines; a name rebound after its def by anything else is refused). It flags
for an instructor's review, without judging intent, a backward pass that calls a forward pass its
reference does not, the gradient check's functions, finite differences (f(x + eps) - f(x - eps), or
x[i] += eps), an autodiff library, importlib, __import__, exec or eval; and it lists the other
backward passes the function calls (a cascade: attention's calls softmax's).

Only the standard library is imported here: the parent imports this module, the child runs it.
"""
import ast
import json
import os
import select
import subprocess
import sys
import time

PARSER = os.path.abspath(__file__)
TIMEOUT = 20.0                      # seconds the parse of one submission may take
MEMORY = 2 ** 30                    # bytes of address space the parsing process may use
AUTODIFF = ("torch", "jax", "jaxlib", "autograd", "tensorflow", "importlib")
DYNAMIC = ("__import__", "import_module", "exec", "eval")
EPS_NAMES = ("eps", "epsilon", "h", "delta", "step")


class ParseFailed(Exception):
    """The parsing process did not answer: it crashed, ran out of time, or said something unreadable."""


def parse(files, wanted, gradcheck_names=(), timeout=TIMEOUT, command=None):
    """{op: result} (see the module's docstring) from a parsing process of its own; ParseFailed if it dies."""
    request = json.dumps({"files": files, "wanted": wanted, "gradcheck": list(gradcheck_names)}).encode()
    limit = 2 * len(request) + 2 ** 16                # its answer holds at most the sources it was given
    process = subprocess.Popen(command or [sys.executable, "-I", "-S", PARSER], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={"PATH": os.defpath})
    try:
        try:
            process.stdin.write(request)
            process.stdin.close()
        except BrokenPipeError:
            pass
        answer, deadline = b"", time.monotonic() + timeout
        while len(answer) <= limit:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([process.stdout], [], [], left)[0]:
                raise ParseFailed(f"reading its source took over {timeout:g} s")
            chunk = os.read(process.stdout.fileno(), 2 ** 16)
            if not chunk:
                break
            answer += chunk
        if len(answer) > limit:
            raise ParseFailed("the parser's answer was larger than its source")
        status = process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        if status != 0:
            raise ParseFailed(f"the parser crashed on its source ({describe_status(status)})")
        try:
            return json.loads(answer)
        except ValueError:
            raise ParseFailed("the parser's answer could not be read") from None
    except subprocess.TimeoutExpired:
        raise ParseFailed(f"reading its source took over {timeout:g} s") from None
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()


def describe_status(status):
    """'signal 11' for a process killed by a signal, 'exit status 1' otherwise."""
    return f"signal {-status}" if status < 0 else f"exit status {status}"


def parse_all(files, wanted, gradcheck_names=()):
    """{op: result} for every wanted op: the function Python runs, or why there is none."""
    trees = {}
    for file in {w["file"] for w in wanted.values()} & set(files):
        try:
            trees[file] = ast.parse(files[file], filename=file)
        except SyntaxError as error:
            trees[file] = f"{file} does not parse: line {error.lineno}: {error.msg}"
        except (ValueError, RecursionError, MemoryError) as error:    # a NUL byte, 1+1+... nested too deep
            trees[file] = f"{file} cannot be parsed: {type(error).__name__}: {str(error)[:100]}"
    found = {}
    for op, w in wanted.items():
        tree = trees.get(w["file"])
        if tree is None:
            found[op] = {"status": "not written", "problem": f"{w['file']} is not in the submission"}
        elif isinstance(tree, str):
            found[op] = {"status": "error", "problem": tree}
        else:
            found[op] = one(tree, files[w["file"]], w, set(wanted), set(gradcheck_names))
    return found


def one(tree, text, wanted, ops, gradcheck_names):
    """The result for one op: its function (the last definition), a note on duplicates, a review, its calls."""
    file, qualname = wanted["file"], wanted["qualname"]
    owner, _, name = qualname.rpartition(".")
    body = tree.body
    if owner:
        classes = [node for node in body if isinstance(node, ast.ClassDef) and node.name == owner]
        if not classes:
            return {"status": "not written", "problem": f"no class {owner} in {file}"}
        body = classes[-1].body
    defs = [node for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name]
    if not defs:
        return {"status": "not written", "problem": f"no {qualname} in {file}"}
    node = defs[-1]
    later = [line for line in bindings(body, name) if line > node.lineno]
    if later or isinstance(node, ast.AsyncFunctionDef):
        where = f"line {later[-1]}" if later else f"line {node.lineno} (async def)"
        return {"status": "error", "problem": f"{qualname} in {file} is bound at {where} by something else than a "
                                              f"def: Python would run that, and only a def is graded"}
    note = (f"{qualname} is defined {len(defs)} times in {file} (lines {', '.join(str(d.lineno) for d in defs)}): "
            f"the last, line {node.lineno}, is the one Python runs and the one graded" if len(defs) > 1 else "")
    if is_stub(node):
        return {"status": "not written", "problem": f"{qualname} still raises NotImplementedError"
                + (f"; {note}" if note else ""), "note": note}
    lines = text.splitlines()[node.lineno - 1:node.end_lineno]        # the def without its decorators
    indent = len(lines[0]) - len(lines[0].lstrip())
    function = dict(qualname=qualname, file=file, line=node.lineno, source="\n".join(line[indent:] for line in lines),
                    module=file.removesuffix(".py").replace("/", "."))
    names = set(called(node))
    calls = sorted(n for n in names if n.endswith("_backward") and n.removesuffix("_backward") in ops and n != name)
    return {"function": function, "note": note, "calls": calls,
            "review": review(node, names, set(wanted.get("forwards", ())), gradcheck_names)}


def bindings(body, name):
    """Line numbers of the statements of body (not inside functions or classes) binding name other than by def."""
    found = []
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(statement, ast.ClassDef):
            found += [statement.lineno] if statement.name == name else []
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
                found.append(node.lineno)
            elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
                found.append(statement.lineno)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                found.append(node.lineno)                                     # a def under an if or a try
    return found


def is_stub(node):
    """A body that is only a docstring, the cache's unpacking and `raise NotImplementedError(...)`."""
    last = node.body[-1]
    return (isinstance(last, ast.Raise) and last.exc is not None and "NotImplementedError" in ast.unparse(last.exc)
            and all(isinstance(s, (ast.Expr, ast.Assign)) for s in node.body[:-1]))


def called(node):
    """The names of what node calls: f for f(...), obj.f(...) alike."""
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            if isinstance(call.func, ast.Name):
                yield call.func.id
            elif isinstance(call.func, ast.Attribute):
                yield call.func.attr


def review(node, names, forwards, gradcheck_names):
    """Why an instructor should look at this function (node, calling `names`), in a line; '' if nothing calls for it."""
    reasons = []
    extra = sorted({n for n in names if n.endswith("_forward") and n not in forwards})
    reasons += [f"calls {', '.join(extra)}"] if extra else []
    checks = sorted({n for n in names if n in gradcheck_names})
    reasons += [f"calls the gradient check's {', '.join(checks)}"] if checks else []
    dynamic = sorted({n for n in names if n in DYNAMIC})
    reasons += [f"calls {', '.join(dynamic)}"] if dynamic else []
    modules = list(imports(node))
    imported = sorted({top for top in (module.lstrip(".").split(".")[0] for module in modules) if top in AUTODIFF}
                      | {"the gradient check" for module in modules if "gradcheck" in module.split(".")})
    reasons += [f"imports {', '.join(imported)}"] if imported else []
    line = finite_difference(node)
    reasons += [f"finite differences at line {line}"] if line else []
    return "; ".join(reasons)


def imports(node):
    """The modules node imports, and module.name for each name a from-import takes ('..gradcheck.agrees')."""
    for item in ast.walk(node):
        if isinstance(item, ast.Import):
            yield from (alias.name for alias in item.names)
        elif isinstance(item, ast.ImportFrom):
            base = "." * item.level + (item.module or "")
            yield base
            yield from (f"{base}.{alias.name}" for alias in item.names)


def finite_difference(node):
    """The line of a finite difference in node: f(x + eps) - f(x - eps), or x[i] += eps; None if none."""
    for item in ast.walk(node):
        if isinstance(item, ast.AugAssign) and isinstance(item.op, (ast.Add, ast.Sub)) and \
                isinstance(item.target, ast.Subscript) and is_eps(item.value):
            return item.lineno
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Sub) and \
                isinstance(item.left, ast.Call) and isinstance(item.right, ast.Call) and \
                any(perturbed(arg) for call in (item.left, item.right) for arg in call.args):
            return item.lineno
    return None


def perturbed(node):
    """True when node holds something plus or minus a small step."""
    return any(isinstance(item, ast.BinOp) and isinstance(item.op, (ast.Add, ast.Sub))
               and (is_eps(item.left) or is_eps(item.right)) for item in ast.walk(node))


def is_eps(node):
    """A small step: a number of size at most 1e-3, a name such as eps or h, or a multiple of one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return 0 < abs(node.value) <= 1e-3
    if isinstance(node, ast.Name):
        return node.id.lower() in EPS_NAMES or node.id.lower().startswith("eps")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        return is_eps(node.left) or is_eps(node.right)
    return False


def main():
    """The parsing process: limits its memory and time, reads the request on stdin, writes the answer on stdout."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (int(TIMEOUT), int(TIMEOUT)))
    request = json.loads(sys.stdin.buffer.read())
    json.dump(parse_all(request["files"], request["wanted"], request["gradcheck"]), sys.stdout)


if __name__ == "__main__":
    main()
