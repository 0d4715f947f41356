"""The grader: the library passes it, and a wrong, unwritten or broken backward pass is reported for its
op alone, with what went wrong and where, while every other op is still graded."""
import ast
from pathlib import Path

import numpy as np
import pytest

from tinytransformer import ops
from tinytransformer.course import grader
from tinytransformer.__main__ import main
from tinytransformer.course.cases import CHECKS
from tinytransformer.gradcheck import relative_error

OPS_DIR = Path(ops.__file__).parent


def grade_lines(grades):
    """The report's rows: one per op and input."""
    return grader.report(grades)[4:-2]


def test_every_backward_in_ops_is_graded_on_two_cases_or_more():
    in_ops = {node.name.removesuffix("_backward") for path in OPS_DIR.glob("*.py")
              for node in ast.parse(path.read_text()).body
              if isinstance(node, ast.FunctionDef) and node.name.endswith("_backward")}
    assert set(grader.op_names()) == in_ops | {grader.TAPE}
    for op in in_ops:
        cases = [case for case in CHECKS if case.op == op]
        assert len(cases) >= 2, f"{op} has {len(cases)} case(s)"
        shapes = {tuple(np.shape(x) for x in case.make_inputs(np.random.default_rng(0)).values()) for case in cases}
        options = {repr(case.options) for case in cases}
        assert len(shapes) >= 2 or len(options) >= 2, f"{op}: its cases do not differ"


def test_the_library_passes_with_only_rounding_left():
    grades = grader.grade()
    assert [g.op for g in grades] == grader.op_names()
    assert grader.passed(grades)
    for g in grades:
        assert g.status == grader.PASS and not g.problem and g.inputs
        for i in g.inputs:
            assert i.passed and i.error < 1e-8 and i.cases >= 2, (g.op, i)
    rows = grade_lines(grades)
    assert len(rows) == sum(len(g.inputs) for g in grades)
    assert rows[0].split()[:3] == ["add", "a", "pass"]
    assert grader.report(grades)[-1] == f"{len(grades)} of {len(grades)} pass"


def test_same_seed_same_report_and_another_seed_other_draws():
    assert grader.report(grader.grade(["softmax", "attention"])) == grader.report(grader.grade(["softmax", "attention"]))
    errors = lambda seed: [i.error for i in grader.grade_op("attention", seed=seed).inputs]
    assert errors(0) != errors(1)


def test_first_run_gives_both_gradients_as_the_grader_sees_them():
    inputs, found = grader.first_run("linear")
    assert list(found) == ["x", "W", "b"] and inputs["x"].shape == (2, 3, 5)
    for name, (yours, right) in found.items():
        assert yours.shape == right.shape == inputs[name].shape
        assert relative_error(yours, right) < 1e-8
    _, found = grader.first_run("linear", backward=lambda dout, cache: tuple(-g for g in ops.linear_backward(dout, cache)))
    assert all(np.allclose(yours, -right) for yours, right in found.values())


def write_first(dout, cache):
    raise NotImplementedError("write softmax_backward first: tinytransformer/ops/softmax.py:28")


def test_an_unwritten_backward_is_not_written_yet_and_the_rest_is_graded(monkeypatch):
    monkeypatch.setattr(ops, "softmax_backward", write_first)
    grades = {g.op: g for g in grader.grade()}
    assert grades["softmax"].status == grader.NOT_WRITTEN and not grades["softmax"].inputs
    assert grades["softmax"].problem == "write softmax_backward first: tinytransformer/ops/softmax.py:28"
    assert all(g.status == grader.PASS for op, g in grades.items() if op != "softmax")
    row = [line for line in grader.report(list(grades.values())) if line.startswith("softmax ")]
    assert row == [f"{'softmax':<22}{'-':<8}{'not written yet':<17}{'':>8}  write softmax_backward first: "
                   "tinytransformer/ops/softmax.py:28"]
    assert grader.report(list(grades.values()))[-1] == \
        f"{len(grades) - 1} of {len(grades)} pass; not written yet: softmax"          # every op and the tape


def raises_on_a_shape(dout, cache):
    out, axis = cache
    return (out @ dout,)


def test_a_backward_that_raises_is_reported_with_its_line(monkeypatch):
    monkeypatch.setattr(ops, "softmax_backward", raises_on_a_shape)
    grade = grader.grade_op("softmax")
    assert grade.status == grader.FAIL and grade.problem == (
        "raised ValueError in a matrix product: a shape does not fit (its inner sizes 3 and 5 differ): did you forget a "
        "transpose? (dx must be (2, 3, 5))")
    line = raises_on_a_shape.__code__.co_firstlineno + 2
    assert grade.where == f"tests/test_grader.py:{line}: return (out @ dout,)"
    lines = grader.report([grade])
    assert lines[-3].strip() == f"on {grade.case}, at {grade.where}" and grade.case == "x (2, 3, 5), axis=-1" and lines[-1] == "0 of 1 pass; FAIL: softmax"


