"""The grader: every backward pass against finite differences, op by op.

    python -m tinytransformer gradcheck [--ops NAME[,NAME]]

For each op of CHECKS (every case, each on DRAWS random
draws) the grader runs the library's forward, hands a random upstream
gradient to the op's backward and compares what comes back with central
differences of the forward. It calls each pair directly, not through the
tape, so an op is graded on its own; the tape's replay is graded apart, on a
graph of ops whose backward passes are themselves finite differences.

Each input of each op ends as `pass`, `FAIL` or `not written yet`, with its
relative error (gradcheck.relative_error; pass: at most PASS_ERROR = 1e-6, gradcheck.agrees)
and, for a FAIL, a diagnosis where diagnose.py recognises the mistake. A
backward that raises, returns the wrong number of gradients, or writes into
its dout or cache fails for its op, with the line it went wrong on, and the
other ops are graded all the same. The forward passes are the library's:
an error in one is not the student's, and is not caught.
"""
import copy
import traceback
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .cases import CHECKS
from .diagnose import Diagnosis, diagnose
from ..gradcheck import PASS_ERROR, agrees, masked_as_constant, numerical_gradient, relative_error, resolution
from ..tensor import Tape, Tensor, apply

DRAWS = 2              # random draws of every case: its inputs and its upstream gradient
TAPE = "tape"          # the name the grader gives Tape.backward, the tape's replay
PROJECT = Path(__file__).resolve().parents[2]    # file names are shown relative to this

PASS, FAIL, NOT_WRITTEN = "pass", "FAIL", "not written yet"

HEADER = f"""\
Gradient check of every backward pass, op by op: float64, central differences
(eps = 1e-6), a random upstream gradient; each op on 2 or 3 cases (shapes, options),
{DRAWS} random draws each.
error = max |yours - numeric| / (max |yours| + max |numeric|); pass: error <= {PASS_ERROR:.0e}.
Why: a right backward leaves only the rounding of the finite differences, about 1e-9
here, while a mistake, even a gradient 0.05% off, shows as 1e-4 or more. (A gradient too
small for finite differences to measure passes with an error within their rounding.)"""


class InputGrade(NamedTuple):
    name: str
    passed: bool
    error: float                   # the largest relative error over every case and draw (nan: wrong shape)
    diagnosis: Diagnosis = None    # of the first failing run
    failed_case: str = ""          # that run's case: its shapes and options
    failed: int = 0                # cases, of `cases`, that fail on some draw
    cases: int = 0


class OpGrade(NamedTuple):
    op: str
    status: str                    # PASS, FAIL or NOT_WRITTEN
    inputs: list                   # [InputGrade] of the runs before any problem
    problem: str = ""              # what went wrong for the whole op (raised, broke the contract), in one line
    where: str = ""                # the line of the backward it went wrong on: "file:line: code"


class Run(NamedTuple):
    case: int                      # which case of the op
    label: str                     # the case's shapes and options
    passed: bool
    error: float
    diagnosis: Diagnosis


class BackwardFailed(Exception):
    """The backward pass raised or broke the contract of an op: there is no gradient to compare."""

    def __init__(self, status, problem, where=""):
        super().__init__(problem)
        self.status, self.problem, self.where = status, problem, where


def op_names():
    """Every name the grader knows: the ops in the order of their files, then the tape."""
    return list(dict.fromkeys(case.op for case in CHECKS)) + [TAPE]


def grade(names=None, seed=0):
    """One OpGrade per name (default: every op and the tape), in op_names() order."""
    names = op_names() if names is None else names
    return [grade_op(name, seed=seed) for name in names]


def grade_op(op, backward=None, seed=0):
    """Grade one op's backward (the library's, or `backward` in its place) on every case of the op."""
    if op == TAPE:
        return grade_tape(backward, seed)
    cases = [case for case in CHECKS if case.op == op]
    if not cases:
        raise ValueError(f"grader: no op named {op!r}; the ops are: {', '.join(op_names())}")
    backward = backward or cases[0].backward
    runs = {}                                                     # input name -> [Run]
    for index, case in enumerate(cases):
        label = case.label
        for draw in range(DRAWS):
            rng = np.random.default_rng([seed, index, draw])
            try:
                results = run_case(case, backward, case.make_inputs(rng), rng)
            except BackwardFailed as failed:                 # keep what the cases before it showed
                return OpGrade(op, failed.status, fold(op, runs).inputs, failed.problem, failed.where)
            for name, result in results.items():
                runs.setdefault(name, []).append(Run(index, label, *result))
    return fold(op, runs)


def run_case(case, backward, inputs, rng):
    """{input name: (passed, error, diagnosis)} for every float input of one case on one draw."""
    found, smallest = gradients(case, backward, inputs, rng)
    return {name: compare(name, yours, right, inputs[name].shape, smallest) for name, (yours, right) in found.items()}


