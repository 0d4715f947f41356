"""Reading a submission's source for what the grader shows and flags, in a short-lived process of its own.

    found = parse(files, wanted)     # {op: {"function": {...}, "note", "review", "calls"} or {"status", "problem"}}

files is {edition path: text}; wanted is {op: {"file", "qualname", "forwards"}}, forwards being the forward
passes the instructor's own backward of that op calls. Nothing here decides what is graded: the sandboxed
child imports the submission's files as Python would and grades the object each name holds after import
(child.py). This read only compiles each file (a file that does not compile does not import, and its ops
say so in Python's own words), and, with `ast`, says where the definitions of each name are and what in
them calls for an instructor's review. It runs in a process started per submission (`python -I -S` this
file; no student code runs in it), so a parser that recurses too deep, runs out of memory or crashes costs
that submission a line, never the class. The answer comes back as JSON on a pipe, read with a bound.

Line numbers are the tokenizer's, as in Python's tracebacks: a form feed or a `\\x1c` inside a line does
not start a new one (str.splitlines would), and only \\n, \\r\\n and \\r end a line, as when Python imports.

The review is a heuristic, for an instructor's eyes, without judging intent. It flags a backward pass (or
a module-level helper it calls) that calls a forward pass its reference does not, the gradient check's
functions, finite differences (f(x + eps) - f(x - eps), or x[i] += eps with any small step), an autodiff
library, importlib, __import__, exec or eval, a name looked up by a string (globals()[...], vars(),
sys.modules, getattr on a module or with a computed name); and, for every op of its file, a file that
rebinds names behind Python's back (globals()[...] = ..., setattr on a module, f.__code__ = ...) or
imports the gradient check or an autodiff library at its top. It lists the other backward passes the
function calls (a cascade: attention's calls softmax's).

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
# The grader's own modules, and every module under them, stay the instructor's in the sandbox whatever a submission
# holds: the child grades with them (the tape's graph ops take their gradients from gradcheck). So does the package
# itself, whose __init__ imports nothing there.
INSTRUCTORS = ("tinytransformer.gradcheck", "tinytransformer.course")
AUTODIFF = ("torch", "jax", "jaxlib", "autograd", "tensorflow", "importlib")
DYNAMIC = ("__import__", "import_module", "exec", "eval", "compile")
NAMESPACES = ("globals", "vars", "locals")
EPS_NAMES = ("eps", "epsilon", "h", "delta", "step")
SMALL = 1e-3                        # a number this small, added to an input, is a finite-difference step


class ParseFailed(Exception):
    """The parsing process did not answer: it crashed, ran out of time, or said something unreadable."""


def parse(files, wanted, gradcheck_names=(), timeout=TIMEOUT, command=None):
    """{op: result} (see the module's docstring) from a parsing process of its own; ParseFailed if it dies.
    files: the texts of the submission's package; only those of `wanted` are read here. Each op's "function"
    carries them all (with_sources): the child imports them."""
    read = {file: files[file] for file in {w["file"] for w in wanted.values()} if file in files}
    request = json.dumps({"files": read, "wanted": wanted, "gradcheck": list(gradcheck_names)}).encode()
    limit = 2 * len(request) + 2 ** 16                # its answer is far smaller than the sources it was given
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
            found = json.loads(answer)
        except ValueError:
            raise ParseFailed("the parser's answer could not be read") from None
    except subprocess.TimeoutExpired:
        raise ParseFailed(f"reading its source took over {timeout:g} s") from None
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
    return with_sources(found, files)


def with_sources(found, files):
    """found, each op's function given the texts of the package's files (one dict, shared) that Python may import in
    the sandbox: all but the grader's own (instructors)."""
    sources = {file: text for file, text in files.items() if not instructors(file)}
    for f in found.values():
        if isinstance(f, dict) and "function" in f:
            f["function"]["files"] = sources
    return found


def instructors(file):
    """True when the edition path names the package itself, one of INSTRUCTORS or a module under them, by the module
    Python would import it as (gradcheck/__init__.py is gradcheck.py's module, course.py the course package's)."""
    module = file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return module == "tinytransformer" or any(module == m or module.startswith(m + ".") for m in INSTRUCTORS)


def describe_status(status):
    """'signal 11' for a process killed by a signal, 'exit status 1' otherwise."""
    return f"signal {-status}" if status < 0 else f"exit status {status}"


def as_imported(text):
    """text with its line ends as Python reads a file it imports: \\r\\n and \\r become \\n."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_all(files, wanted, gradcheck_names=()):
    """{op: result} for every wanted op: the function to call, or why the file cannot hold it."""
    trees = {}
    for file in {w["file"] for w in wanted.values()} & set(files):
        text = as_imported(files[file])
        try:
            compile(text, file, "exec", dont_inherit=True)          # what import would say, without running it
            trees[file] = ast.parse(text, filename=file)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:   # a NUL byte; 1+1+... too deep
            trees[file] = f"does not import: {type(error).__name__}: {one_line(error)}" + \
                ("" if isinstance(error, SyntaxError) else f" ({file})")
    found = {}
    for op, w in wanted.items():
        tree = trees.get(w["file"])
        if tree is None:
            found[op] = {"status": "not written", "problem": f"{w['file']} is not in the submission"}
        elif isinstance(tree, str):
            found[op] = {"status": "error", "problem": tree}
        else:
            found[op] = one(tree, w, set(wanted), set(gradcheck_names))
    return found


def one_line(error):
    """An exception's text in one line of at most 200 characters."""
    return " ".join(str(error).split())[:200]


def one(tree, wanted, ops, gradcheck_names):
    """The result for one op: the function the child imports, where the name is defined, a review, its calls."""
    file, qualname = wanted["file"], wanted["qualname"]
    name = qualname.rpartition(".")[2]
    defs = definitions(tree, qualname)
    lines = [first_line(node) for node in defs]
    note = (f"{qualname} is defined {len(defs)} times in {file} (lines {', '.join(map(str, lines))}): "
            f"graded is the one the name holds once the file has run" if len(defs) > 1 else "")
    helpers = module_functions(tree)
    reached = with_helpers(defs, helpers)
    names = {n for node in reached for n in called(node)}
    calls = sorted(n for n in names if n.endswith("_backward") and n.removesuffix("_backward") in ops and n != name)
    function = dict(qualname=qualname, file=file, module=file.removesuffix(".py").replace("/", "."))
    reasons = review(reached, names, set(wanted.get("forwards", ())), gradcheck_names, small_names(tree),
                     imported_modules(tree))
    return {"function": function, "note": note, "calls": calls,
            "review": "; ".join(dict.fromkeys(reasons + file_review(tree, gradcheck_names)))}


def first_line(node):
    """The line a def starts on, as its code object says (co_firstlineno): its first decorator's, else the def's."""
    return node.decorator_list[0].lineno if node.decorator_list else node.lineno


def statements(body):
    """The statements of body that run when it runs: into if, try, with, for, while and match, not into defs
    or classes."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(statement, field, ()):
                yield from statements(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case))
                                      else [child])


def definitions(tree, qualname):
    """Every def of qualname that running the file could bind: at module level (under if, try, ... too), or
    for Class.method in the body of a class of that name."""
    owner, _, name = qualname.rpartition(".")
    places = [tree.body]
    if owner:
        places = [node.body for node in statements(tree.body) if isinstance(node, ast.ClassDef) and node.name == owner]
    return [node for body in places for node in statements(body)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name]


def module_functions(tree):
    """{name: [def, ...]} of the functions the file defines at module level."""
    found = {}
    for node in statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, []).append(node)
    return found


def with_helpers(defs, helpers):
    """defs and every module-level function they call by name, and those they call, once each."""
    reached, todo = [], list(defs)
    while todo:
        node = todo.pop()
        if any(node is seen for seen in reached):
            continue
        reached.append(node)
        todo += [helper for n in called(node) for helper in helpers.get(n, ())]
    return sorted(reached, key=lambda node: node.lineno)


def called(node):
    """The names of what node calls: f for f(...), obj.f(...) alike."""
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            if isinstance(call.func, ast.Name):
                yield call.func.id
            elif isinstance(call.func, ast.Attribute):
                yield call.func.attr


def review(nodes, names, forwards, gradcheck_names, small, modules):
    """Why an instructor should look at these functions (calling `names`), as reasons; [] if nothing calls for it."""
    reasons = []
    extra = sorted({n for n in names if n.endswith("_forward") and n not in forwards})
    reasons += [f"calls {', '.join(extra)}"] if extra else []
    checks = sorted({n for n in names if n in gradcheck_names})
    reasons += [f"calls the gradient check's {', '.join(checks)}"] if checks else []
    dynamic = sorted({n for n in names if n in DYNAMIC})
    reasons += [f"calls {', '.join(dynamic)}"] if dynamic else []
    imported = suspicious_imports([m for node in nodes for m in imports(node)])
    reasons += [f"imports {', '.join(imported)}"] if imported else []
    for node in nodes:
        line = finite_difference(node, small)
        reasons += [f"finite differences at line {line}"] if line else []
        line = lookup_by_string(node, modules, gradcheck_names)
        reasons += [f"looks a name up by a string at line {line}"] if line else []
    return reasons


def suspicious_imports(modules):
    """The autodiff libraries and the gradient check among imported module names, sorted."""
    return sorted({top for top in (module.lstrip(".").split(".")[0] for module in modules) if top in AUTODIFF}
                  | {"the gradient check" for module in modules if "gradcheck" in module.split(".")})


def file_review(tree, gradcheck_names):
    """Reasons that concern every op of the file: names rebound behind Python's back, and what its top imports."""
    reasons = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if isinstance(target, ast.Subscript) and namespace(target.value):
                reasons.append(f"assigns a name through {ast.unparse(target.value)}[...] at line {node.lineno}")
            if isinstance(target, ast.Attribute) and target.attr in ("__code__", "__globals__", "__dict__"):
                reasons.append(f"replaces a function's {target.attr} at line {node.lineno}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            reasons.append(f"calls setattr at line {node.lineno}")
    top = [statement for statement in statements(tree.body) if isinstance(statement, (ast.Import, ast.ImportFrom))]
    imported = suspicious_imports([m for statement in top for m in imports(statement)])
    reasons += [f"its file imports {', '.join(imported)}"] if imported else []
    dynamic = sorted({n for statement in statements(tree.body)
                      if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      for n in called(statement) if n in DYNAMIC})
    reasons += [f"its file calls {', '.join(dynamic)}"] if dynamic else []
    return reasons


def namespace(node):
    """True for globals(), vars(...), locals(), x.__dict__ and sys.modules: a namespace indexed by a string."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in NAMESPACES:
        return True
    return isinstance(node, ast.Attribute) and (node.attr == "__dict__" or (
        node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys"))


def lookup_by_string(node, modules, gradcheck_names):
    """The line where node looks a name up by a string: globals()[...], vars(m)[...], sys.modules[...], getattr
    on a module or with a name computed at run time or naming a forward pass or the gradient check's; None."""
    for item in ast.walk(node):
        if isinstance(item, ast.Subscript) and namespace(item.value):
            return item.lineno
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and item.func.id == "getattr" \
                and len(item.args) >= 2:
            owner, attribute = item.args[0], item.args[1]
            constant = attribute.value if isinstance(attribute, ast.Constant) else None
            if not isinstance(constant, str) or constant.endswith("_forward") or constant in gradcheck_names \
                    or (isinstance(owner, ast.Name) and owner.id in modules):
                return item.lineno
    return None


def imports(node):
    """The modules node imports, and module.name for each name a from-import takes ('..gradcheck.agrees')."""
    for item in ast.walk(node):
        if isinstance(item, ast.Import):
            yield from (alias.name for alias in item.names)
        elif isinstance(item, ast.ImportFrom):
            base = "." * item.level + (item.module or "")
            yield base
            yield from (f"{base}.{alias.name}" for alias in item.names)


def imported_modules(tree):
    """The names the file binds to modules by import (np, math; gc for `import gradcheck as gc`; x for
    `from tinytransformer import x`)."""
    found = set()
    for item in ast.walk(tree):
        if isinstance(item, ast.Import):
            found |= {alias.asname or alias.name.split(".")[0] for alias in item.names}
        elif isinstance(item, ast.ImportFrom) and (item.module is None or item.level):
            found |= {alias.asname or alias.name for alias in item.names}    # `from .. import gradcheck`
    return found


def small_names(tree):
    """Names the file assigns a small number to (d = 1e-6): finite-difference steps, whatever they are called."""
    return {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and is_eps(node.value, set())
            for target in node.targets if isinstance(target, ast.Name)}


def finite_difference(node, small=frozenset()):
    """The line of a finite difference in node: f(x + eps) - f(x - eps), or x[i] += eps; None if none."""
    for item in ast.walk(node):
        if isinstance(item, ast.AugAssign) and isinstance(item.op, (ast.Add, ast.Sub)) and \
                isinstance(item.target, ast.Subscript) and is_eps(item.value, small):
            return item.lineno
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Sub) and \
                isinstance(item.left, ast.Call) and isinstance(item.right, ast.Call) and \
                any(perturbed(arg, small) for call in (item.left, item.right) for arg in call.args):
            return item.lineno
    return None


def perturbed(node, small):
    """True when node holds something plus or minus a small step."""
    return any(isinstance(item, ast.BinOp) and isinstance(item.op, (ast.Add, ast.Sub))
               and (is_eps(item.left, small) or is_eps(item.right, small)) for item in ast.walk(node))


def is_eps(node, small):
    """A small step: a number of size at most SMALL, a name such as eps or h or one of `small`, or a multiple."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return 0 < abs(node.value) <= SMALL
    if isinstance(node, ast.Name):
        return node.id.lower() in EPS_NAMES or node.id.lower().startswith("eps") or node.id in small
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        return is_eps(node.left, small) or is_eps(node.right, small)
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
