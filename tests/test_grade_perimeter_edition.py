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