def gradients(case, backward, inputs, rng):
    """({input name: (yours, right)} for every float input, backward's gradient and central differences',
    and the smallest error central differences can tell from rounding here)."""
    arrays = list(inputs.values())
    out, cache = case.run_forward(*arrays)
    dout = rng.standard_normal(out.shape)
    saved = copy.deepcopy((dout, cache))
    grads = call_student(backward, dout, cache)
    check_contract(backward.__name__, inputs, grads)
    for what, before, after in (("dout", saved[0], dout), ("its cache", saved[1], cache)):
        if not same(before, after):
            raise BackwardFailed(FAIL, f"{backward.__name__} wrote into {what}: a backward pass must leave "
                                       "what it is given unchanged (another op may hold the same array)")
    found = {}
    for i, (name, x) in enumerate(inputs.items()):
        if is_float_array(x):
            def f(z, i=i):
                return masked_as_constant(case.run_forward(*arrays[:i], z, *arrays[i + 1:])[0])
            found[name] = grads[i], numerical_gradient(f, x.copy(), dout)
    return found, resolution(out, dout)


def first_run(op, backward=None, seed=0):
    """(inputs, {input name: (yours, right)}) of the op's first case on its first draw, as grade_op runs it."""
    case = next(case for case in CHECKS if case.op == op)
    rng = np.random.default_rng([seed, 0, 0])
    inputs = case.make_inputs(rng)
    return inputs, gradients(case, backward or case.backward, inputs, rng)[0]


def compare(name, yours, right, shape, smallest):
    """(passed, relative error, diagnosis of a failure) of one gradient; the error is nan for a wrong shape.
    smallest: the error central differences cannot tell from rounding (gradcheck.resolution)."""
    if np.shape(yours) != shape:
        return False, float("nan"), diagnose(name, yours, right, shape)
    passed = agrees(yours, right, smallest)
    return passed, relative_error(yours, right), None if passed else diagnose(name, yours, right, shape)


def call_student(function, *args):
    """function(*args), with whatever it raises turned into a BackwardFailed that says where."""
    try:
        return function(*args)
    except NotImplementedError as error:
        raise BackwardFailed(NOT_WRITTEN, str(error) or f"{function.__name__} raised NotImplementedError",
                             student_line(error)) from None
    except Exception as error:                                  # the student's code raised: report it, go on
        raise BackwardFailed(FAIL, f"raised {type(error).__name__}: {error}", student_line(error)) from None


def student_line(error):
    """'tinytransformer/ops/basic.py:95: da = dout @ b': the line of the graded function that raised."""
    frames = traceback.extract_tb(error.__traceback__)[1:]     # [0] is call_student calling it
    if not frames:
        return ""
    path = Path(frames[0].filename)
    shown = path.relative_to(PROJECT) if path.is_relative_to(PROJECT) else path
    return f"{shown}:{frames[0].lineno}: {frames[0].line}"


def is_float_array(x):
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def check_contract(function, inputs, grads):
    """One gradient per input, in a tuple: an ndarray for a float input, None for ids, masks and constants."""
    names = list(inputs)
    if not isinstance(grads, tuple):
        raise BackwardFailed(FAIL, f"{function} returned a {type(grads).__name__}, not a tuple: return one "
                                   f"gradient per input ({', '.join(names)}), e.g. (dx,) for one")
    if len(grads) != len(names):
        raise BackwardFailed(FAIL, f"{function} returned {len(grads)} gradient{'s' * (len(grads) != 1)} for "
                                   f"{len(names)} input{'s' * (len(names) != 1)} ({', '.join(names)}): one per input")
    for name, x, g in zip(names, inputs.values(), grads):
        if is_float_array(x) and g is None:
            raise BackwardFailed(FAIL, f"{function} returned None for {name}, which needs a gradient")
        if is_float_array(x) and not isinstance(g, np.ndarray):
            raise BackwardFailed(FAIL, f"{function} returned a {type(g).__name__} for {name}: return an ndarray")
        if not is_float_array(x) and g is not None:
            raise BackwardFailed(FAIL, f"{function} returned an array for {name}: its gradient is None "
                                       "(ids, masks and constants have none)")


def same(a, b):
    """Equal, array by array, through tuples."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a is b or a == b


def fold(op, runs):
    """The OpGrade of every run of every input: each input's worst error and its first failure."""
    grades = []
    for name, found in runs.items():
        errors = [run.error for run in found]
        error = float("nan") if np.isnan(errors).any() else max(errors)
        failing = [run for run in found if not run.passed]
        cases = len({run.case for run in found})
        if failing:
            first = failing[0]
            grades.append(InputGrade(name, False, error, first.diagnosis, first.label,
                                     len({run.case for run in failing}), cases))
        else:
            grades.append(InputGrade(name, True, error, cases=cases))
    return OpGrade(op, PASS if all(g.passed for g in grades) else FAIL, grades)


# ---------------------------------------------------------------------------
# The tape's replay, graded on ops whose backward passes are finite differences: right to
# rounding whatever the student has written, and no solution to any op.

