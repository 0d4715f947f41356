"""Grading a class: each submission's backward passes judged by the instructor's library.

    with GradingRun(ops) as run:
        graded = grade_submission("alice.zip", run, points)       # -> Graded(path, score, max_score, ops, problem)

A submission is a student edition: a folder or a zip, in the forms reading.py
accepts, read with bounds: every .py file of its package but the grader's
own (parsing.instructors). In a process of its own (isolation.py, in the
sandbox) the files holding the functions the student was asked to write, each
op's backward in tinytransformer/ops/ and Tape.backward in
tinytransformer/tensor.py for the tape, are imported as Python imports them
(child.py), with what they import, and each function is the object its name
holds once its file has run, called on caches the instructor's forward passes
made. A parsing process of its own (parsing.py) only compiles those files and
says where each name is defined and what calls for review. The answers are
judged here with the instructor's trials and pass rule (op_grading.judge), so
a submission earns what its honest ops earn and nothing more. What the
parsing flags for review is shown beside the grade; it changes no grade.
"""
import ast
import functools
import io
import tokenize
from typing import NamedTuple

from .edition import TAPE_FILE, TAPE_FUNCTION, op_files
from .isolation import MEMORY, PACKAGE, Stopped
from .op_grading import FAIL, NOT_WRITTEN, PASS, BackwardFailed, judge, same
from .parsing import ParseFailed, called, parse
from .reading import BadSubmission, not_utf8, read_submission
from .tape_grading import TAPE, judge_tape

STATUS = {PASS: "pass", FAIL: "fail", NOT_WRITTEN: "not written"}     # the grader's words -> the class's


class OpResult(NamedTuple):
    """One op's result for a submission: its status, the worst input's relative error, the diagnosis, the review."""
    status: str                 # "pass", "fail", "not written", "error" or "timeout"
    relative_error: float       # the worst input's (None when nothing was compared)
    diagnosis: str              # what went wrong, in a line or two ("" for a pass)
    review: str = ""            # why an instructor should read the function, in a line ("" if nothing calls for it)


class Graded(NamedTuple):
    """A graded submission: its path, score out of max_score, each op's OpResult, and the problem that stopped it."""
    path: str
    score: float
    max_score: float
    ops: dict                   # {op: OpResult}
    problem: str = ""           # the submission could not be read: why, in one line


def grade_submission(path, batch, points, timeout=10.0, memory=MEMORY):
    """The Graded of one submission: every op of points ({op: points}) judged on batch's trials."""
    maximum = float(sum(points.values()))
    try:
        found = functions_of(path, list(points))
    except BadSubmission as error:
        return Graded(str(path), 0.0, maximum, {op: OpResult("error", None, str(error)) for op in points}, str(error))
    functions = {op: f["function"] for op, f in found.items() if "function" in f}
    results = {op: OpResult(f["status"], None, f["problem"]) for op, f in found.items() if "function" not in f}
    answers = batch.run(functions, timeout=timeout, memory=memory)
    for op in functions:
        results[op] = judged(op, batch.trials[op], answers[op])._replace(review=found[op]["review"])
        found[op]["graded"] = graded_at(answers[op])
    results = {op: explained(op, results, found[op]) for op in points}
    score = float(sum(points[op] for op, result in results.items() if result.status == "pass"))
    return Graded(str(path), score, maximum, results)


def explained(op, results, found):
    """op's OpResult with what the parse saw added: a backward it calls that fails first, a def given twice; and
    where the code graded starts (the child's co_firstlineno): in the note of a def given twice, and for an op
    that does not pass."""
    result = results[op]
    called_ops = [name.removesuffix("_backward") for name in found.get("calls", ())]
    failing = [name for name in called_ops if name in results and results[name].status != "pass"]
    first = ""
    if failing and result.status != "pass":
        first = (f"fix {' and '.join(failing)} first: {op}'s backward calls "
                 f"{' and '.join(f'{name}_backward' for name in failing)}, which "
                 f"{'do' if len(failing) > 1 else 'does'} not pass")
    note, at = found.get("note", ""), found.get("graded", "")
    if note and at:
        note += f" (line {at.rpartition(':')[2]})"
    elif at and result.status in ("fail", "error"):
        note = f"the graded {found['function']['qualname']} starts at {at}"
    texts = [first, result.diagnosis, note if note not in result.diagnosis else ""]
    return result._replace(diagnosis=printable("; ".join(text for text in texts if text)))


def printable(text):
    """text in one line: a student's exception message cannot start a line of its own in the class's printout."""
    return "".join(c if c.isprintable() else " " for c in text)


def wanted(ops):
    """{op: {file, qualname, forwards}}: where each op's function is, and the forward passes its reference calls."""
    files = library_files()
    return {op: {"file": (TAPE_FILE if op == TAPE else files[op]).as_posix(),
                 "qualname": TAPE_FUNCTION if op == TAPE else f"{op}_backward",
                 "forwards": reference_forwards().get(op, [])} for op in ops}


@functools.cache
def library_files():
    """{op: its file} of the instructor's library (edition.op_files), read once per run."""
    return op_files()


@functools.cache
def reference_forwards():
    """{op: the forward passes the instructor's backward of op calls} (split_heads' calls merge_heads_forward)."""
    found = {}
    for op, file in library_files().items():
        tree = ast.parse((PACKAGE.parent / file).read_text())
        node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == f"{op}_backward")
        found[op] = sorted({name for name in called(node) if name.endswith("_forward")})
    return found


@functools.cache
def gradcheck_names():
    """The functions of the gradient check (tinytransformer/gradcheck.py): a backward calling one is flagged."""
    tree = ast.parse((PACKAGE / "gradcheck.py").read_text())
    return tuple(node.name for node in tree.body if isinstance(node, ast.FunctionDef))


def functions_of(path, ops):
    """{op: {"function", "note", "review", "calls"} or {"status", "problem"}} of a submission: BadSubmission when it
    cannot be read at all."""
    places = wanted(ops)
    files, problems = {}, {}
    for name, data in read_submission(path, {w["file"] for w in places.values()}, package=True).items():
        try:
            files[name] = decoded(data)
        except (SyntaxError, UnicodeDecodeError) as error:
            at = f" (byte {error.start})" if isinstance(error, UnicodeDecodeError) else ""
            problems[name] = f"{name} is not text Python can read{at}: {str(error)[:100]}"
    try:
        found = parse(files, places, gradcheck_names())
        if not all(isinstance(found.get(op), dict) for op in ops):
            raise ParseFailed("the parser's answer could not be read")
    except ParseFailed as error:
        raise BadSubmission(f"{path}: its source could not be read: {error}") from None
    for op, place in places.items():
        if place["file"] in problems:
            found[op] = {"status": "error", "problem": problems[place["file"]]}
    return found


def graded_at(answers):
    """'tinytransformer/ops/basic.py:195': where the child says the graded code starts ('' when it says nothing)."""
    graded = answers[0].get("graded") if isinstance(answers, list) and answers else ""
    return graded if isinstance(graded, str) else ""


def decoded(data):
    """Source bytes as text, UTF-8 (a byte-order mark or a coding line may say so); SyntaxError for a coding line
    naming another encoding, before anything is decoded."""
    refused = not_utf8(data)
    if refused:
        raise SyntaxError(f"{refused}; delete that line")
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


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
        case = "" if grade.problem.startswith("does not import: ") else f" [{grade.case}]"   # no case ran
        texts.append(f"{grade.problem}{case}" + (f" at {grade.where}" if grade.where else ""))
    return OpResult(STATUS.get(grade.status, grade.status), max(errors) if errors else None, "; ".join(texts))
