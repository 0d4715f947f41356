"""The grader's diagnoses: each pattern recognised on a gradient built to show it, and none where none fits."""
import numpy as np
import pytest

from tinytransformer.course.diagnose import diagnose, explain_raised, factor_name, places


@pytest.fixture
def right(rng):
    return rng.standard_normal((2, 3, 5))


def test_wrong_sign(right):
    d = diagnose("x", -right, right, right.shape)
    assert d.kind == "wrong sign" and "minus" in d.text


@pytest.mark.parametrize("c, name", [(2.0, "2"), (0.5, "0.5 (1/2)"), (np.sqrt(5), "2.23607 (sqrt 5)"),
                                     (1 / np.sqrt(8), "0.353553 (1/sqrt 8)"), (0.7, "0.7")])
def test_constant_factor_and_its_name(right, c, name):
    d = diagnose("x", c * right, right, right.shape)
    assert d.kind == "factor" and d.detail == pytest.approx(c, rel=1e-9)
    assert f"is {name} times the right one" in d.text


def test_transposed_shape_and_transposed_values(rng):
    right = rng.standard_normal((5, 4))
    d = diagnose("W", right.T, right, right.shape)
    assert d.kind == "transposed" and "your dW is (4, 5), W is (5, 4)" in d.text and "wrong after" not in d.text
    square = rng.standard_normal((2, 4, 4))
    assert diagnose("a", square.swapaxes(-1, -2), square, square.shape).kind == "transposed"


def test_missing_sum_over_the_broadcast_axes(rng):
    per_copy = rng.standard_normal((2, 3, 5))                   # the gradient before summing to b (5,)
    d = diagnose("b", per_copy, per_copy.sum(axis=(0, 1)), (5,))
    assert d.kind == "missing sum" and d.detail == (0, 1) and "summed over them it is right" in d.text
    d = diagnose("a", per_copy, per_copy.sum(axis=(0, 2), keepdims=True)[0], (3, 1))
    assert d.kind == "missing sum" and d.detail == (0, 2)
    d = diagnose("b", per_copy, np.ones(5), (5,))
    assert d.kind == "missing sum" and "wrong after the sum too" in d.text


def test_a_shape_that_fits_no_pattern(right):
    assert diagnose("x", np.ones((4, 4)), right, right.shape).kind == "wrong shape"


def test_zero_everywhere_and_zero_where_it_should_not_be(right):
    assert diagnose("x", np.zeros_like(right), right, right.shape).kind == "zero"
    yours = right.copy()
    yours[1, 2, :] = 0
    d = diagnose("x", yours, right, right.shape)
    assert d.kind == "zero" and "5 of 30 elements: x[1, 2, :]" in d.text


def test_nonzero_where_it_should_be_zero(right):
    truth = right * (right > 0)                                  # relu's gradient: zero where x < 0
    d = diagnose("x", right, truth, right.shape)
    assert d.kind == "nonzero" and np.array_equal(d.detail, right <= 0)


def test_only_some_elements_wrong_says_how_many_and_where(rng):
    right = rng.standard_normal((7, 5))
    yours = right.copy()
    yours[[0, 3]] *= 0.5                                         # two rows of a table
    d = diagnose("table", yours, right, right.shape)
    assert d.kind == "some elements" and d.text.endswith("10 of 35 elements: table[0, :], table[3, :]")
    yours = right.copy()
    yours[1, 2] += 1.0
    d = diagnose("table", yours, right, right.shape)
    assert d.kind == "some elements" and d.text.endswith("1 of 35 elements: table[1, 2]")


def test_close_everywhere_is_not_called_some_elements(right):
    yours = right * (1 + 1e-4 * np.sin(right))                  # a formula near the right one
    d = diagnose("x", yours, right, right.shape)
    assert d.kind == "close"


def test_nan_is_reported(right):
    yours = right.copy()
    yours[0, 0, 0] = np.nan
    assert diagnose("x", yours, right, right.shape).kind == "not finite"


def test_wrong_everywhere_in_no_pattern_gets_no_diagnosis(rng, right):
    assert diagnose("x", rng.standard_normal(right.shape), right, right.shape) is None


def test_places_lists_at_most_four_places():
    wrong = np.zeros((6, 6), dtype=bool)
    wrong[np.arange(6), np.arange(6)] = True
    assert places("x", wrong) == "6 of 36 elements: x[0, 0], x[1, 1], x[2, 2], x[3, 3], ... (6 places)"


def test_factor_names():
    assert factor_name(10.0) == "10" and factor_name(0.1) == "0.1 (1/10)" and factor_name(1.234) == "1.234" and factor_name(1.0005) == "1.0005"


@pytest.mark.parametrize("product, said", [
    (lambda: np.ones((2, 3, 5)) @ np.ones((2, 3, 5)), "its inner sizes 3 and 5 differ"),
    (lambda: np.dot(np.ones((4, 3)), np.ones((4, 3))), "shapes (4,3) and (4,3) do not align"),
])
def test_a_matrix_product_whose_shapes_do_not_fit_asks_for_a_transpose(product, said):
    with pytest.raises(ValueError) as raised:
        product()
    text = explain_raised(f"raised ValueError: {raised.value}", {"x": (2, 3, 5), "W": (5, 4)})
    assert text == (f"raised ValueError in a matrix product: a shape does not fit ({said}): did you forget a "
                    "transpose? (dx must be (2, 3, 5), dW must be (5, 4))")
    assert "gufunc" not in text
    assert explain_raised("raised KeyError: 3", {"x": (2,)}) == "raised KeyError: 3"