@pytest.mark.parametrize("backward, problem", [
    (lambda dout, cache: dout, "returned a ndarray, not a tuple: return one gradient per input (x), e.g. (dx,)"),
    (lambda dout, cache: (dout, dout), "returned 2 gradients for 1 input (x): one per input"),
    (lambda dout, cache: (None,), "returned None for x, which needs a gradient"),
    (lambda dout, cache: ([list(row) for row in dout],), "returned a list for x: return an ndarray"),
], ids=["not a tuple", "two for one", "None for x", "a list for x"])
def test_the_wrong_number_of_gradients_fails_the_op(monkeypatch, backward, problem):
    monkeypatch.setattr(ops, "exp_backward", backward)
    grade = grader.grade_op("exp")
    assert grade.status == grader.FAIL and problem in grade.problem


def test_a_gradient_for_a_mask_fails_the_op(monkeypatch):
    monkeypatch.setattr(ops, "mask_backward", lambda dout, cache: (np.where(cache, dout, 0), np.zeros(cache.shape)))
    grade = grader.grade_op("mask")
    assert grade.status == grader.FAIL and "returned an array for keep: its gradient is None" in grade.problem


def test_writing_into_dout_fails_the_op_though_the_numbers_are_right(monkeypatch):
    def exp_backward_in_place(dout, cache):
        dout *= cache
        return (dout,)
    monkeypatch.setattr(ops, "exp_backward", exp_backward_in_place)
    grade = grader.grade_op("exp")
    assert grade.status == grader.FAIL and "wrote into dout" in grade.problem


def test_a_gradient_0_05_percent_off_fails(monkeypatch):
    reference = ops.layer_norm_backward
    monkeypatch.setattr(ops, "layer_norm_backward",
                        lambda dout, cache: tuple(g * 1.0005 for g in reference(dout, cache)))
    grade = grader.grade_op("layer_norm")
    assert grade.status == grader.FAIL
    for i in grade.inputs:
        assert not i.passed and 1e-4 < i.error < 1e-3 and i.diagnosis.kind == "factor"
        assert "1 times the right one" not in i.diagnosis.text and "is 1.0005 times" in i.diagnosis.text


def test_a_mistake_on_one_case_names_the_case(monkeypatch):
    reference = ops.softmax_backward
    monkeypatch.setattr(ops, "softmax_backward", lambda dout, cache: reference(dout, (cache[0], -1)))
    (x,) = grader.grade_op("softmax").inputs
    assert not x.passed and (x.failed, x.cases) == (1, 3) and x.failed_case == "x (2, 3, 5), axis=1"
    assert grader.explain(x).endswith("[x (2, 3, 5), axis=1; fails on 1 of 3 cases]")


def test_an_unknown_op_is_refused_with_the_list():
    with pytest.raises(ValueError, match=r"grader: no op named 'sofmax'; the ops are: add, sub, .*, tape"):
        grader.grade_op("sofmax")


def test_the_tape_is_graded_apart_from_the_ops(monkeypatch):
    monkeypatch.setattr(ops, "mul_backward", write_first)        # the tape's check uses no op of the library
    grade = grader.grade_op(grader.TAPE)
    assert grade.status == grader.PASS and [i.name for i in grade.inputs] == ["x", "W"]
    grade = grader.grade_tape(replay=lambda tape, output, grad=None: None)   # a replay that does nothing
    assert grade.status == grader.FAIL and all(i.diagnosis.kind == "zero" for i in grade.inputs[1:])


# `python -m tinytransformer check`

def test_the_command_exits_0_when_every_op_passes(capsys):
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(grader.HEADER) and "pass: error <= 1e-06" in out and out.rstrip().endswith(
        f"{len(grader.op_names())} of {len(grader.op_names())} pass")


def test_the_command_grades_the_ops_named_and_exits_1_on_a_failure(capsys, monkeypatch):
    assert main(["check", "--ops", "softmax,linear"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("2 of 2 pass")
    monkeypatch.setattr(ops, "linear_backward", write_first)
    assert main(["check", "--ops", "linear"]) == 1
    out = capsys.readouterr().out
    assert "not written yet" in out and "Traceback" not in out


def test_the_command_refuses_an_unknown_op_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["check", "--ops", "softmax,sofmax"])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("python -m tinytransformer check: error: argument --ops: no op named sofmax; "
                          "the ops are: add, sub, mul")


def test_a_gradient_in_another_dtype_fails_on_the_float32_trial():
    def cross_entropy_in_float64(dout, cache):
        dlogits, dtargets = ops.cross_entropy_backward(dout, cache)
        return dlogits.astype(np.float64), dtargets
    grade = grader.grade_op("cross_entropy", backward=cross_entropy_in_float64)
    assert grade.status == grader.FAIL and all(g.passed for g in grade.inputs)       # right values in float64
    assert grade.problem.startswith("returned float64 for float32 logits")
    assert grade.case == "logits (2, 3, 5), targets (2, 3), ignore_index=0, label_smoothing=0.1, float32"


def test_a_gradient_sent_to_a_masked_input_fails_on_the_minus_infinity_trial():
    def log_softmax_without_the_mask(dout, cache):           # the right values, and dout passed on where x is -inf
        (dx,) = ops.log_softmax_backward(dout, cache)
        return (np.where(np.isneginf(cache[0]), dout, dx),)
    grade = grader.grade_op("log_softmax", backward=log_softmax_without_the_mask)
    assert grade.status == grader.FAIL and all(g.passed for g in grade.inputs)
    assert "where x is -inf" in grade.problem and grade.case == "x (3, 4), axis=-1, -inf inputs"
    assert grader.grade_op("log_softmax").status == grader.PASS and grader.grade_op("softmax").status == grader.PASS
