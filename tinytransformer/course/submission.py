"""Grading a class: each submission's backward passes judged by the instructor's library.

    with Batch(ops) as batch:
        graded = grade_submission("alice.zip", batch, points)     # -> Graded(path, score, max_score, ops, problem)

A submission is a student edition (a folder, or a .zip of one, the edition at
its top or one folder down; or a folder holding only such a .zip). From it only the functions the student was asked
to write are taken, as source text read with `ast`: each op's backward in
tinytransformer/ops/, and Tape.backward in tinytransformer/tensor.py for the
tape. Nothing else of the student's tree is used or run: not the forward
passes, not the grader, not helpers outside those functions. The functions
run in a process of their own (isolation.py); their answers are judged here
with the instructor's trials and pass rule (op_grading.judge), so a
submission earns what its honest ops earn and nothing more.
"""
import ast
import zipfile
from pathlib import Path
from typing import NamedTuple

from .edition import TAPE_FILE, TAPE_FUNCTION, op_files
from .isolation import MEMORY, Stopped
from .op_grading import FAIL, NOT_WRITTEN, PASS, BackwardFailed, judge, same
from .tape_grading import TAPE, judge_tape

LARGEST = 2 ** 21                # bytes: no source file of an edition comes near
STATUS = {PASS: "pass", FAIL: "fail", NOT_WRITTEN: "not written"}     # the grader's words -> the class's


class OpResult(NamedTuple):
    """One op's result for a submission: its status, the worst input's relative error, the diagnosis."""
    status: str                 # "pass", "fail", "not written", "error" or "timeout"
    relative_error: float       # the worst input's (None when nothing was compared)
    diagnosis: str              # what went wrong, in a line or two ("" for a pass)


class Graded(NamedTuple):
    """A graded submission: its path, score out of max_score, each op's OpResult, and the problem that stopped it."""
    path: str
    score: float
    max_score: float
    ops: dict                   # {op: OpResult}
    problem: str = ""           # the submission could not be read: why, in one line


class BadSubmission(Exception):
    """A submission that cannot be graded at all: a missing path, no edition in it, a corrupt zip."""


def grade_submission(path, batch, points, timeout=10.0, memory=MEMORY):
    """The Graded of one submission: every op of points ({op: points}) judged on batch's trials."""
    maximum = float(sum(points.values()))
    try:
        files = read_files(path)
    except BadSubmission as error:
        return Graded(str(path), 0.0, maximum, {op: OpResult("error", None, str(error)) for op in points}, str(error))
    functions, results = {}, {}
    for op in points:
        found = extract(files, op)
        if isinstance(found, OpResult):
            results[op] = found
        else:
            functions[op] = found
    answers = batch.run(functions, timeout=timeout, memory=memory)
    for op in functions:
        results[op] = judged(op, batch.trials[op], answers[op])
    score = float(sum(points[op] for op, result in results.items() if result.status == "pass"))
    return Graded(str(path), score, maximum, {op: results[op] for op in points})


def read_files(path):
    """{path in the edition: text} of the files functions are taken from (ops/*.py, tensor.py)."""
    path = Path(path)
    wanted = {Path(p).as_posix() for p in set(op_files().values()) | {TAPE_FILE}}
    if not path.exists():
        raise BadSubmission(f"no such file or folder: {path}")
    if path.is_dir():
        roots = [path] + sorted(p for p in path.iterdir() if p.is_dir())
        root = next((r for r in roots if (r / "tinytransformer" / "ops").is_dir()), None)
        zips = list(path.glob("*.zip"))
        if root is None and len(zips) == 1:                 # an upload of one .zip, as Gradescope stores it
            return read_files(zips[0])
        if root is None:
            raise BadSubmission(f"{path} is not a student edition: no tinytransformer/ops/ in it or one folder down")
        inside = [name for name in wanted if (root / name).is_file()]
        outside = [name for name in inside if not (root / name).resolve().is_relative_to(root.resolve())]
        if outside:                       # a link to another tree, the instructor's own files say
            raise BadSubmission(f"{path}: {outside[0]} links to a file outside the submission")
        return {name: (root / name).read_text(errors="replace") for name in inside}
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            prefixes = sorted({n[:n.index("tinytransformer/ops/")] for n in names if "tinytransformer/ops/" in n},
                              key=len)
            if not prefixes or prefixes[0].count("/") > 1:
                raise BadSubmission(f"{path} holds no student edition: no tinytransformer/ops/ at its top "
                                    "or one folder down")
            found = [archive.getinfo(prefixes[0] + name) for name in wanted if prefixes[0] + name in names]
            if any(info.file_size > LARGEST for info in found):
                raise BadSubmission(f"{path} holds a source file over {LARGEST // 2 ** 20} MiB")
            return {info.filename.removeprefix(prefixes[0]): archive.read(info).decode(errors="replace")
                    for info in found}
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise BadSubmission(f"{path} is neither an edition folder nor a readable .zip ({error})") from None


