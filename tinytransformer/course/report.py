"""The grader's report: one line per op and input, then a summary."""
import numpy as np

from .op_grading import DRAWS, FAIL, NOT_WRITTEN, PASS
from ..gradcheck import PASS_ERROR

HEADER = f"""\
Gradient check of every backward pass, op by op: float64, central differences
(eps = 1e-6), a random upstream gradient; each op on 2 or 3 cases (shapes, options),
{DRAWS} random draws each, then once in float32 (a gradient keeps its input's dtype).
error = max |yours - numeric| / (max |yours| + max |numeric|); pass: error <= {PASS_ERROR:.0e}.
Why: a right backward leaves only the rounding of the finite differences, about 1e-9
here, while a mistake, even a gradient 0.05% off, shows as 1e-4 or more. (A gradient too
small for finite differences to measure passes with an error within their rounding.)"""


def report(grades):
    """The grader's table, as lines: a header, one line per op and input, a summary."""
    lines = [HEADER, "", f"{'op':<22}{'input':<8}{'result':<17}{'error':>8}  diagnosis", "-" * 96]
    for grade in grades:
        for g in grade.inputs:
            error = "-" if np.isnan(g.error) else f"{g.error:.1e}"
            lines.append(f"{grade.op:<22}{g.name:<8}{PASS if g.passed else FAIL:<17}{error:>8}  {explain(g)}".rstrip())
        if grade.problem:
            lines.append(f"{grade.op:<22}{'-':<8}{grade.status:<17}{'':>8}  {grade.problem}")
            if grade.status == FAIL:
                lines.append(f"{'':<49}on {grade.case}" + (f", at {grade.where}" if grade.where else ""))
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
    """True when every grade's status is PASS."""
    return all(g.status == PASS for g in grades)
