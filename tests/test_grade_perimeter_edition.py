"""An edition's notebooks spell no blank backward pass: a teaching line that prints one is left out, as the
function is blanked, even under other names (notebook 17 printed silu's derivative beside its plot)."""
import json
from pathlib import Path

from tinytransformer.course import edition
from tinytransformer.course.answers import answer_forms, without_answers

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "17_todays_llm_block.ipynb"
EVERY = {f"{op}_backward" for op in edition.op_files()}


def code(source):
    return {"cell_type": "code", "metadata": {}, "source": source.splitlines(keepends=True),
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["0.5\n"]}], "execution_count": 3}


def test_notebook_17_loses_the_silu_derivative_line_and_its_output_and_nothing_else():
    text = NOTEBOOK.read_text()
    before = json.loads(edition.student_notebook(text))["cells"]
    after = json.loads(edition.student_notebook(text, answer_forms(EVERY)))["cells"]
    changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == [5] and len(before) == len(after)
    source = "".join(after[5]["source"])
    assert "s + x * s * (1 - s)" in "".join(before[5]["source"]) and "s + x * s * (1 - s)" not in source
    assert "left out of this edition: it printed silu_backward's answer" in source
    assert "tt.gradcheck(F.silu" in source and "width = tt.nn.swiglu_d_ff(d_ff)" in source   # the rest still runs
    assert after[5]["outputs"] == [] and "d silu / dx" in json.dumps(before[5]["outputs"])


def test_a_week_that_keeps_silu_keeps_the_line():
    text = NOTEBOOK.read_text()
    assert edition.student_notebook(text, answer_forms({"softmax_backward"})) == edition.student_notebook(text)


def test_a_copy_under_other_names_is_recognised_and_honest_code_is_not():
    found = answer_forms(EVERY)
    renamed = code("print(sig + t * sig * (1.0 - sig))\nother = 2\n")
    cell = without_answers(renamed, found)
    assert cell["source"][0].startswith("# left out") and cell["source"][1] == "other = 2\n" and cell["outputs"] == []
    kept = [code("d = sig + t * sig * (1 - sig)\nprint(d)\n"),          # an assignment: later cells may need d
            code("%matplotlib inline\nprint(s + x * s * (1 - s))\n"),   # no Python: left as it is
            code("print(x - x.mean(axis=-1, keepdims=True))\n"),       # layer norm's forward centres x too
            code("print(np.exp(x - x.max(axis=-1, keepdims=True)))\n")]
    assert all(without_answers(cell, found) is cell for cell in kept)


# Cells, pages and scripts that work a blank op's backward out by hand: each piece below is in the library and
# in no file of a fresh edition (a notebook's cells' sources and outputs, every other text file).
SPELLED = {
    "notebooks/01_self_attention_by_hand.ipynb": "dS = A * (dA - (dA * A).sum(axis=-1, keepdims=True))",
    "notebooks/03_every_op.ipynb": "dz = d_log_p - np.exp(log_p) * d_log_p.sum(axis=-1, keepdims=True)",
    "notebooks/06_layer_normalisation.ipynb": "dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True))",
    "notebooks/16_vision_transformer.ipynb": "W -= lr * (x1.T @ (p - one_hot) / len(x) + l2 * W)",
    "tinytransformer/ops/attention.py": "dS = A * (dA - sum_j dA_j A_j)",         # docs/teaching.md quoted it
    "docs/results/speed.md": "`p - s/V - (1 - s) * one_hot(target)`",
    "benchmarks/digits.py": "W -= lr * (x1.T @ (p - one_hot) / len(x) + l2 * W)",
    "benchmarks/floor.py": "# y = x @ W;  dx = dy @ W.T;  dW = x.T @ dy",
}
GELU = "0.5 * grid * (1 - tanh_u ** 2) * c * (1 + 3 * 0.044715 * grid ** 2)"     # notebook 03's gelu' by hand


def edition_text(path):
    """A file's text as the checks read it: a notebook's cells' sources and stored outputs, else the file."""
    if path.suffix != ".ipynb":
        return path.read_text(errors="replace")
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(cell["source"]) + json.dumps(cell.get("outputs", [])) for cell in cells)


def test_no_file_of_a_fresh_edition_spells_the_by_hand_answers_the_library_shows(tmp_path):
    pieces = set(SPELLED.values()) | {GELU}
    library = {name: edition_text(REPO / name) for name in SPELLED}
    assert all(piece in library[name] for name, piece in SPELLED.items())    # the check can fail
    assert GELU in library["notebooks/03_every_op.ipynb"]
    edition.build_edition(tmp_path / "week")
    found = [(path, piece) for path in sorted((tmp_path / "week").rglob("*")) if path.is_file()
             and path.suffix in (".py", ".md", ".ipynb", ".txt", ".toml") for piece in pieces
             if piece in edition_text(path)]
    assert found == []


def test_a_cell_that_works_a_blank_op_out_calls_the_op_instead_and_a_week_that_keeps_it_keeps_the_cell():
    text = (REPO / "notebooks/01_self_attention_by_hand.ipynb").read_text()
    library = json.loads(text)["cells"]
    blank = json.loads(edition.student_notebook(text, answer_forms(EVERY), EVERY))["cells"]
    kept = json.loads(edition.student_notebook(text, None, {"matmul_backward"}))["cells"]
    index = next(i for i, cell in enumerate(library) if cell["metadata"].get("answer_of") == ["softmax"])
    assert "tt.ops.softmax_backward(dA, (A, -1))" in "".join(blank[index]["source"])
    assert blank[index]["outputs"] == [] and "answer_of" not in json.dumps(blank[index]["metadata"])
    assert kept[index]["source"] == library[index]["source"] and kept[index]["outputs"] == library[index]["outputs"]
    assert "edition_source" not in json.dumps(kept[index]["metadata"])
