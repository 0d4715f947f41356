"""plot.py: each function draws what it is given, on a new or a given Axes, and returns the Axes."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")                     # no display needed; must come before pyplot is imported
import matplotlib.pyplot as plt           # noqa: E402

import tinytransformer as tt              # noqa: E402
from tinytransformer.tools import plot    # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_attention_heatmap_shows_the_weights_with_token_labels():
    weights = tt.ops.softmax_forward(np.random.default_rng(0).standard_normal((3, 4)))[0]   # (T_q, T_k)
    ax = plot.attention_heatmap(weights, x_labels=["a", "b", "c", "d"], y_labels=[5, 6, 7], title="head 0")
    image = ax.images[0]
    assert image.get_array().shape == (3, 4)
    np.testing.assert_array_equal(image.get_array(), weights)
    assert image.get_clim() == (0.0, 1.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c", "d"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["5", "6", "7"]
    assert ax.get_title() == "head 0"
    assert len(ax.texts) == 0             # no numbers written unless asked


def test_attention_heatmap_annotates_every_cell_and_draws_on_a_given_axes():
    fig, (left, right) = plt.subplots(1, 2)
    weights = np.array([[1.0, 0.0], [0.25, 0.75]])
    ax = plot.attention_heatmap(tt.Tensor(weights), ax=right, annotate=True)
    assert ax is right and ax.figure is fig
    assert len(left.images) == 0
    assert [t.get_text() for t in ax.texts] == ["1.00", "0.00", "0.25", "0.75"]


def test_attention_heatmap_rejects_bad_shapes_and_label_counts():
    with pytest.raises(ValueError, match="2"):
        plot.attention_heatmap(np.ones((2, 3, 3)))
    with pytest.raises(ValueError, match="x_labels has 2 labels for 3"):
        plot.attention_heatmap(np.ones((2, 3)) / 3, x_labels=["a", "b"])


def test_positional_encoding_matrix_is_the_whole_matrix_as_an_image():
    P = tt.sinusoidal_positions(400, 512)
    ax = plot.positional_encoding_matrix(P, title="P")
    image = ax.images[0]
    assert image.get_array().shape == (400, 512)
    np.testing.assert_array_equal(image.get_array(), P)
    assert image.get_clim() == (-1.0, 1.0)
    assert ax.get_title() == "P"


def test_loss_curve_plots_losses_against_steps():
    losses = [2.3, 1.1, 0.4, 0.2]
    ax = plot.loss_curve(losses)
    (line,) = ax.get_lines()
    np.testing.assert_array_equal(line.get_xdata(), [0, 1, 2, 3])
    np.testing.assert_array_equal(line.get_ydata(), losses)
    assert ax.get_ylabel() == "loss" and ax.get_yscale() == "linear"

    ax = plot.loss_curve(losses, steps=[10, 20, 30, 40], label="copy", log_scale=True)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [10, 20, 30, 40])
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["copy"]


def test_curves_of_two_runs_share_one_axes():
    ax = plot.loss_curve([1.0, 0.5], label="copy")
    assert plot.loss_curve([1.2, 0.9], ax=ax, label="reverse") is ax
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["copy", "reverse"]


def test_accuracy_curve_spans_zero_to_one():
    ax = plot.accuracy_curve([0.0, 0.5, 1.0], steps=[0, 100, 200], ylabel="exact match")
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [0.0, 0.5, 1.0])
    low, high = ax.get_ylim()
    assert low <= 0.0 and high >= 1.0
    assert ax.get_ylabel() == "exact match"


def test_curve_rejects_steps_of_the_wrong_length():
    with pytest.raises(ValueError, match="3 steps for 2 values"):
        plot.loss_curve([1.0, 0.5], steps=[0, 1, 2])


def text_sizes_in_pixels(ax):
    """Pixel heights (font size in points * dpi / 72) of every tick label, axis label and title of ax."""
    ax.figure.canvas.draw()
    texts = ax.get_xticklabels() + ax.get_yticklabels() + [ax.xaxis.label, ax.yaxis.label, ax.title]
    return [t.get_fontsize() * ax.figure.dpi / 72 for t in texts if t.get_text()]


@pytest.mark.parametrize("draw", [
    lambda: plot.attention_heatmap(np.full((10, 12), 1 / 12), list("abcdefghijkl"), list("0123456789"),
                                   title="a 10 x 12 heatmap", annotate=True),
    lambda: plot.positional_encoding_matrix(tt.sinusoidal_positions(50, 64), title="P"),
    lambda: plot.loss_curve([2.0, 1.0, 0.5], label="run", title="loss"),
], ids=["heatmap", "positions", "curve"])
def test_new_figures_are_readable_on_a_page_of_the_book(draw):
    # text at least 15 pixels high, the figure at most 800 pixels wide (shown unshrunk), even when the
    # process's defaults ask for tiny text and a low resolution
    with matplotlib.rc_context({"font.size": 6, "xtick.labelsize": 5, "ytick.labelsize": 5, "figure.dpi": 50}):
        ax = draw()
    assert min(text_sizes_in_pixels(ax)) >= 15
    assert ax.figure.get_size_inches()[0] * ax.figure.dpi <= 800
    assert all(t.get_fontsize() * ax.figure.dpi / 72 >= 15 for t in ax.texts)    # the annotations too


def test_use_style_sets_readable_defaults_for_other_figures():
    with matplotlib.rc_context():
        plot.use_style()
        fig, ax = plt.subplots()
        ax.set_xticks([0, 1], ["a", "b"])
        ax.set_xlabel("x")
        assert min(text_sizes_in_pixels(ax)) >= 15
        assert fig.get_size_inches()[0] * fig.dpi <= 800