def numerical_pair(name, f):
    """A forward/backward pair for f whose backward is central differences."""
    def forward(*arrays):
        return np.asarray(f(*arrays)), arrays

    def backward(dout, arrays):
        return tuple(numerical_gradient(lambda z: f(*arrays[:i], z, *arrays[i + 1:]), a.copy(), dout)
                     if is_float_array(a) else None for i, a in enumerate(arrays))
    forward.__name__, backward.__name__ = f"{name}_forward", f"{name}_backward"
    return forward, backward


TANH, EXP = numerical_pair("tanh", np.tanh), numerical_pair("exp", np.exp)
TIMES, PLUS = numerical_pair("times", np.multiply), numerical_pair("plus", np.add)
MATMUL, TOTAL = numerical_pair("matmul", np.matmul), numerical_pair("total", np.sum)


def tape_graph(x, W, c):
    """(3, 2) from x (3, 4), W (4, 2) and a constant c (3, 4): h feeds two ops, y is both inputs of
    one op, W is used twice, and exp(x) is recorded but does not reach the output."""
    h = apply(*TANH, x)                          # (3, 4)
    y = apply(*MATMUL, h, W)                     # (3, 2)
    u = apply(*TIMES, h, c)                      # (3, 4)
    apply(*EXP, x)                               # a branch that does not lead to the output
    return apply(*PLUS, apply(*TIMES, y, y), apply(*MATMUL, u, W))     # (3, 2)


TAPE_CASES = ["a scalar output, x.grad already holding a gradient (backward adds to it)",
              "a (3, 2) output, backward given its gradient"]


def grade_tape(replay=None, seed=0):
    """Grade Tape.backward (or replay(tape, output, grad) in its place) on tape_graph."""
    replay = replay or Tape.backward
    runs = {}
    for index, label in enumerate(TAPE_CASES):
        for draw in range(DRAWS):
            rng = np.random.default_rng([seed, 1000 + index, draw])
            x, W, c = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((3, 4))
            dout = rng.standard_normal((3, 2))
            before = rng.standard_normal((3, 4)) if index == 0 else None   # a gradient from an earlier backward
            tx, tW = Tensor(x.copy(), requires_grad=True), Tensor(W.copy(), requires_grad=True)
            tx.grad = None if before is None else before.copy()
            with Tape() as tape:
                out = tape_graph(tx, tW, c)
                if index == 0:
                    out = apply(*TOTAL, apply(*TIMES, out, dout))      # sum(out * dout), a scalar
            try:
                call_student(replay, tape, out, None if index == 0 else dout)
            except BackwardFailed as failed:
                return OpGrade(TAPE, failed.status, fold(TAPE, runs).inputs, failed.problem, failed.where)
            right_x = numerical_gradient(lambda z: tape_graph(z, W, c).data, x.copy(), dout)
            right_W = numerical_gradient(lambda z: tape_graph(x, z, c).data, W.copy(), dout)
            if before is not None:
                right_x = right_x + before
            smallest = resolution(tape_graph(x, W, c).data, dout)
            for name, tensor, right in (("x", tx, right_x), ("W", tW, right_W)):
                yours = np.zeros_like(right) if tensor.grad is None else tensor.grad
                runs.setdefault(name, []).append(Run(index, label, *compare(name, yours, right, right.shape, smallest)))
    return fold(TAPE, runs)


# ---------------------------------------------------------------------------
# The report: one line per op and input.

def report(grades):
    """The grader's table, as lines: a header, one line per op and input, a summary."""
    lines = [HEADER, "", f"{'op':<22}{'input':<8}{'result':<17}{'error':>8}  diagnosis", "-" * 96]
    for grade in grades:
        for g in grade.inputs:
            error = "-" if np.isnan(g.error) else f"{g.error:.1e}"
            lines.append(f"{grade.op:<22}{g.name:<8}{PASS if g.passed else FAIL:<17}{error:>8}  {explain(g)}".rstrip())
        if grade.problem:
            lines.append(f"{grade.op:<22}{'-':<8}{grade.status:<17}{'':>8}  {grade.problem}")
            if grade.where and grade.status == FAIL:
                lines.append(f"{'':<49}at {grade.where}")
    failed = [g.op for g in grades if g.status == FAIL]
    unwritten = [g.op for g in grades if g.status == NOT_WRITTEN]
    summary = f"{len(grades) - len(failed) - len(unwritten)} of {len(grades)} pass"
    summary += f"; FAIL: {', '.join(failed)}" if failed else ""
    summary += f"; not written yet: {', '.join(unwritten)}" if unwritten else ""
    return lines + ["-" * 96, summary]


def explain(g):
    """A failing input's diagnosis and the case it failed on; nothing for a pass."""
    if g.passed:
        return ""
    cases = "" if g.failed == g.cases else f"; fails on {g.failed} of {g.cases} cases"
    text = g.diagnosis.text + " " if g.diagnosis else ""
    return f"{text}[{g.failed_case}{cases}]"


def passed(grades):
    return all(g.status == PASS for g in grades)
