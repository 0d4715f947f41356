"""The notebooks: committed executed, run top to bottom, and say what the library computes.

Every notebooks/NN_*.ipynb is checked twice:
- as committed: every code cell was executed, in order 1..n, without an error,
  so a notebook edited but not re-run is caught (fast, no kernel);
- executed afresh with nbclient (marked `notebook`; deselect with -m "not notebook"):
  no cell may raise, each exercise's check reports "not done yet" on the stub,
  and each solution cell's check reports "correct".
The worked example of notebook 01 is checked number by number: the library
computes the numbers its prose states, and the notebook shows them.
"""
import copy
from pathlib import Path

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F

nbformat = pytest.importorskip("nbformat")

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
# A guard against a hung cell, not a speed target: the 60-second budget of a
# notebook is measured by benchmarks/notebook_times.py, never by a timed test.
CELL_TIMEOUT = 600         # seconds

# The worked example as its prose states it (4 decimals), and the common write-up's rounding.
SCORES_1 = [2, 4, 4]
SOFTMAX_1 = [0.0634, 0.4683, 0.4683]
OUTPUT_1 = [1.9366, 6.6831, 1.5951]
WRITE_UP_SOFTMAX_1 = [0.0, 0.5, 0.5]
WRITE_UP_OUTPUT_1 = [2.0, 7.0, 1.5]


def ids(paths):
    return [p.name for p in paths]


def read(path):
    return nbformat.read(path, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def output_text(cell):
    """Everything a code cell printed or returned, as text."""
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    return "".join(parts)


def errors(nb):
    return [(i, out.ename, out.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for out in c.get("outputs", []) if out.output_type == "error"]


def tagged(nb, tag):
    return [c for c in nb.cells if tag in c.metadata.get("tags", [])]


def test_notebooks_exist():
    names = ids(NOTEBOOKS)
    for prefix in ("01_", "02_", "03_", "04_", "05_", "06_"):
        assert any(n.startswith(prefix) for n in names), f"no notebook {prefix}*.ipynb in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_committed_notebook_is_executed(path):
    nb = read(path)
    counts = [c.execution_count for c in code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: code cells must be executed in order 1..{len(counts)} (got {counts}); "
        "re-run the notebook top to bottom and commit it with its outputs")
    assert not errors(nb), f"{path.name}: committed with errors {errors(nb)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_committed_exercises_check_honestly(path):
    check_exercise_cells(read(path), path.name)


def check_exercise_cells(nb, name):
    """Stubs are reported 'not done yet'; solutions pass their check."""
    for cell in tagged(nb, "check"):
        text = output_text(cell)
        assert "not done yet" in text, f"{name}: a check cell does not report the stub as not done:\n{text}"
    for cell in tagged(nb, "solution"):
        text = output_text(cell)
        assert "correct" in text and "not right" not in text and "FAIL" not in text, (
            f"{name}: a solution cell does not pass its check:\n{text}")


# ---------------------------------------------------------------------------
# The worked example: the library computes the prose's numbers, the notebook shows them.

def test_worked_example_numbers_from_the_library():
    X, W_q, W_k, W_v = tt.data.WORKED_X, tt.data.WORKED_W_Q, tt.data.WORKED_W_K, tt.data.WORKED_W_V
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores_1 = K @ Q[0]
    assert np.array_equal(scores_1, SCORES_1)
    softmax_1, _ = tt.ops.softmax_forward(scores_1)
    assert np.array_equal(softmax_1.round(4), SOFTMAX_1)
    out, weights = F.attention(Q, K, V, scale=1.0)                  # the unscaled example
    assert np.array_equal(weights[0].round(4), SOFTMAX_1)
    assert np.array_equal(out.data[0].round(4), OUTPUT_1)
    # the common write-up rounds the softmax to [0, 0.5, 0.5] (off by 0.0634 at most), which gives [2, 7, 1.5]
    assert np.abs(softmax_1 - WRITE_UP_SOFTMAX_1).max().round(4) == 0.0634
    assert np.allclose(np.array(WRITE_UP_SOFTMAX_1) @ V, WRITE_UP_OUTPUT_1)
    assert not np.allclose(out.data[0], WRITE_UP_OUTPUT_1, atol=1e-2)


def prose(values):
    """[2, 4, 4] / [0.0634, 0.4683, 0.4683]: how the markdown writes a vector."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def printed(values):
    """How NumPy prints it with the notebook's precision=4, suppress=True."""
    with np.printoptions(precision=4, suppress=True):
        return str(np.array(values, dtype=np.float64))


def check_worked_example_text(nb):
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    outputs = "\n".join(output_text(c) for c in code_cells(nb))
    for values in (SCORES_1, SOFTMAX_1, OUTPUT_1, WRITE_UP_SOFTMAX_1, WRITE_UP_OUTPUT_1):
        assert prose(values) in markdown, f"the prose of notebook 01 does not state {prose(values)}"
    for values in (SCORES_1, SOFTMAX_1, OUTPUT_1, WRITE_UP_OUTPUT_1):
        assert printed(values) in outputs, f"notebook 01 does not print {printed(values)}"


def worked_example_notebook():
    matches = [p for p in NOTEBOOKS if p.name.startswith("01_")]
    assert matches, "notebook 01 is missing"
    return matches[0]


def test_worked_example_numbers_in_the_committed_notebook():
    check_worked_example_text(read(worked_example_notebook()))


# ---------------------------------------------------------------------------
# Execute every notebook afresh.

@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_runs_top_to_bottom(path):
    nbclient = pytest.importorskip("nbclient")
    nb = copy.deepcopy(read(path))
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()                      # raises CellExecutionError on the first failing cell
    assert not errors(nb)
    check_exercise_cells(nb, path.name)
    if path == worked_example_notebook():
        check_worked_example_text(nb)
