"""What a notebook prints from a record under benchmarks/results/ is what the record holds now.

A code cell that reads a record (its source names a NAME.json under benchmarks/results/) is a record
cell. Each must compute from the records alone: run after the notebook's first code cell (its imports
and settings) and the record cells before it, in one namespace, it must print exactly what the committed
notebook stores as its output. So a record measured again after the notebook was executed is caught,
as the stale losses of notebook 17 were; a test plants a changed record and checks that it is caught.
The prose is held to those outputs by test_notebooks.py; a number the prose quotes straight from a
record (listed in notebook_numbers.py with the record as its source) must be a value of that record,
by the rule test_docs_numbers.py applies to the pages.
"""
import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

import notebook_numbers  # noqa: E402  (tests/notebook_numbers.py)
from test_docs_numbers import matches, record_values
from test_notebooks import NOTEBOOKS, code_cells, ids, read

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "benchmarks" / "results"
NAMES_A_FILE = re.compile(r"[\"'/]([\w.-]+\.json)[\"']")
RECORD_NAMES = {record.name for record in RECORDS.glob("*.json")}


def record_cells(nb):
    """The code cells that name a record of benchmarks/results/."""
    return [c for c in code_cells(nb) if set(NAMES_A_FILE.findall(c.source)) & RECORD_NAMES]


RECORD_NOTEBOOKS = [p for p in NOTEBOOKS if record_cells(read(p))]


def stdout_of(cell):
    """What a committed code cell printed (figures and returned values left out)."""
    return "".join(out.text for out in cell.get("outputs", []) if out.output_type == "stream" and out.name == "stdout")


def rerun_record_cells(nb, root, monkeypatch):
    """[(cell, what it prints now)] for the record cells of nb, run from root/notebooks after the first code cell
    (its speed settings and figure style kept out of the test's process: they change no number a record prints)."""
    import matplotlib
    matplotlib.use("Agg")                                   # plt.show() draws nothing
    import matplotlib.pyplot as plt
    import tinytransformer as tt
    monkeypatch.setattr(tt, "use_speed_settings", lambda *args, **kwargs: {})
    monkeypatch.chdir(root / "notebooks")
    namespace = {"__name__": "__main__"}
    printed = []
    with matplotlib.rc_context():
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code_cells(nb)[0].source, namespace)
        for cell in record_cells(nb):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(cell.source, namespace)
            plt.close("all")
            printed.append((cell, out.getvalue()))
    return printed


def test_the_notebooks_that_read_records_are_found():
    names = {p.name[:2] for p in RECORD_NOTEBOOKS}
    assert {"08", "12", "17"} <= names, names


@pytest.mark.parametrize("path", RECORD_NOTEBOOKS, ids=ids(RECORD_NOTEBOOKS))
def test_what_a_notebook_prints_from_a_record_is_the_record(path, monkeypatch):
    nb = read(path)
    for cell, now in rerun_record_cells(nb, ROOT, monkeypatch):
        assert now == stdout_of(cell), (
            f"{path.name}: a cell that reads a record printed, when committed:\n{stdout_of(cell)}\n"
            f"and prints from the records now:\n{now}\nre-execute the notebook (notebooks/execute.py) and make its "
            "prose follow the outputs")


def test_a_record_measured_again_after_the_notebook_is_caught(tmp_path, monkeypatch):
    shutil.copytree(RECORDS, tmp_path / "benchmarks" / "results")
    (tmp_path / "notebooks").mkdir()
    record = json.loads((RECORDS / "modern_block.json").read_text())
    run = next(r for r in record["runs"] if r["block"] == "modern")
    run["final_held_out_loss"] += 0.011                       # a re-run that ended a little higher
    (tmp_path / "benchmarks" / "results" / "modern_block.json").write_text(json.dumps(record))
    nb = read(ROOT / "notebooks" / "17_todays_llm_block.ipynb")
    reruns = rerun_record_cells(nb, tmp_path, monkeypatch)
    stale = [now for cell, now in reruns if now != stdout_of(cell)]
    assert len(stale) == 1 and f"{run['final_held_out_loss']:.3f}" in stale[0]


def test_notebook_17_trains_seed_0_of_its_record():
    """Cell by cell, notebook 17 trains both blocks on the story with seed 0 and then prints the record of
    benchmarks/modern_block.py, whose seed 0 is the same run: the two must agree (the prose compares them)."""
    record = json.loads((RECORDS / "modern_block.json").read_text())
    printed = "".join(stdout_of(c) for c in code_cells(read(ROOT / "notebooks" / "17_todays_llm_block.ipynb")))
    for run in (r for r in record["runs"] if r["seed"] == 0):
        losses = ", ".join(f"step {step}: {loss:.3f}" for step, loss in run["eval_history"])
        assert f"held-out loss {losses}" in printed, (run["block"], losses)


SOURCED_FROM_A_RECORD = [(prefix, number, name) for prefix, numbers in notebook_numbers.SOURCED.items()
                         for number, source in numbers.items()
                         for name in re.findall(r"benchmarks/results/([\w.-]+\.json)", source)]


@pytest.mark.parametrize("prefix, number, name", SOURCED_FROM_A_RECORD)
def test_a_number_the_prose_quotes_from_a_record_is_in_it(prefix, number, name):
    values = record_values(json.loads((RECORDS / name).read_text()))
    assert matches(number, values), f"notebook {prefix}: {number} is listed as from {name}, which does not hold it"


def test_a_number_not_in_its_record_is_caught():
    values = record_values(json.loads((RECORDS / "text_tokenizers.json").read_text()))
    assert SOURCED_FROM_A_RECORD and matches("1,881", values) and not matches("1,891", values)
