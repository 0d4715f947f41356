"""The grader: every backward pass against finite differences, op by op.

    python -m tinytransformer check [--ops NAME[,NAME]]

For each op of cases.CHECKS (every case, each on DRAWS random draws) the
grader runs the library's forward, hands a random upstream gradient to the
op's backward and compares what comes back with central differences of the
forward (op_grading.py). It calls each pair directly, not through the tape,
so an op is graded on its own; the tape's replay is graded apart, on a graph
of ops whose backward passes are themselves finite differences
(tape_grading.py). report.py prints the table.

Each input of each op ends as `pass`, `FAIL` or `not written yet`, with its
relative error (gradcheck.relative_error; pass: at most PASS_ERROR = 1e-6)
and, for a FAIL, a diagnosis where diagnose.py recognises the mistake. A
backward that raises, returns the wrong number of gradients, returns another
dtype than its input's, or writes into its dout or cache fails for its op,
with the case and the line it went wrong on, and the other ops are graded all
the same. The forward passes are the library's: an error in one is not the
student's, and is not caught.

This grader runs in the student's own process: it is the student's check. A
class is graded by submission.py, which runs each student's code in a
process of its own and decides in the instructor's.
"""
from .cases import CHECKS
from .op_grading import (FAIL, NOT_WRITTEN, PASS, PROJECT, first_run,  # noqa: F401  (the grader's words, in one place)
                         grade_trials, is_float_array)
from .report import HEADER, explain, passed, report  # noqa: F401  (re-exported: no __all__, so the book documents each once)
from .tape_grading import TAPE, grade_tape


def op_names():
    """Every name the grader knows: the ops in the order of their files, then the tape."""
    return list(dict.fromkeys(case.op for case in CHECKS)) + [TAPE]


def grade(names=None, seed=0):
    """One OpGrade per name (default: every op and the tape), in op_names() order."""
    names = op_names() if names is None else names
    return [grade_op(name, seed=seed) for name in names]


def grade_op(op, backward=None, seed=0):
    """Grade one op's backward (the library's, or `backward` in its place); TAPE grades Tape.backward."""
    if op == TAPE:
        return grade_tape(backward, seed)
    if op not in op_names():
        raise ValueError(f"grader: no op named {op!r}; the ops are: {', '.join(op_names())}")
    return grade_trials(op, backward, seed)
