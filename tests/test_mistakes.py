"""Every mistake of the catalogue is caught by the grader, and diagnosed right where it is diagnosed."""
import inspect

import numpy as np
import pytest

from tinytransformer.course import grader, mistakes

MISTAKES = {m.backward.__name__: m for m in mistakes.MISTAKES}


def diagnoses(grade):
    """{kind of diagnosis: [input names]} of a grade, with "raised" and "contract" for a problem of the op."""
    found = {}
    for i in grade.inputs:
        if not i.passed and i.diagnosis:
            found.setdefault(i.diagnosis.kind, []).append(i.name)
    if grade.problem:
        found.setdefault("raised" if grade.problem.startswith("raised ") else "contract", []).append("-")
    return found


def test_the_catalogue_has_a_dozen_mistakes_or_more_over_many_ops():
    assert len(MISTAKES) == len(mistakes.MISTAKES) >= 12
    assert len({m.op for m in mistakes.MISTAKES}) >= 12
    for m in mistakes.MISTAKES:
        source = inspect.getsource(m.backward)
        assert source.count("# mistake:") == 1, f"{m.backward.__name__} marks its one change"
        assert m.backward.__doc__, f"{m.backward.__name__} says what it gets wrong"


@pytest.mark.parametrize("name", MISTAKES)
def test_the_grader_catches_it(name):
    m = MISTAKES[name]
    grade = grader.grade_op(m.op, backward=m.backward)
    assert grade.status == grader.FAIL
    given = diagnoses(grade)
    if m.kind is None:
        assert given == {}, f"{name}: the grader gives a diagnosis the catalogue does not expect: {given}"
    else:
        assert m.kind in given, f"{name}: expected {m.kind}, the grader gives {given}"
        assert set(given) <= {m.kind, "contract"}, given


def input_grade(name, input_name):
    m = MISTAKES[name]
    return {i.name: i for i in grader.grade_op(m.op, backward=m.backward).inputs}[input_name]


def first_inputs(op):
    """The inputs of an op's first case on its first draw: what the grader tried first."""
    return grader.first_run(op)[0]


# The diagnoses, checked against what the mistake does.

def test_attention_without_the_scale_in_dq_is_off_by_sqrt_d_k():
    q = input_grade("attention_scale_forgotten_in_dq", "q")
    inputs = first_inputs("attention")
    assert q.diagnosis.detail == pytest.approx(np.sqrt(inputs["q"].shape[-1]), rel=1e-6)   # 1 / scale
    assert "sqrt 5" in q.diagnosis.text


def test_mean_without_dividing_by_n_is_off_by_n():
    x = input_grade("mean_without_dividing_by_n", "x")
    assert x.diagnosis.detail == pytest.approx(2 * 5, rel=1e-6)         # axes (0, 2) of (2, 3, 5)


def test_dropout_without_its_scale_is_off_by_1_minus_p():
    x = input_grade("dropout_scale_forgotten", "x")
    assert x.diagnosis.detail == pytest.approx(1 - 0.3, rel=1e-6)


def test_sub_with_the_wrong_sign_fails_b_only():
    m = MISTAKES["sub_with_the_wrong_sign"]
    a, b = grader.grade_op(m.op, backward=m.backward).inputs
    assert a.passed and not b.passed and b.diagnosis.kind == "wrong sign"


def test_the_missing_sums_name_the_broadcast_axes():
    gamma = input_grade("layer_norm_dgamma_not_summed", "gamma")
    assert gamma.diagnosis.detail == (0, 1) and "summed over them it is right" in gamma.diagnosis.text
    b = input_grade("linear_bias_summed_over_the_batch_axis_only", "b")
    assert b.diagnosis.detail == (0,) and (b.failed, b.cases) == (1, 2)    # right where x is 2-D
    m = MISTAKES["add_without_the_broadcast_sum"]
    grade = grader.grade_op(m.op, backward=m.backward)
    assert {i.name: i.diagnosis.detail for i in grade.inputs} == {"a": (0, 2), "b": (0, 1)}
    assert "returned an array for b" in grade.problem                     # b = 2.5, a plain number


def test_linear_dW_transposed_is_transposed():
    W = input_grade("linear_dW_transposed", "W")
    assert W.diagnosis.kind == "transposed" and "your dW is (4, 5), W is (5, 4)" in W.diagnosis.text


def test_the_embedding_overwrite_is_wrong_at_the_repeated_ids_only():
    table = input_grade("embedding_overwriting_repeated_ids", "table")
    inputs = first_inputs("embedding")
    ids, counts = np.unique(inputs["ids"], return_counts=True)
    repeated = sorted(ids[counts > 1].tolist())
    assert np.array_equal(np.flatnonzero(table.diagnosis.detail.any(axis=1)), repeated)
    assert table.diagnosis.detail[repeated].all()
    assert ", ".join(f"table[{i}, :]" for i in repeated) in table.diagnosis.text


def test_relu_without_its_mask_is_nonzero_exactly_where_x_is_negative():
    x = input_grade("relu_without_the_mask", "x")
    inputs = first_inputs("relu")
    assert np.array_equal(x.diagnosis.detail, inputs["x"] < 0)


