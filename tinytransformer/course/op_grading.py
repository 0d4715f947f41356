"""Grading one op's backward pass: trials made by the library, judged against finite differences.

A trial is one case of the op on one random draw: the library's forward
pass run on random inputs, a random upstream gradient, and the gradient of
each float input by central differences. None of it depends on the backward
being graded, so a class grader makes the trials once and judges every
student's answers against them (submission.py).

judge(op, trials, call) hands each trial to call(trial), which returns the
backward's gradients (or raises BackwardFailed), and compares them input by
input. Besides the values, two conventions the library's tests rely on are
trials of their own: a gradient keeps its input's dtype (a float32 trial),
and a masked (-inf) input of softmax or log_softmax gets no gradient.
"""
import copy
import traceback
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .cases import CHECKS, describe
from .diagnose import Diagnosis, diagnose, explain_raised, recognise
from .wire import Other
from ..gradcheck import agrees, masked_as_constant, numerical_gradient, relative_error, resolution

DRAWS = 2              # random draws of every case: its inputs and its upstream gradient
PROJECT = Path(__file__).resolve().parents[2]    # file names are shown relative to this

PASS, FAIL, NOT_WRITTEN = "pass", "FAIL", "not written yet"
MASKED_OPS = ("softmax", "log_softmax")          # ops whose tests feed -inf (masked) inputs


class InputGrade(NamedTuple):
    """One input's grade over every case and draw: passed, the largest relative error, the first failure."""
    name: str
    passed: bool
    error: float                   # the largest relative error over every case and draw (nan: wrong shape)
    diagnosis: Diagnosis = None    # of the first failing run
    failed_case: str = ""          # that run's case: its shapes and options
    failed: int = 0                # cases, of `cases`, that fail on some draw
    cases: int = 0


class OpGrade(NamedTuple):
    """An op's grade: PASS, FAIL or NOT_WRITTEN, its inputs' grades, and what went wrong for the whole op, where."""
    op: str
    status: str                    # PASS, FAIL or NOT_WRITTEN
    inputs: list                   # [InputGrade] of the runs before any problem
    problem: str = ""              # what went wrong for the whole op (raised, broke the contract), in one line
    where: str = ""                # the line of the backward it went wrong on: "file:line: code"
    case: str = ""                 # the case it went wrong on: its shapes and options


class Run(NamedTuple):
    """One case's run of a backward pass: whether it passed, its relative error and its diagnosis."""
    case: int                      # which case of the op
    label: str                     # the case's shapes and options
    passed: bool
    error: float
    diagnosis: Diagnosis


class Trial(NamedTuple):
    """What a backward pass is called with in one trial (inputs, dout, cache) and the gradients it should return."""
    kind: str                      # "values", "dtype" (float32 inputs) or "masked" (-inf inputs)
    case: int
    label: str
    inputs: dict                   # the forward's inputs by name, in order
    dout: np.ndarray
    cache: object                  # the library forward's cache
    right: dict                    # {float input: its gradient by central differences} ("values" only)
    smallest: float = 0.0          # the error central differences cannot tell from rounding


class BackwardFailed(Exception):
    """The backward pass raised or broke the contract of an op: there is no gradient to compare."""

    def __init__(self, status, problem, where=""):
        super().__init__(problem)
        self.status, self.problem, self.where = status, problem, where


def op_cases(op):
    """The grading cases of the op named op, in order; ValueError when there is no such op."""
    cases = [case for case in CHECKS if case.op == op]
    if not cases:
        raise ValueError(f"grader: no op named {op!r}")
    return cases


def grade_trials(op, backward=None, seed=0):
    """Grade one op's backward (the library's, or `backward` in its place) on every trial of the op
    (grader.grade_op, which also knows the tape, is the one to call)."""
    backward = backward or op_cases(op)[0].backward
    return judge(op, trials(op, seed), lambda trial: call_in_process(backward, trial))


def trials(op, seed=0):
    """Every trial of the op: each case on DRAWS draws, then its float32 and -inf conventions."""
    found = []
    for index, case in enumerate(op_cases(op)):
        for draw in range(DRAWS):
            rng = np.random.default_rng([seed, index, draw])
            inputs = case.make_inputs(rng)
            found.append(values_trial(case, index, inputs, rng))
    case = op_cases(op)[0]
    rng = np.random.default_rng([seed, 0, DRAWS])
    inputs = {name: x.astype(np.float32) if is_float_array(x) else x for name, x in case.make_inputs(rng).items()}
    found.append(convention_trial("dtype", case, inputs, rng))
    if op in MASKED_OPS:
        x = rng.standard_normal((3, 4))
        x[0, 1] = x[2] = -np.inf                  # one masked entry, one fully masked row
        found.append(convention_trial("masked", case, {"x": x}, rng))
    return found


def values_trial(case, index, inputs, rng):
    """A 'values' Trial of a case: dout drawn from rng, each float input's right gradient by central differences."""
    arrays = list(inputs.values())
    out, cache = case.run_forward(*arrays)
    dout = rng.standard_normal(out.shape)
    right = {}
    for i, (name, x) in enumerate(inputs.items()):
        if is_float_array(x):
            def f(z, i=i):
                return masked_as_constant(case.run_forward(*arrays[:i], z, *arrays[i + 1:])[0])
            right[name] = numerical_gradient(f, x.copy(), dout)
    return Trial("values", index, case.label, inputs, dout, cache, right, resolution(out, dout))