def extract(files, op):
    """The student's function for op ({qualname, module, file, line, source}), or an OpResult if there is none."""
    file = (TAPE_FILE if op == TAPE else op_files()[op]).as_posix()
    qualname = TAPE_FUNCTION if op == TAPE else f"{op}_backward"
    if file not in files:
        return OpResult("not written", None, f"{file} is not in the submission")
    try:
        tree = ast.parse(files[file])
    except SyntaxError as error:
        return OpResult("error", None, f"{file} does not parse: line {error.lineno}: {error.msg}")
    node = find(tree, qualname)
    if node is None:
        return OpResult("not written", None, f"no {qualname} in {file}")
    if is_stub(node):
        return OpResult("not written", None, f"{qualname} still raises NotImplementedError")
    lines = files[file].splitlines()[node.lineno - 1:node.end_lineno]        # the def without its decorators
    indent = len(lines[0]) - len(lines[0].lstrip())
    return dict(qualname=qualname, file=file, line=node.lineno, source="\n".join(line[indent:] for line in lines),
                module=file.removesuffix(".py").replace("/", ".") if op != TAPE else "tinytransformer.tensor")


def find(tree, qualname):
    """The def of qualname (a function, or Class.method) at the top level of the parsed tree; None if none."""
    owner, _, name = qualname.rpartition(".")
    for node in tree.body:
        if owner and isinstance(node, ast.ClassDef) and node.name == owner:
            return next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == name), None)
        if not owner and isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def is_stub(node):
    """A body that is only a docstring, the cache's unpacking and `raise NotImplementedError(...)`."""
    last = node.body[-1]
    return (isinstance(last, ast.Raise) and last.exc is not None and "NotImplementedError" in ast.unparse(last.exc)
            and all(isinstance(s, (ast.Expr, ast.Assign)) for s in node.body[:-1]))


def judged(op, trials, answers):
    """The OpResult of one op: the child's answers judged against the instructor's trials."""
    if isinstance(answers, Stopped):
        return OpResult(answers.status, None, answers.problem)
    replies = iter(answers)

    def call(trial):
        reply = next(replies, None)
        if reply is None:
            raise BackwardFailed("error", "no answer for this case")
        if "value" not in reply:
            status = NOT_WRITTEN if "not written" in reply else "error"
            message = str(reply.get("not written") or "raised " + str(reply.get("raised")))
            raise BackwardFailed(status, message, str(reply.get("where", "")))
        if op == TAPE:
            return tuple(reply["value"]) if isinstance(reply["value"], (tuple, list)) else (None, None)
        grads, dout, cache = reply["value"]
        for what, before, after in (("dout", trial.dout, dout), ("its cache", trial.cache, cache)):
            if not same(before, after):
                raise BackwardFailed(FAIL, f"{op}_backward wrote into {what}: a backward pass must leave what "
                                           "it is given unchanged (another op may hold the same array)")
        return grads

    try:
        grade = judge_tape(trials, call) if op == TAPE else judge(op, trials, call)
    except Exception as error:                       # an answer of a shape nothing expects: the op's error
        return OpResult("error", None, f"its answer could not be judged ({type(error).__name__})")
    errors = [g.error for g in grade.inputs if g.error == g.error]               # nan: a wrong shape
    texts = [f"d{g.name}: {g.diagnosis.text if g.diagnosis else 'wrong'} [{g.failed_case}]"
             for g in grade.inputs if not g.passed]
    if grade.problem:
        texts.append(f"{grade.problem} [{grade.case}]" + (f" at {grade.where}" if grade.where else ""))
    if "raised NameError" in grade.problem:
        texts.append("only the functions to write are graded: define a helper inside the function that uses it")
    return OpResult(STATUS.get(grade.status, grade.status), max(errors) if errors else None, "; ".join(texts))
