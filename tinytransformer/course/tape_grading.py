"""Grading the tape's replay, Tape.backward, on a graph of ops whose backward passes are finite differences.

The graph's ops are right to rounding whatever the student has written, and
hold no solution to any op. A trial is one case on one draw: the arrays, the
upstream gradient, and x's and W's gradients by central differences. As for
the ops (op_grading.py), a class grader makes the trials once; run_trial,
the part that runs the student's replay, is all a submission's process does.
"""
from typing import NamedTuple

import numpy as np

from .op_grading import DRAWS, BackwardFailed, OpGrade, Run, call_student, compare, fold
from ..gradcheck import numerical_gradient, resolution
from .. import tensor as library_tensor
from ..tensor import Tape, apply

TAPE = "tape"          # the name the grader gives Tape.backward, the tape's replay


def numerical_pair(name, f):
    """A forward/backward pair for f whose backward is central differences."""
    def forward(*arrays):
        return np.asarray(f(*arrays)), arrays

    def backward(dout, arrays):
        return tuple(numerical_gradient(lambda z: f(*arrays[:i], z, *arrays[i + 1:]), a.copy(), dout)
                     if isinstance(a, np.ndarray) and a.dtype.kind == "f" else None for i, a in enumerate(arrays))
    forward.__name__, backward.__name__ = f"{name}_forward", f"{name}_backward"
    return forward, backward


TANH, EXP = numerical_pair("tanh", np.tanh), numerical_pair("exp", np.exp)
TIMES, PLUS = numerical_pair("times", np.multiply), numerical_pair("plus", np.add)
MATMUL, TOTAL = numerical_pair("matmul", np.matmul), numerical_pair("total", np.sum)


def tape_graph(x, W, c, apply=apply):
    """(3, 2) from x (3, 4), W (4, 2) and a constant c (3, 4): h feeds two ops, y is both inputs of
    one op, W is used twice, and exp(x) is recorded but does not reach the output (apply: tensor.apply, or
    a submission's own)."""
    h = apply(*TANH, x)                          # (3, 4)
    y = apply(*MATMUL, h, W)                     # (3, 2)
    u = apply(*TIMES, h, c)                      # (3, 4)
    apply(*EXP, x)                               # a branch that does not lead to the output
    return apply(*PLUS, apply(*TIMES, y, y), apply(*MATMUL, u, W))     # (3, 2)


TAPE_CASES = ["a scalar output, x.grad already holding a gradient (backward adds to it)",
              "a (3, 2) output, backward given its gradient"]


class TapeTrial(NamedTuple):
    """One trial of Tape.backward: the graph's arrays, the right gradients by central differences, the resolution."""
    case: int
    label: str
    arrays: dict             # x, W, c, dout, and (case 0) before: x.grad from an earlier backward
    right: dict              # {"x": ..., "W": ...} by central differences (plus `before` for x)
    smallest: float


def tape_trials(seed=0):
    """Every TapeTrial, DRAWS draws of each of the tape's cases, seeded by seed."""
    found = []
    for index, label in enumerate(TAPE_CASES):
        for draw in range(DRAWS):
            rng = np.random.default_rng([seed, 1000 + index, draw])
            x, W, c = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((3, 4))
            arrays = dict(x=x, W=W, c=c, dout=rng.standard_normal((3, 2)))
            if index == 0:
                arrays["before"] = rng.standard_normal((3, 4))
            right = {"x": numerical_gradient(lambda z: tape_graph(z, W, c).data, x.copy(), arrays["dout"])
                     + arrays.get("before", 0.0),
                     "W": numerical_gradient(lambda z: tape_graph(x, z, c).data, W.copy(), arrays["dout"])}
            found.append(TapeTrial(index, label, arrays, right, resolution(tape_graph(x, W, c).data, arrays["dout"])))
    return found


def run_trial(trial, replay, tensor=library_tensor):
    """(x.grad, W.grad) after replay(tape, output, grad) on the trial's graph, recorded by the Tensor, Tape and
    apply of `tensor` (the library's module, or a submission's tensor.py); raises BackwardFailed."""
    a = trial.arrays
    tx, tW = tensor.Tensor(a["x"].copy(), requires_grad=True), tensor.Tensor(a["W"].copy(), requires_grad=True)
    tx.grad = a["before"].copy() if "before" in a else None
    with tensor.Tape() as tape:
        out = tape_graph(tx, tW, a["c"], tensor.apply)
        if trial.case == 0:
            out = tensor.apply(*TOTAL, tensor.apply(*TIMES, out, a["dout"]))      # sum(out * dout), a scalar
    call_student(replay, tape, out, None if trial.case == 0 else a["dout"])
    return tx.grad, tW.grad


def grade_tape(replay=None, seed=0):
    """Grade Tape.backward (or replay(tape, output, grad) in its place) on tape_graph."""
    replay = replay or Tape.backward
    return judge_tape(tape_trials(seed), lambda trial: run_trial(trial, replay))


def judge_tape(trials, call):
    """The OpGrade of the replay: call(trial) gives (x.grad, W.grad), or raises BackwardFailed."""
    runs = {}
    for trial in trials:
        try:
            grads = call(trial)
        except BackwardFailed as failed:
            return OpGrade(TAPE, failed.status, fold(runs, TAPE).inputs, failed.problem, failed.where, trial.label)
        for name, yours in zip(("x", "W"), grads):
            right = trial.right[name]
            yours = np.zeros_like(right) if yours is None else yours
            runs.setdefault(name, []).append(Run(trial.case, trial.label,
                                                 *compare(name, yours, right, right.shape, trial.smallest)))
    return fold(runs, TAPE)