def convention_trial(kind, case, inputs, rng):
    """A Trial of a case that checks a convention ('dtype' or 'masked'): dout drawn from rng, no gradients."""
    out, cache = case.run_forward(*inputs.values())
    dout = rng.standard_normal(out.shape).astype(out.dtype)
    label = describe(inputs, case.options) + (", float32" if kind == "dtype" else ", -inf inputs")
    return Trial(kind, 0, label, inputs, dout, cache, {})


def first_run(op, backward=None, seed=0):
    """(inputs, {input name: (yours, right)}) of the op's first case on its first draw, as grade_op runs it."""
    trial = trials(op, seed)[0]
    grads = call_in_process(backward or op_cases(op)[0].backward, trial)
    return trial.inputs, {name: (grads[i], trial.right[name]) for i, name in enumerate(trial.inputs)
                          if name in trial.right}


def call_in_process(backward, trial):
    """backward(dout, cache) on copies of the trial's arrays; writing into them is a FAIL."""
    dout, cache = copy.deepcopy((trial.dout, trial.cache))
    grads = call_student(backward, dout, cache)
    for what, before, after in (("dout", trial.dout, dout), ("its cache", trial.cache, cache)):
        if not same(before, after):
            raise BackwardFailed(FAIL, f"{backward.__name__} wrote into {what}: a backward pass must leave "
                                       "what it is given unchanged (another op may hold the same array)")
    return grads


def judge(op, trials, call):
    """The OpGrade of one op: call(trial) gives the backward's gradients for each trial, or raises BackwardFailed."""
    runs = {}                                                       # input name -> [Run]
    for trial in trials:
        try:
            grads = call(trial)
            check_contract(f"{op}_backward", trial.inputs, grads)
            if trial.kind == "values":
                for name, right in trial.right.items():
                    i = list(trial.inputs).index(name)
                    result = compare(name, grads[i], right, trial.inputs[name].shape, trial.smallest,
                                     (op, trial, grads[i]))
                    runs.setdefault(name, []).append(Run(trial.case, trial.label, *result))
            else:
                check_convention(op, trial, grads)
        except BackwardFailed as failed:                           # keep what the trials before it showed
            shapes = {name: x.shape for name, x in trial.inputs.items() if is_float_array(x)}
            return OpGrade(op, failed.status, fold(runs).inputs, explain_raised(failed.problem, shapes),
                           failed.where, trial.label)
    return fold(runs, op)


def check_convention(op, trial, grads):
    """The float32 trial: each gradient in its input's dtype. The -inf trial: finite, and 0 at masked inputs."""
    for (name, x), g in zip(trial.inputs.items(), grads):
        if not is_float_array(x):
            continue
        if trial.kind == "dtype" and g.dtype != x.dtype:
            raise BackwardFailed(FAIL, f"returned {g.dtype} for {x.dtype} {name}: a gradient keeps its input's "
                                       f"dtype (training in {x.dtype} would silently run in {g.dtype})")
        masked_right = g.shape != x.shape or (np.isfinite(g).all() and (g[np.isneginf(x)] == 0).all())  # shape: above
        if trial.kind == "masked" and not masked_right:
            raise BackwardFailed(FAIL, f"d{name} is not 0 (or not finite) where {name} is -inf: a masked input is a "
                                       "constant, no gradient flows to it, and a fully masked row gets zeros")


def compare(name, yours, right, shape, smallest, context=None):
    """(passed, relative error, diagnosis of a failure) of one gradient; the error is nan for a wrong shape.
    smallest: the error central differences cannot tell from rounding (gradcheck.resolution).
    context: (op, trial, yours) for the diagnoses that know an op's classic mistakes."""
    if np.shape(yours) != shape:
        return False, float("nan"), diagnose(name, yours, right, shape)
    passed = agrees(yours, right, smallest)
    if passed:
        return True, relative_error(yours, right), None
    named = recognise(*context, name) if context else None
    return False, relative_error(yours, right), named or diagnose(name, yours, right, shape)


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
    """True when x is an ndarray of floats: an input that gets a gradient."""
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def check_contract(function, inputs, grads):
    """One gradient per input, in a tuple: an ndarray for a float input, None for ids, masks and constants."""
    names = list(inputs)
    if isinstance(grads, Other):
        raise BackwardFailed(FAIL, f"{function} returned a {grads.type_name}: return a tuple of one gradient per "
                                   f"input ({', '.join(names)})")
    if not isinstance(grads, tuple):
        raise BackwardFailed(FAIL, f"{function} returned a {type_name(grads)}, not a tuple: return one "
                                   f"gradient per input ({', '.join(names)}), e.g. (dx,) for one")
    if len(grads) != len(names):
        raise BackwardFailed(FAIL, f"{function} returned {len(grads)} gradient{'s' * (len(grads) != 1)} for "
                                   f"{len(names)} input{'s' * (len(names) != 1)} ({', '.join(names)}): one per input")
    for name, x, g in zip(names, inputs.values(), grads):
        if is_float_array(x) and g is None:
            raise BackwardFailed(FAIL, f"{function} returned None for {name}, which needs a gradient")
        if is_float_array(x) and not isinstance(g, np.ndarray):
            raise BackwardFailed(FAIL, f"{function} returned a {type_name(g)} for {name}: return an ndarray")
        if not is_float_array(x) and g is not None:
            raise BackwardFailed(FAIL, f"{function} returned an array for {name}: its gradient is None "
                                       "(ids, masks and constants have none)")


def type_name(value):
    """The name of value's type; for a value only described by the child (wire.Other), the name it sent."""
    return value.type_name if isinstance(value, Other) else type(value).__name__


def same(a, b):
    """Equal, array by array, through tuples."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return a is b or a == b


def fold(runs, op=""):
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
