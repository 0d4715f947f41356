"""Pictures for the notebooks and the command line: attention heatmaps, the
positional-encoding matrix, loss and accuracy curves.

    from tinytransformer import plot
    ax = plot.attention_heatmap(probs, x_labels=src_tokens, y_labels=tgt_tokens)
    ax.figure.savefig("attention.png")

Each function draws on `ax` when one is given (to place several plots in one
figure), else on a new figure, and returns the Axes; the Figure is `ax.figure`.
This is the only file that imports matplotlib: the rest of tinytransformer
needs NumPy alone. (A script drawing many figures should close each one,
`plt.close(ax.figure)`, once saved.)

Readable on a projector: text is set in points at the sizes of FONT_SIZES
(ticks 11 pt, labels 12, titles 13), whatever matplotlib's defaults, and a new
figure is at most 8 inches wide at 100 dpi, so that a page of the book (about
800 pixels wide) shows it at full size: a tick label is then about 15 pixels
high. `use_style()` applies the same sizes to every other figure of a notebook
or script (matplotlib's own default is 10-point text at 100 dpi, and
multi-panel figures wider than the page are shrunk to fit it).
"""
import numpy as np

try:
    import matplotlib.pyplot as plt
except ImportError as error:
    raise ImportError("tinytransformer.plot needs matplotlib: pip install 'tinytransformer[plot]'") from error

from ..tensor import Tensor

FONT_SIZES = dict(ticks=11, labels=12, titles=13, legend=11, annotations=11)   # points
MAX_WIDTH = 8.0                  # inches: 800 pixels at 100 dpi, the width of a page of the book
STYLE = {"figure.dpi": 100, "savefig.dpi": 100, "figure.figsize": (7.0, 4.0),
         "font.size": FONT_SIZES["labels"], "axes.titlesize": FONT_SIZES["titles"],
         "axes.labelsize": FONT_SIZES["labels"], "xtick.labelsize": FONT_SIZES["ticks"],
         "ytick.labelsize": FONT_SIZES["ticks"], "legend.fontsize": FONT_SIZES["legend"],
         "figure.titlesize": FONT_SIZES["titles"]}


def use_style():
    """Make every later figure of this process readable on a projector: matplotlib.rcParams.update(STYLE)."""
    plt.rcParams.update(STYLE)


def _array(values, name, ndim):
    """values (an ndarray, a Tensor or a list) as an ndarray of ndim axes."""
    array = values.data if isinstance(values, Tensor) else np.asarray(values)
    if array.ndim != ndim:
        raise ValueError(f"plot: {name} must have {ndim} axes, got shape {array.shape}")
    return array


def _axes(ax, figsize):
    """The given Axes, or the Axes of a new figure of figsize (inches, at most MAX_WIDTH wide) at 100 dpi."""
    if ax is None:
        width, height = figsize
        scale = min(1.0, MAX_WIDTH / width)
        _, ax = plt.subplots(figsize=(width * scale, height * scale), dpi=STYLE["figure.dpi"], layout="constrained")
    return ax


def _label(ax, xlabel, ylabel, title):
    """Axis labels, title and tick labels at FONT_SIZES (points), whatever the rcParams say."""
    ax.set_xlabel(xlabel, fontsize=FONT_SIZES["labels"])
    ax.set_ylabel(ylabel, fontsize=FONT_SIZES["labels"])
    ax.tick_params(labelsize=FONT_SIZES["ticks"])
    if title is not None:
        ax.set_title(title, fontsize=FONT_SIZES["titles"])


def attention_heatmap(probs, x_labels=None, y_labels=None, ax=None, title=None, annotate=False):
    """Attention probabilities (T_q, T_k) as an image: row t is query t, column s is key s.

    x_labels name the keys (columns), y_labels the queries (rows), e.g. tokens.
    The colour scale is fixed to [0, 1], so heatmaps can be compared with each other.
    annotate=True writes each weight in its cell (readable up to about 10 x 10).
    """
    probs = _array(probs, "probs", 2)
    T_q, T_k = probs.shape
    for name, labels, n in (("x_labels", x_labels, T_k), ("y_labels", y_labels, T_q)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"attention_heatmap: {name} has {len(labels)} labels for {n} "
                             f"{'columns (keys)' if name == 'x_labels' else 'rows (queries)'}")
    ax = _axes(ax, figsize=(2.2 + 0.55 * T_k, 1.4 + 0.55 * T_q))      # a cell of 0.55 in fits "0.25" at 11 pt
    image = ax.imshow(probs, cmap="viridis", vmin=0.0, vmax=1.0)
    colorbar = ax.figure.colorbar(image, ax=ax, shrink=0.8)
    colorbar.ax.tick_params(labelsize=FONT_SIZES["ticks"])
    if x_labels is not None:
        ax.set_xticks(range(T_k), [str(label) for label in x_labels], rotation=90 if T_k > 12 else 0)
    if y_labels is not None:
        ax.set_yticks(range(T_q), [str(label) for label in y_labels])
    _label(ax, "key (attended to)", "query (attending)", title)
    if annotate:
        for (row, column), w in np.ndenumerate(probs):
            ax.text(column, row, f"{w:.2f}", ha="center", va="center",
                    color="black" if w > 0.6 else "white", fontsize=FONT_SIZES["annotations"])
    return ax


def positional_encoding_matrix(P, ax=None, title=None):
    """The positional-encoding matrix P (T, d_model) as an image: row t is position t.

    Columns alternate sin (even) and cos (odd); values lie in [-1, 1].
    """
    P = _array(P, "P", 2)
    ax = _axes(ax, figsize=(8, 4.5))
    image = ax.imshow(P, cmap="RdBu_r", vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest")
    colorbar = ax.figure.colorbar(image, ax=ax)
    colorbar.ax.tick_params(labelsize=FONT_SIZES["ticks"])
    _label(ax, "dimension (even: sin, odd: cos)", "position t", title)
    return ax


def _curve(values, ax, steps, label, title, ylabel):
    values = _array(values, ylabel, 1)
    steps = np.arange(len(values)) if steps is None else _array(steps, "steps", 1)
    if len(steps) != len(values):
        raise ValueError(f"plot: {len(steps)} steps for {len(values)} values of {ylabel}")
    ax = _axes(ax, figsize=(6.5, 3.8))
    ax.plot(steps, values, label=label)
    _label(ax, "step", ylabel, title)
    ax.grid(True, alpha=0.3)
    if label is not None:
        ax.legend(fontsize=FONT_SIZES["legend"])
    return ax


def loss_curve(losses, ax=None, steps=None, label=None, title=None, log_scale=False):
    """Loss against training step (steps defaults to 0, 1, 2, ...).

    Call again with the same ax and a label to compare runs on one plot.
    """
    ax = _curve(losses, ax, steps, label, title, "loss")
    if log_scale:
        ax.set_yscale("log")
    return ax


def accuracy_curve(accuracies, ax=None, steps=None, label=None, title=None, ylabel="accuracy"):
    """Accuracy (a fraction in [0, 1], e.g. exact match) against training step."""
    ax = _curve(accuracies, ax, steps, label, title, ylabel)
    ax.set_ylim(-0.02, 1.02)
    return ax