def test_cross_entropy_not_zeroing_padding_is_nonzero_at_the_ignored_positions():
    logits = input_grade("cross_entropy_ignored_positions_not_zeroed", "logits")
    inputs = first_inputs("cross_entropy")
    ignored = inputs["targets"] == 0                                     # the first case's ignore_index
    assert np.array_equal(logits.diagnosis.detail, np.broadcast_to(ignored[..., None], (2, 3, 5)))
    assert (logits.failed, logits.cases) == (1, 2)                        # the second case ignores nothing


def test_cross_entropy_without_smoothing_fails_only_with_smoothing_and_only_at_counted_positions():
    logits = input_grade("cross_entropy_without_label_smoothing", "logits")
    inputs = first_inputs("cross_entropy")
    counted = inputs["targets"] != 0
    assert np.array_equal(logits.diagnosis.detail, np.broadcast_to(counted[..., None], (2, 3, 5)))
    assert (logits.failed, logits.cases) == (1, 2) and "label_smoothing=0.1" in logits.failed_case


def test_the_gelu_of_the_other_form_is_close_but_fails():
    x = input_grade("gelu_derivative_of_the_exact_form", "x")
    assert 1e-6 < x.error < 1e-2 and x.diagnosis.kind == "close"


def test_a_mistake_that_vanishes_on_one_shape_shows_on_the_other():
    x = input_grade("softmax_summed_over_the_last_axis", "x")
    assert (x.failed, x.cases) == (1, 3) and "axis=1" in x.failed_case
    x = input_grade("transpose_with_the_same_axes", "x")
    assert (x.failed, x.cases) == (1, 2) and x.diagnosis.kind == "wrong shape"    # a 2-D transpose is its own inverse


@pytest.mark.parametrize("name", ["matmul_gradient_not_transposed", "attention_dk_not_transposed"])
def test_a_mistake_that_raises_points_at_its_line(name):
    m = MISTAKES[name]
    grade = grader.grade_op(m.op, backward=m.backward)
    lines, first = inspect.getsourcelines(m.backward)
    mistake_line = first + next(i for i, line in enumerate(lines) if "# mistake:" in line)
    assert grade.where.startswith(f"tinytransformer/course/mistakes.py:{mistake_line}: ")
    assert grade.problem.startswith("raised ValueError in a matrix product: a shape does not fit") and \
        "did you forget a transpose?" in grade.problem


def test_the_in_place_relu_is_a_broken_contract():
    m = MISTAKES["relu_zeroing_dout_in_place"]
    grade = grader.grade_op(m.op, backward=m.backward)
    assert "wrote into dout" in grade.problem and not grade.where



def test_rope_pairing_the_halves_is_named_and_the_rotations_direction_not_given_away():
    x = input_grade("rope_pairing_the_halves", "x")
    assert x.diagnosis.text.startswith("rope's backward pairs dimension i with i + d_k/2")
    again = input_grade("rope_rotating_forward_again", "x").diagnosis.text
    assert "-angle" not in again and "inverse" not in again


def test_the_rms_norm_mistakes_are_told_apart():
    assert input_grade("rms_norm_ignoring_the_rms", "x").diagnosis.text.startswith(
        "rms norm ignoring how the root mean square depends on x")
    assert input_grade("rms_norm_with_the_mean_term_of_layer_norm", "x").diagnosis.text.startswith(
        "rms norm with layer norm's mean term")
    assert input_grade("rms_norm_dgamma_not_summed", "gamma").diagnosis.detail == (0, 1)
    assert input_grade("rms_norm_rms_term_without_rstd", "x").diagnosis.text.startswith(
        "rms norm with the root mean square's term not scaled as the rest")


def test_a_mean_over_the_wrong_axis_and_silus_second_term_without_x_are_named():
    assert input_grade("layer_norm_means_over_the_first_axis", "x").diagnosis.text.startswith(
        "layer norm with the means of its backward taken over axis 0")
    assert input_grade("silu_second_term_without_x", "x").diagnosis.kind == "silu's second term without x"


FORMULAS = ["s + x s (1 - s)", "s (1 - s)", "mean(dxhat", "-angle", "rstd * (", "dout *", "1 - t"]


@pytest.mark.parametrize("name", MISTAKES)
def test_a_diagnosis_names_the_kind_of_mistake_never_the_answers_formula(name):
    m = MISTAKES[name]
    for i in grader.grade_op(m.op, backward=m.backward).inputs:
        if i.diagnosis:
            assert not [f for f in FORMULAS if f in i.diagnosis.text], (name, i.diagnosis.text)




def test_flash_attentions_D_from_the_wrong_output_leaves_dv_right():
    grade = grader.grade_op("flash_attention", backward=mistakes.flash_attention_D_from_the_tiles_output)
    found = {i.name: i for i in grade.inputs}
    assert found["v"].passed and not found["q"].passed and not found["k"].passed


def test_flash_attentions_mistakes_are_not_named_without_the_catalogue(monkeypatch):
    """An edition has no catalogue (mistakes.py is left out): its grader names none of these, and says FAIL."""
    import builtins
    real_import = builtins.__import__

    def without_the_catalogue(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 1 and "mistakes" in (fromlist or ()):
            raise ImportError("no catalogue in an edition")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", without_the_catalogue)
    grade = grader.grade_op("flash_attention", backward=mistakes.flash_attention_rescaling_forgotten)
    assert grade.status == grader.FAIL
    assert not any(i.diagnosis and i.diagnosis.kind.startswith("flash") for i in grade.inputs)
