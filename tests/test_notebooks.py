"""The notebooks: committed executed, run top to bottom, and say what the library computes.

Every notebooks/NN_*.ipynb is checked twice:
- as committed: every code cell was executed, in order 1..n, without an error,
  so a notebook edited but not re-run is caught (fast, no kernel); it has its
  exercises, one check cell per exercise and one collapsed solution per check;
  its title cell ends with its learning objectives; its figures fit the book's
  column; and every number its prose quotes is one its outputs print, or one
  with a source in notebook_numbers.py (the rule is written out there);
- executed afresh with nbclient (marked `notebook`; deselect with -m "not notebook"):
  no cell may raise, each exercise's check reports "not done yet" on the stub,
  and each solution cell's check reports "correct".
The numbers that define a lesson are computed here with the library and must
appear in the committed notebook's outputs: notebook 01's worked example and
the variance of q.k, 07's parameter count of the base model, 09's equal ids
with and without the key/value cache, 10's crossover.
"""
import base64
import copy
import io
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.course import worked_example

nbformat = pytest.importorskip("nbformat")

import notebook_numbers  # noqa: E402  (tests/notebook_numbers.py: the prose's numbers that come from elsewhere)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
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
    for prefix in ("01_", "02_", "03_", "04_", "05_", "06_", "07_", "08_", "09_", "10_", "11_", "12_", "13_", "14_"):
        assert any(n.startswith(prefix) for n in names), f"no notebook {prefix}*.ipynb in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_has_exercises_checks_and_solutions(path):
    nb = read(path)
    exercises, checks, solutions = (tagged(nb, tag) for tag in ("exercise", "check", "solution"))
    assert exercises, f"{path.name}: no cell tagged 'exercise'"
    assert len(checks) == len(exercises), (
        f"{path.name}: {len(exercises)} exercise cells but {len(checks)} check cells; each exercise needs its check")
    assert len(solutions) == len(checks), (
        f"{path.name}: {len(checks)} check cells but {len(solutions)} solution cells; each check needs a solution")
    for cell in exercises + checks + solutions:
        assert cell.cell_type == "code", f"{path.name}: a tagged cell is {cell.cell_type}, not code"
    for cell in solutions:
        assert cell.metadata.get("jupyter", {}).get("source_hidden"), f"{path.name}: a solution cell is not collapsed"
    order = [i for i, c in enumerate(nb.cells) if set(c.metadata.get("tags", [])) & {"exercise", "check", "solution"}]
    first_solution = min(nb.cells.index(c) for c in solutions)
    assert all(nb.cells.index(c) < first_solution for c in exercises + checks), (
        f"{path.name}: the solutions must come after every exercise and check (cells {order})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_title_cell_ends_with_learning_objectives(path):
    # the title cell's last paragraph: **Learning objectives.** and 3 to 5 bullets, each a thing to do
    title = read(path).cells[0]
    assert title.cell_type == "markdown" and title.source.startswith("# "), f"{path.name}: no title cell"
    _, found, objectives = title.source.partition("**Learning objectives.**")
    assert found, f"{path.name}: the title cell has no **Learning objectives.** paragraph"
    lines = [line for line in objectives.split("\n")[1:] if line.strip()]
    bullets = [line[2:] for line in lines if line.startswith("- ")]
    assert 3 <= len(bullets) <= 5, f"{path.name}: {len(bullets)} learning objectives, not 3 to 5"
    assert all(line.startswith(("- ", "  ")) for line in lines), f"{path.name}: the objectives must end the title cell"
    for bullet in bullets:
        verb = bullet.split()[0]
        assert verb.replace("-", "").isalpha() and verb.islower() and verb not in ("the", "a", "an", "how", "why", "what"), (
            f"{path.name}: an objective starts with {verb!r}, not a verb: {bullet!r}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_figures_fit_a_page_of_the_book(path):
    # at most 832 pixels wide, the book's notebook column (52em, docs/_static/book.css): shown unshrunk there,
    # the 11-point tick labels of plot.use_style() stay about 15 pixels high (8 inches at 100 dpi, plot.MAX_WIDTH,
    # plus the margin the notebook's tight bounding box adds)
    Image = pytest.importorskip("PIL.Image")
    for i, cell in enumerate(read(path).cells):
        for out in cell.get("outputs", []):
            for mime in ("image/png", "image/jpeg"):
                if mime in out.get("data", {}):
                    width, _ = Image.open(io.BytesIO(base64.b64decode(out["data"][mime]))).size
                    assert width <= 832, f"{path.name}: the figure of cell {i} is {width} pixels wide (at most 832)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_committed_notebook_is_executed(path):
    nb = read(path)
    counts = [c.execution_count for c in code_cells(nb)]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: code cells must be executed in order 1..{len(counts)} (got {counts}); "
        "re-run the notebook top to bottom and commit it with its outputs")
    assert not errors(nb), f"{path.name}: committed with errors {errors(nb)}"


TRAINS = re.compile(r"\btrain(?:_step)?\(|\.step\(\)")     # the library's train or train_step, a loop of its own,
SPEED_SETTINGS = "tt.use_speed_settings()"                     # or an optimizer's step
NO_SPEED_SETTINGS = re.compile(r"^# no tt\.use_speed_settings\(\): \S.{20,}", re.MULTILINE)   # and a reason


def speed_settings_verdict(nb):
    """None if the notebook trains nothing, or its first code cell calls tt.use_speed_settings() (one BLAS
    thread, as the printed numbers were made and as fast on a 2-core machine) or says in a comment, at
    the start of a line, "# no tt.use_speed_settings(): " and why; else what is wrong."""
    cells = code_cells(nb)
    if not any(TRAINS.search(c.source) for c in cells):
        return None
    first = cells[0].source
    called = any(line.split("#")[0].strip() == SPEED_SETTINGS for line in first.splitlines())
    if called or NO_SPEED_SETTINGS.search(first):
        return None
    return ("it trains, but its first code cell neither calls tt.use_speed_settings() nor says why not "
            "('# no tt.use_speed_settings(): ' and the reason)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_a_notebook_that_trains_uses_the_speed_settings_or_says_why_not(path):
    verdict = speed_settings_verdict(read(path))
    assert verdict is None, f"{path.name}: {verdict}"


def test_a_notebook_that_trains_without_the_speed_settings_is_caught():
    nb = read(NOTEBOOK_DIR / "17_todays_llm_block.ipynb")
    first = code_cells(nb)[0]
    assert speed_settings_verdict(nb) is None
    first.source = first.source.replace(SPEED_SETTINGS, "# " + SPEED_SETTINGS)
    assert speed_settings_verdict(nb) is not None                      # commented out is not called
    first.source += "\n# no tt.use_speed_settings(): fine"
    assert speed_settings_verdict(nb) is not None                      # a reason must say something
    first.source += " as one thread or two print the same numbers here"
    assert speed_settings_verdict(nb) is None


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
# Every number the prose quotes is one an output printed, or one with a source.
#
# The rule, for every notebook (tests/notebook_numbers.py says it for the authors):
# each number written in a markdown cell, outside inline code, must be
#   - printed by one of the notebook's outputs, with the same value as printed
#     ("0.4683", "15,680", "99.2%" against "99.2%"; "22.6" does not match "22.59"), or
#   - written in the notebook's code (a setting the prose restates: d_model = 32), or
#   - an integer from 0 to 10 (counts, indices, small constants), or a reference
#     ("notebook 12", "section 5.3", "Table 1", "exercise 3"), or
#   - listed for that notebook in notebook_numbers.SOURCED with its source: the
#     paper, a course document, or arithmetic the prose itself does.
# So a number quoted from an output cannot drift when the notebook is re-run.

SCIENTIFIC_TEX = re.compile(r"(?<![\d.])(?:(\d+(?:\.\d+)?)\s*\\(?:times|cdot)\s*)?10\^\{?(-?\d+)\}?")
PROSE_NUMBER = re.compile(r"(?<![\w.\\])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
                          r"(?!\d|\.\d)(?:M(?![A-Za-z]))?(?![A-Za-z_])")     # 18.9M is 18.9 (million)
PRINTED_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[-+]?\d+)?)")
REFERENCE = re.compile(r"(?i)(?:\b(?:notebooks?|sections?|tables?|equations?|exercises?|cells?|chapters?|"
                       r"figures?|rows?|parts?)\s+(?:\d+\S*\s*(?:,|and|or|to)\s*)*|et al\.?,?\s*\(?)$")


def number_value(text):
    """The value of a number as written ("15,680", "0.50", "1e-9"), comparable across ways of writing it."""
    return Decimal(text.replace(",", "")).normalize()


def printed_values(text):
    return {number_value(m.group(1)) for m in PRINTED_NUMBER.finditer(text)}


def prose_numbers(markdown):
    """[(number as written, its context)] of a markdown cell: inline code, links and indices left out."""
    text = re.sub(r"```.*?```|`[^`]*`|https?://\S+|<[^>]+>", lambda m: " " * len(m.group(0)), markdown, flags=re.S)
    found = []

    def scientific(m):                            # 3 \times 10^{-9} is 3e-9, 10^{-8} is 1e-8
        found.append((f"{m.group(1) or 1}e{m.group(2)}", m.group(0)))
        return " " * len(m.group(0))

    text = SCIENTIFIC_TEX.sub(scientific, text)
    text = re.sub(r"[_^](?:\{[^{}]*\}|\d+)", lambda m: " " * len(m.group(0)), text)   # x_{t+1}, e^2: indices
    for m in PROSE_NUMBER.finditer(text):
        if not REFERENCE.search(text[max(0, m.start() - 40):m.start()]):
            found.append((m.group(1), " ".join(text[max(0, m.start() - 50):m.end() + 20].split())))
    return found


def unaccounted_numbers(nb, sourced):
    """The prose's numbers that no output printed, no code wrote, and sourced does not list: [(cell, number, context)]."""
    printed = set().union(*(printed_values(output_text(c)) for c in code_cells(nb)))
    written = set().union(*(printed_values(c.source) for c in code_cells(nb)))
    listed = {number_value(n) for n in sourced}
    missing = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for number, context in prose_numbers(cell.source):
            value = number_value(number)
            if value in printed or value in written or value in listed:
                continue
            if value == value.to_integral_value() and 0 <= value <= 10:
                continue
            missing.append((i, number, context))
    return missing


def sourced_for(path):
    return notebook_numbers.SOURCED.get(path.name[:2], {})


def quoted(found):
    """[(cell, number, context)] as lines of a failure message."""
    return "\n".join(f"  cell {i}: {number} in ...{context}..." for i, number, context in found)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_numbers_in_the_prose_are_printed_or_sourced(path):
    missing = unaccounted_numbers(read(path), sourced_for(path))
    assert not missing, (f"{path.name}: numbers in the prose that no output prints (print them, or list them in "
                         "tests/notebook_numbers.py with their source):\n" + quoted(missing))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_sourced_numbers_are_in_the_prose(path):
    # a listed number the prose no longer writes is a stale entry: the list says what the prose quotes
    quoted = {number_value(n) for cell in read(path).cells if cell.cell_type == "markdown"
              for n, _ in prose_numbers(cell.source)}
    stale = [n for n in sourced_for(path) if number_value(n) not in quoted]
    assert not stale, f"{path.name}: tests/notebook_numbers.py lists {stale}, which the prose does not write"


HEADING = re.compile(r"^#{1,3} ", re.MULTILINE)
MEASURED = re.compile(r"^\d+\.\d{3,}$")          # a measurement as the prose quotes it: 3 decimals or more


def prose_by_section(nb):
    """[(cell, section index, markdown text)], the markdown cut at its headings; {section index: (numbers printed,
    numbers written in code)} of the code cells in each section; and {"7": index} for each "## 7." heading."""
    section, pieces, code, numbered = 0, [], {}, {}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for j, part in enumerate(HEADING.split(cell.source)):
                if j > 0:                          # part opens with a heading's text
                    section += 1
                    number = re.match(r"(\d+)\.", part)
                    if number:
                        numbered[number.group(1)] = section
                pieces.append((i, section, part))
        else:
            printed, written = code.setdefault(section, (set(), set()))
            printed |= printed_values(output_text(cell))
            written |= printed_values(cell.source)
    return pieces, code, numbered


def quotes_far_from_their_output(nb, sourced):
    """[(cell, number, context)]: a measured number of the prose (three decimals or more) that no code cell of its
    own section prints or writes, nor of a section its sentence names ("section 2's ln V"), and sourced does not
    list. A number printed somewhere else in the notebook describes something else: ln 11 is not ln 13."""
    pieces, code, numbered = prose_by_section(nb)
    listed = {number_value(n) for n in sourced}
    far = []
    for i, section, text in pieces:
        for sentence in re.split(r"(?<=[.;])\s+", " ".join(text.split())):
            named = [numbered.get(n) for n in re.findall(r"[Ss]ections? (\d+)", sentence)]
            for number, context in prose_numbers(sentence):
                value = number_value(number)
                if MEASURED.match(number) and value not in listed and not any(
                        value in set().union(*code.get(s, ((), ()))) for s in [section, *named]):
                    far.append((i, number, context))
    return far


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_each_measured_number_is_printed_in_the_section_that_quotes_it(path):
    far = quotes_far_from_their_output(read(path), sourced_for(path))
    assert not far, (f"{path.name}: measured numbers quoted away from the output that prints them (quote them in "
                     "its section, or name the section: 'section 3's 0.512'):\n" + quoted(far))


THRESHOLD = re.compile(r"(\d+(?:\.\d+)?)% (?:is )?reached|reach(?:es|ed)? (\d+(?:\.\d+)?)%")


def thresholds_not_met(nb):
    """[(cell, number, threshold)]: in a clause of the prose that says a run reached N% ("99% reached"), a share
    quoted as a fraction (two decimals or more) below N/100."""
    wrong = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for clause in re.split(r"[.;](?=\s)", " ".join(cell.source.split())):
            for m in THRESHOLD.finditer(clause):
                threshold = Decimal(m.group(1) or m.group(2)) / 100
                wrong += [(i, n, str(threshold)) for n in re.findall(r"\b0\.\d{2,}\b", clause) if Decimal(n) < threshold]
    return wrong


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_no_share_said_to_reach_a_threshold_is_below_it(path):
    assert not thresholds_not_met(read(path))


def git_version(path, commit):
    """nbformat notebook of path as it was at commit (the repository's history)."""
    shown = subprocess.run(["git", "show", f"{commit}:{path.relative_to(ROOT).as_posix()}"], cwd=ROOT,
                           capture_output=True, text=True)
    if shown.returncode != 0:
        pytest.skip(f"no git history here ({shown.stderr.strip()})")
    return nbformat.reads(shown.stdout, as_version=4)


def test_the_number_checks_catch_the_three_slips_put_back():
    """The three wrong numbers a reading found, each in the notebook as it was before its fix: 08 compared a loss
    with ln 11 = 2.398 printed in section 2 for another model, 01 quoted the unscaled weights where it spoke of
    the scaled ones, and 12 said a run stopped at 99% with 0.987."""
    before_fix = "098e444^"
    slip_08 = [(i, n) for i, n, _ in quotes_far_from_their_output(git_version(notebook("08_"), before_fix), {})]
    assert (25, "2.398") in slip_08
    slip_01 = [n for _, n, _ in quotes_far_from_their_output(git_version(notebook("01_"), before_fix), {})]
    assert "0.0634" in slip_01
    slip_12 = thresholds_not_met(git_version(notebook("12_"), "8032b2a"))
    assert (20, "0.987", "0.99") in slip_12


SECTION_HEADING = re.compile(r"^## (\d+)\.", re.MULTILINE)
# "section 6", "Sections 8 to 10", "notebook 08, section 10", "notebook 08's section 10"
SECTION_REFERENCE = re.compile(r"(?:notebook (\d\d)(?:, |'s ))?\b[Ss]ections? (\d+(?:\.\d+)?)")


def section_numbers(nb):
    """The numbers of a notebook's sections, in order, from its "## N." headings."""
    return [number for cell in nb.cells if cell.cell_type == "markdown" for number in SECTION_HEADING.findall(cell.source)]


def unresolved_section_references(nb, others):
    """[(cell, reference)]: each "section N" of the prose that names no section of the notebook it points at
    (this one, or notebook NN of others: {"08": nb, ...}). A section of another text is not checked: a dotted
    number (the paper's "section 5.3") or "its" / "paper's" just before it."""
    unresolved = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        text = " ".join(cell.source.split())
        for m in SECTION_REFERENCE.finditer(text):
            if "." in m.group(2) or re.search(r"(?:\bits|paper's|paper,|their) $", text[max(0, m.start() - 10):m.start()]):
                continue
            target = others.get(m.group(1)) if m.group(1) else nb
            if target is None or m.group(2) not in section_numbers(target):
                unresolved.append((i, m.group(0)))
    return unresolved


def sections_missing(nb):
    """Sections a notebook promises and lacks: a gap in its numbering (1, 2, 3, 5: section 4 lost), or a section
    its title cell's numbered list of contents names."""
    numbers = [int(n) for n in section_numbers(nb)]
    gaps = [n for n in range(1, max(numbers, default=0) + 1) if n not in numbers]
    contents = nb.cells[0].source.partition("**Learning objectives.**")[0]
    listed = [int(n) for n in re.findall(r"^(\d+)\. ", contents, re.MULTILINE)]
    return sorted(set(gaps) | {n for n in listed if n not in numbers})


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_every_section_reference_resolves_and_no_section_is_lost(path):
    others = {p.name[:2]: read(p) for p in NOTEBOOKS}
    nb = read(path)
    assert not unresolved_section_references(nb, others), f"{path.name}: references to no section"
    assert not sections_missing(nb), f"{path.name}: sections promised and missing: {sections_missing(nb)}"


def without_section(nb, number):
    """A copy of nb with section number's heading cell taken out, as an edit that lost it."""
    lost = copy.deepcopy(nb)
    lost.cells = [c for c in lost.cells if not (c.cell_type == "markdown" and re.search(rf"^## {number}\.", c.source, re.M))]
    return lost


@pytest.mark.parametrize("prefix, number", [("04_", 5), ("07_", 6), ("08_", 6)])
def test_the_section_checks_catch_a_lost_section(prefix, number):
    """The three sections an earlier edit lost (04's query with nothing to attend to, 07's weight tying, 08's
    alignment mass) are each caught when taken out again: a gap in the numbering, a reference that resolves
    no more (08's "the picture of section 6"), or the title's list of contents (07)."""
    nb = read(notebook(prefix))
    assert not sections_missing(nb)
    lost = without_section(nb, number)
    assert number in sections_missing(lost)
    if prefix == "08_":
        assert (4, "section 6") in [(i, ref) for i, ref in unresolved_section_references(lost, {})]


def test_a_reference_to_another_notebooks_section_is_checked_there():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 99 · x\n\nsee notebook 08, section 10 and notebook 08, section 11")]
    assert unresolved_section_references(nb, {"08": read(notebook("08_"))}) == [(0, "notebook 08, section 11")]


TEX_ESCAPE_IN_TEXT = re.compile(r"\\text\{[^}]*\\[_%&#${}][^}]*\}")


def tex_escapes_shown_as_text(nb):
    """[(cell, formula part)]: a TeX escape inside \\text{...}, which MathJax shows as written (one\\_hot)."""
    return [(i, m.group(0)) for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
            for m in TEX_ESCAPE_IN_TEXT.finditer(cell.source)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_no_tex_escape_is_shown_as_text_in_a_formula(path):
    assert not tex_escapes_shown_as_text(read(path))


def test_the_escape_check_catches_a_backslash_in_text():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("$da = (p - \\text{one\\_hot}) / B$ and $\\text{one-hot}$")]
    assert tex_escapes_shown_as_text(nb) == [(0, "\\text{one\\_hot}")]


def test_the_number_check_catches_a_quote_that_drifted():
    def notebook_with(prose, printed, code="x = 1"):
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell(code, execution_count=1)
        cell.outputs = [nbformat.v4.new_output("stream", text=printed)]
        nb.cells = [nbformat.v4.new_markdown_cell(prose), cell]
        return nb

    printed = "softmax [0.0634 0.4683 0.4683]; 15,680 parameters; exact match 99.2%; error 8e-09\n"
    assert unaccounted_numbers(notebook_with("weights 0.4683 and 0.0634, 15,680 numbers, 99.2%, "
                                             "an error of $8 \\times 10^{-9}$", printed), {}) == []
    drifted = unaccounted_numbers(notebook_with("weights of about 0.47, 15,690 numbers, 99.3%, "
                                                "error $10^{-8}$", printed), {})
    assert [number for _, number, _ in drifted] == ["1e-8", "0.47", "15,690", "99.3"]
    assert unaccounted_numbers(notebook_with("the paper's 65M", printed), {"65": "the paper, Table 3"}) == []
    assert unaccounted_numbers(notebook_with("d_model = 32, notebook 12, sections 3 and 14, `x[:128]`, "
                                             "$x_{t+1}$, $e^{12}$, 2 heads", printed, code="d_model = 32"), {}) == []


# ---------------------------------------------------------------------------
# The worked example: the library computes the prose's numbers, the notebook shows them.

def test_worked_example_numbers_from_the_library():
    X, W_q, W_k, W_v = worked_example.X, worked_example.W_Q, worked_example.W_K, worked_example.W_V
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    scores_1 = K @ Q[0]
    assert np.array_equal(scores_1, SCORES_1)
    softmax_1, _ = tt.ops.softmax_forward(scores_1)
    assert np.array_equal(softmax_1.round(4), SOFTMAX_1)
    out, probs = F.attention(Q, K, V, scale=1.0)                    # the unscaled example
    assert np.array_equal(probs[0].round(4), SOFTMAX_1)
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


def notebook(prefix):
    matches = [p for p in NOTEBOOKS if p.name.startswith(prefix)]
    assert matches, f"notebook {prefix}* is missing"
    return matches[0]


def worked_example_notebook():
    return notebook("01_")


def all_outputs(nb):
    return "\n".join(output_text(c) for c in code_cells(nb))


def test_worked_example_numbers_in_the_committed_notebook():
    check_worked_example_text(read(worked_example_notebook()))


# ---------------------------------------------------------------------------
# The numbers that define the other lessons, computed here, shown by the notebooks.

def variance_rows():
    """Notebook 01's check of Var(q.k) = d_k: the same draws, the same printed rows."""
    var_rng = np.random.default_rng(7)
    rows = []
    for d in (4, 16, 64, 256):
        q, k = var_rng.standard_normal((20000, d)), var_rng.standard_normal((20000, d))
        dots = (q * k).sum(axis=-1)
        assert abs(dots.var() / d - 1) < 0.05 and abs((dots / np.sqrt(d)).var() - 1) < 0.05
        rows.append(f"{d:>5} {dots.var():>10.2f} {dots.var() / d:>15.3f} {(dots / np.sqrt(d)).var():>21.3f}")
    return rows


def test_the_three_properties_of_self_attention_in_notebook_01():
    """Parameters independent of the length, n^2 weights independent of the width, non-linear without an
    activation: computed here with the library and found in the committed outputs."""
    rng = np.random.default_rng(0)
    W = [rng.standard_normal((4, 3)) for _ in range(3)]
    def attend(X):
        return F.attention(X @ W[0], X @ W[1], X @ W[2])
    for n in (3, 30):
        out, weights = attend(rng.standard_normal((n, 4)))
        assert out.shape == (n, 3) and weights.shape == (n, n)
    X = rng.standard_normal((5, 4))
    assert not np.allclose(attend(2 * X)[0].data, 2 * attend(X)[0].data)
    outputs = all_outputs(read(notebook("01_")))
    for n in (3, 30, 300):
        assert f"n = {n:>3}: parameters 36, output ({n}, 3), attention weights ({n}, {n})" in outputs
    for d_model in (4, 64, 512):
        assert f"d_model = {d_model:>3}: attention weights (5, 5)" in outputs
    gaps = re.search(r"largest \|f\(2X\) - 2 f\(X\)\|: ([0-9.]+); largest \|f\(A \+ B\) - f\(A\) - f\(B\)\|: ([0-9.]+)", outputs)
    assert gaps and min(map(float, gaps.groups())) > 0.1


def test_variance_of_the_scores_in_notebook_01():
    outputs = all_outputs(read(notebook("01_")))
    for row in variance_rows():
        assert row in outputs, f"notebook 01 does not print the variance row {row!r}"


def base_model_count():
    config = tt.TransformerConfig(vocab_size=37000, d_model=512, n_heads=8, n_layers=6, d_ff=2048, max_len=256)
    return sum(p.data.size for p in tt.nn.Transformer(config, rng=0).parameters())


def test_why_several_heads_in_notebook_04():
    """Section 7's measurement: on a task that needs the symbol before and the one after each position, one head
    mostly fetches one neighbour and guesses the other (about 1/8 right), two heads of half the width each take one
    side (one head on t - 1, the other on t + 1) and name the pairs."""
    outputs = all_outputs(read(notebook("04_")))
    right = {int(h): [float(r) for r in rs.split()] for h, rs in
             re.findall(r"(\d) heads? +of width \d+: held-out pairs named right, seeds 0-3: ([0-9. ]+)\n", outputs)}
    assert sorted(right) == [1, 2] and all(len(r) == 4 for r in right.values()), right
    assert sum(r < 0.2 for r in right[1]) >= 2 and sum(r > 0.99 for r in right[2]) >= 3, right
    looks = re.findall(r"2 heads, seed 0, head (\d): on t - 1 ([0-9.]+), on t \+ 1 ([0-9.]+)", outputs)
    assert sorted((float(left) > 0.9, float(after) > 0.9) for _, left, after in looks) == [(False, True), (True, False)]


def test_base_model_count_in_notebook_07():
    count = base_model_count()                       # about 250 MB of float32 for a moment
    assert abs(count - 65e6) / 65e6 < 0.05, f"the base model has {count:,} parameters, not about the paper's 65M"
    outputs = all_outputs(read(notebook("07_")))
    assert f"parameters of the base model: {count:,} ({count / 1e6:.1f}M); the paper: 65M" in outputs


def test_cache_equals_no_cache_in_notebook_09():
    config = tt.TransformerConfig(vocab_size=12, d_model=16, n_heads=2, n_layers=2, d_ff=32, max_len=10)
    model = tt.nn.Transformer(config, rng=0)
    src = np.random.default_rng(1).integers(3, 12, size=(6, 7))
    for decode in (lambda c: tt.decode.greedy(model, src, 9, use_cache=c),
                   lambda c: tt.decode.sample(model, src, 9, rng=0, top_k=3, use_cache=c),
                   lambda c: tt.decode.beam_search(model, src, 9, use_cache=c)):
        assert np.array_equal(decode(True), decode(False))
    outputs = all_outputs(read(notebook("09_")))
    for name in ("greedy", "sample, T = 1, top-k 2", "beam 4, penalty 0.6"):
        assert f"{name:<24} with cache == without cache, all 500 rows: True" in outputs


def timing_table(outputs):
    """{(d, n): (attention ms, recurrent ms)} from notebook 10's printed table
    (d, n, attention, recurrent and convolution ms, the faster of the first two, the fastest)."""
    table = {}
    for line in outputs.splitlines():
        fields = line.split()
        if len(fields) == 7 and fields[5] in ("attention", "recurrent") and fields[0].isdigit():
            table[int(fields[0]), int(fields[1])] = float(fields[2]), float(fields[3])
    return table


def test_crossover_in_notebook_10():
    outputs = all_outputs(read(notebook("10_")))
    widths, lengths = (64, 256, 1024), (16, 32, 64, 128, 256, 512, 1024, 2048)
    for d in widths:                               # 2 n^2 d = 2 n d^2 exactly at n = d, as the notebook computes
        assert f"d = {d:>4}: multiply-adds equal at n = [{d}]" in outputs
    table = timing_table(outputs)
    assert set(table) == {(d, n) for d in widths for n in lengths}, "notebook 10 does not print its timing table"
    for d in widths:                               # the printed crossover is where the printed times cross
        log_ratio = np.log([table[d, n][0] / table[d, n][1] for n in lengths])
        i = next(i for i in range(len(lengths) - 1) if log_ratio[i] < 0 <= log_ratio[i + 1])
        n_star = np.exp(np.log(lengths[i]) + -log_ratio[i] / (log_ratio[i + 1] - log_ratio[i]) * np.log(2))
        assert lengths[i] <= n_star <= lengths[i + 1]
        printed = re.search(rf"d = {d:>4}: attention becomes slower than the recurrent layer at n = (\d+)", outputs)
        assert printed, f"notebook 10 does not print the crossover for d = {d}"
        # the table is rounded to 0.01 ms: allow the interpolation a few percent
        assert abs(int(printed.group(1)) - n_star) <= 0.05 * n_star + 1
        assert d / 8 <= n_star <= 8 * d, f"d = {d}: the measured crossover {n_star:.0f} is nowhere near n = d"


def test_attention_is_parallel_and_recurrence_sequential_in_notebook_10():
    """The concept behind notebook 10's "sequential operations": the library's self-attention computes every
    position in one step, since no position's output waits for another's (each row alone, from the inputs, is the
    same row). And the measurement the notebook draws from it: the convolution, with 1.5 times the recurrent
    layer's multiply-adds but no position waiting for the one before, is the faster of the two from some length
    on at every width."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 6, 8))                                        # (B, T, d_model)
    mha = tt.nn.MultiHeadAttention(8, 2, rng, dtype="float64")
    together = mha(x, x).data                                                 # (1, 6, 8): one pass, every query
    alone = np.concatenate([mha(x[:, t:t + 1], x).data for t in range(6)], axis=1)   # one query at a time
    assert np.allclose(together, alone, atol=1e-12)
    outputs = all_outputs(read(notebook("10_")))
    for d in (64, 256, 1024):
        since = re.search(rf"d = {d:>4}: the convolution is faster than the recurrent layer from n = (\d+) on", outputs)
        assert since, f"notebook 10: no length from which the convolution stays ahead at d = {d}"


# ---------------------------------------------------------------------------
# Notebook 11 (GPT): causality bit for bit, why the sum is written reversed, the cache.

def gpt_causality_check():
    """Notebook 11's check 2: a GPT's logits before a changed token are unchanged, those from it on change."""
    from tinytransformer.tasks.text import CharCorpus
    corpus = CharCorpus()
    config = tt.TransformerConfig(vocab_size=corpus.vocab_size, d_model=32, n_heads=4, n_layers=2, d_ff=64,
                                  max_len=16, dropout=0.0, norm_first=True, positions="learned",
                                  activation="gelu", dtype="float64")
    gpt = tt.nn.GPT(config, rng=0)
    x = corpus.train_ids[None, 100:116]
    changed = x.copy()
    changed[0, 9] = corpus.encode("z")[0]
    assert changed[0, 9] != x[0, 9]
    difference = np.abs(gpt(changed).data - gpt(x).data)[0].max(axis=-1)     # (16,)
    return bool((difference[:9] == 0).all()), bool((difference[9:] > 0).all())


def addition_format_facts():
    """Notebook 11's table of which tokens determine which digit of a two-digit sum."""
    from tinytransformer.tasks.addition import digits_of
    a, b = np.divmod(np.arange(10_000), 100)
    A, B, S = (digits_of(n, w) for n, w in ((a, 2), (b, 2), (a + b, 3)))

    def is_function(inputs, output):
        seen = {}
        return all(seen.setdefault(tuple(row), o) == o for row, o in zip(inputs.tolist(), output.tolist()))

    return (is_function(np.stack([A[:, 1], B[:, 1]], 1), S[:, 2]),
            is_function(np.stack([A[:, 0], B[:, 0], A[:, 1], B[:, 1], S[:, 2]], 1), S[:, 1]),
            is_function(np.stack([A[:, 0], B[:, 0], S[:, 2]], 1), S[:, 1]),
            is_function(np.stack([A[:, 0], B[:, 0]], 1), S[:, 0]),
            is_function(np.stack([A[:, 0], B[:, 0], A[:, 1], B[:, 1]], 1), S[:, 0]),
            float(np.mean(S[:, 0] != (A[:, 0] + B[:, 0] >= 10))))


def test_gpt_lessons_in_notebook_11():
    from tinytransformer.tasks import addition
    outputs = all_outputs(read(notebook("11_")))
    earlier_unchanged, later_changed = gpt_causality_check()
    assert earlier_unchanged and later_changed
    assert (f"logits of positions 0..8 unchanged bit for bit: {earlier_unchanged}; "
            f"positions 9..15 all changed: {later_changed}") in outputs
    units, tens_local, tens_without_units, hundreds_top, hundreds_all, share = addition_format_facts()
    assert (units, tens_local, tens_without_units, hundreds_top, hundreds_all) == (True, True, False, False, True)
    assert abs(share - 0.045) < 1e-12            # tens summing to 9 (10%) with a units carry (45%)
    for line in (f"reversed: units digit is a function of the units of a and b: {units}",
                 f"reversed: tens digit is a function of the tens of a and b and the units digit written alone: "
                 f"{tens_without_units}",
                 f"usual order: first digit (hundreds) is a function of the tens of a and b: {hundreds_top}",
                 f"usual order: first digit (hundreds) is a function of all four operand digits: {hundreds_all}",
                 f"problems whose hundreds digit differs from the carry of the tens alone: {share:.1%}"):
        assert line in outputs, f"notebook 11 does not print {line!r}"
    config = tt.TransformerConfig(vocab_size=addition.VOCAB_SIZE, d_model=16, n_heads=2, n_layers=2, d_ff=32,
                                  max_len=9, positions="learned", norm_first=True, activation="gelu")
    gpt = tt.nn.GPT(config, rng=0)
    prompts = addition.Split(digits=2, n_held_out=200, seed=0).held_out_problems().prompt
    assert np.array_equal(tt.decode.greedy(gpt, prompts, 4), tt.decode.greedy(gpt, prompts, 4, use_cache=False))
    assert np.array_equal(tt.decode.sample(gpt, prompts, 4, rng=0, top_k=5),
                          tt.decode.sample(gpt, prompts, 4, rng=0, top_k=5, use_cache=False))
    assert "addition, greedy, 1000 held-out prompts     with cache == without cache: True" in outputs
    assert "text, sample T 0.8 top-k 5, 50 prompts      with cache == without cache: True" in outputs
    assert "top-k 1 sampling == greedy on the 1000 held-out addition problems: True" in outputs


def test_few_shot_prompting_in_notebook_11():
    """Section 7's lesson in its printed numbers: with no solved example in view the model can only guess among the
    four shifts it was trained on (a quarter right), with one it answers; hand-written examples of a known shift
    change its answer to the same question; a shift it never met is not learnt from examples."""
    outputs = all_outputs(read(notebook("11_")))
    accuracy = {int(k): float(a) for k, a in
                re.findall(r"y_\d, with (\d) solved examples? in view: accuracy ([0-9.]+)", outputs)}
    assert sorted(accuracy) == [0, 1, 2, 3], "notebook 11 does not print the few-shot accuracies"
    assert abs(accuracy[0] - 0.25) < 0.05 and min(accuracy[k] for k in (1, 2, 3)) >= 0.95, accuracy
    answers = re.findall(r"\(c = (\d)\), question 4 -> the model answers (\d), \(4 \+ c\) mod 10 = (\d)", outputs)
    assert len(answers) == 3
    for c, answer, right in answers:
        assert (answer == right) == (int(c) < 4), (c, answer, right)        # shifts 0..3 were trained on
    unseen = re.search(r"c = 6, never in training: accuracy on y_2..y_4 ([0-9.]+)", outputs)
    assert unseen and float(unseen.group(1)) < 0.1


# Notebook 12 (BERT): the 80/10/10 frequencies it measures, what a bidirectional stack sees, PAD.

def mask_frequency_rows():
    """Notebook 12's table of mask_tokens' frequencies: the same draws, the same printed rows."""
    from tinytransformer.tasks import masked_lm

    n_symbols, k = 8, 4
    ids = masked_lm.make_sequences(20000, k, n_symbols, rng=3, k_min=k).ids
    corrupted, targets = masked_lm.mask_tokens(ids, rng=4, p=0.15, vocab_size=masked_lm.vocab_size_for(n_symbols))
    symbol, chosen = ids >= tt.vocabulary.BERT_N_SPECIAL, targets != tt.PAD
    assert not (chosen & ~symbol).any(), "mask_tokens chose a special token"
    became_mask = chosen & (corrupted == tt.vocabulary.MASK)
    became_other = chosen & (corrupted != tt.vocabulary.MASK) & (corrupted != ids)
    kept = chosen & (corrupted == ids)
    rows = [("chosen, of symbol positions", chosen.sum() / symbol.sum(), 0.15),
            ("[MASK], of chosen", became_mask.sum() / chosen.sum(), 0.8),
            ("another symbol, of chosen", became_other.sum() / chosen.sum(), 0.1 * 7 / 8),
            ("unchanged, of chosen", kept.sum() / chosen.sum(), 0.1 + 0.1 / 8),
            ("[MASK], of symbol positions", became_mask.sum() / symbol.sum(), 0.8 * 0.15)]
    for name, measured, rule in rows:     # 160000 positions: the rule within a few standard errors
        assert abs(measured - rule) < 0.006, f"{name}: measured {measured:.4f}, the rule says {rule:.4f}"
    return [f"{name:<36}{measured:>10.4f}{rule:>10.4f}" for name, measured, rule in rows]


def test_mask_frequencies_in_notebook_12():
    outputs = all_outputs(read(notebook("12_")))
    for row in mask_frequency_rows():
        assert row in outputs, f"notebook 12 does not print the frequency row {row!r}"


def test_what_each_position_sees_in_notebook_12():
    # structurally, before any training: BERT's position 4 depends on token 5, GPT's never does
    config = tt.BERTConfig(vocab_size=13, d_model=16, n_heads=2, n_layers=2, d_ff=32, max_len=12,   # GPT takes it too
                           dropout=0.0, positions="learned", activation="gelu")
    ids = np.random.default_rng(0).integers(5, 13, size=(1, 9))
    changed = ids.copy()
    changed[0, 5] = 5 + (ids[0, 5] - 5 + 1) % 8
    for Model, sees in ((tt.nn.BERT, True), (tt.nn.GPT, False)):
        model = Model(config, rng=0)
        assert (np.abs(model(ids).data[0, 4] - model(changed).data[0, 4]).max() > 1e-6) == sees
    outputs = all_outputs(read(notebook("12_")))
    assert "BERT (bidirectional)   position 4's logits change when token 5 changes: True" in outputs
    assert "GPT (causal)           position 4's logits change when token 5 changes: False" in outputs
    losses = dict(re.findall(r"(BERT|GPT) \(\w+\) +next-token loss: .*mean of the last 10 steps ([0-9.]+)", outputs))
    assert float(losses["BERT"]) < 0.1 * np.log(8) and abs(float(losses["GPT"]) - np.log(8)) < 0.1, losses
    loss = re.search(r"cross_entropy\(ignore_index=PAD\) ([0-9.]+); mean over the \d+ chosen positions by hand ([0-9.]+)",
                     outputs)
    assert loss and loss.group(1) == loss.group(2), "notebook 12: the masked-LM loss by hand differs from the library's"
    # masked PAD keys add exact zeros, but sums over 12 keys instead of 9 round in another order: allow 64 float32
    # spacings at the largest logit (about 10 here), five orders of magnitude below what unmasked PAD changes
    pad = re.search(r"PAD masked: +largest change .*appended: ([0-9.e+-]+); float32's spacing at the largest logit "
                    r"([0-9.e+-]+)\nPAD not masked: +largest change .*appended: ([0-9.e+-]+)", outputs)
    assert pad, "notebook 12 does not print the PAD check"
    masked, spacing, unmasked = map(float, pad.groups())
    assert masked <= 64 * spacing and unmasked > 1.0, pad.groups()


def test_heads_beyond_cls_in_notebook_12():
    """Section 12's fine-tuning heads for the other tasks it names (sequence classification such as sentiment,
    token classification such as named entities, span prediction for question answering): the shapes it prints
    are the library's, and a span head's start probabilities are a distribution over the positions."""
    outputs = all_outputs(read(notebook("12_")))
    for line in ("sequence head on [CLS]:      (3, 2)   (B, classes)",
                 "token head at every position: (3, 9, 5)   (B, T, tags)",
                 "span head at every position:  (3, 9, 2)   (B, T, 2); p(start) sums to [1. 1. 1.] over T",
                 "masked-LM head (pretrained):  (3, 9, 13)   (B, T, V): a token head over the vocabulary"):
        assert line in outputs, f"notebook 12 does not print {line!r}"
    from tinytransformer.tasks import ClassifyTask
    rng = np.random.default_rng(0)
    bert = tt.nn.BERT(ClassifyTask(k_max=4).config(d_model=16, n_heads=2, n_layers=1, d_ff=32), rng=0)
    ids = ClassifyTask(k_max=4).held_out.ids[:3]                               # (3, 9)
    hidden = bert.encode(ids)                                                  # (3, 9, 16)
    assert tt.nn.Linear(16, 2, rng)(bert.first_position(hidden)).shape == (3, 2)
    assert tt.nn.Linear(16, 5, rng)(hidden).shape == (3, 9, 5)
    scores = tt.nn.Linear(16, 2, rng)(hidden).data                             # (3, 9, 2)
    assert np.allclose(F.softmax(scores[..., 0]).data.sum(axis=1), 1.0)


# Notebook 13 (tokenization): BPE merge by merge, and the per-character comparison it reports.

def merge_table_lines():
    """Notebook 13's first two merges of its sentence, as the library learns them: a clear winner, then a tie."""
    from tinytransformer.tokenizer import BPE
    from tinytransformer.tokenizer.bpe import merge, pair_counts
    sentence = "the cat sat on the mat and the cat ate the hat"
    merges = list(BPE.train(sentence, vocab_size=256 + 6).merges)
    after_at = pair_counts(merge(list(sentence.encode()), (97, 116), 256))        # the counts after merge 1
    assert merges[:2] == [(97, 116), (104, 101)] and after_at[104, 101] == after_at[116, 104] == 4   # a tie
    return ["-> ('a', 't') = (97, 116) becomes 256 'at'",
            "-> ('h', 'e') = (104, 101) becomes 257 'he', before the tied ('t', 'h') = (116, 104)",
            "merge 2: counts ('h', 'e') 4, ('t', 'h') 4,",
            "BPE.train learns the same 6 merges: True"]


def test_tokenization_lessons_in_notebook_13():
    outputs = all_outputs(read(notebook("13_")))
    for line in merge_table_lines():
        assert line in outputs, f"notebook 13 does not print {line!r}"
    rows = re.findall(r"^(characters|BPE 512) +(\d) +([0-9.]+) +([0-9.]+) +([0-9.]+)$", outputs, re.M)
    assert len(rows) == 6, "notebook 13 does not print its table of three seeds per tokenizer"
    per_char = {}
    for name, _, per_token, characters_per_token, nats_per_character in rows:
        assert abs(float(per_token) / float(characters_per_token) - float(nats_per_character)) < 2e-3
        per_char.setdefault(name, []).append(float(nats_per_character))
    for name, losses in per_char.items():                  # the means of the printed (rounded) values
        mean = re.search(rf"{name} +mean held-out nats per character over 3 seeds: ([0-9.]+)", outputs)
        assert mean and abs(float(mean.group(1)) - np.mean(losses)) < 1e-4
    wins = sum(b < c for b, c in zip(per_char["BPE 512"], per_char["characters"]))
    assert f"BPE lower per character on {wins} of 3 seeds" in outputs


def test_bleu_by_hand_and_the_compositional_verdict_in_notebook_15():
    from tinytransformer.metrics import bleu
    reference = "Der Mann sagt, dass der alte Hund die Katze nicht sieht."
    hypothesis = "Der Mann sagt, dass der alten Hund die Katze sieht."
    # 13a words: 12 against 13; clipped matches 11/12, 8/11, 5/10, 3/9 (the wrong "alten" breaks 4 n-grams
    # of each order above 1, the missing "nicht" one more)
    by_hand = 100 * np.exp(1 - 13 / 12) * np.exp(np.mean(np.log([11 / 12, 8 / 11, 5 / 10, 3 / 9])))
    assert abs(bleu([hypothesis], [reference]) - by_hand) < 1e-9
    outputs = all_outputs(read(notebook("15_")))
    assert f"BLEU by hand {by_hand:.2f}; tt.metrics.bleu {by_hand:.2f}" in outputs
    # the prose says one sentence in a hundred with a negation after dass/weil comes out exactly right
    assert re.search(r"negation after dass/weil +BLEU +[0-9.]+ +exact match +1\.0%", outputs)


def test_the_bleu_lesson_of_notebook_15_prints_what_its_prose_says():
    """BLEU ranks the sentence without nicht above the faithful paraphrase; smoothing turns a short sentence's 0
    into sacrebleu's number; "Ja." is 0 as a corpus and 100 as a sentence; a second reference gives the
    paraphrase 100."""
    from tinytransformer.metrics import bleu, sentence_bleu
    outputs = all_outputs(read(notebook("15_")))
    reference = "Der Mann sagt, dass der alte Hund die Katze nicht sieht."
    reversed_meaning = "Der Mann sagt, dass der alte Hund die Katze sieht."
    paraphrase = "Der Mann sagt, der alte Hund sehe die Katze nicht."
    assert bleu([reversed_meaning], [reference]) > 2 * bleu([paraphrase], [reference])
    for text in (reversed_meaning, paraphrase):
        assert f"BLEU {bleu([text], [reference]):6.2f}" in outputs
    assert f"two references {bleu([paraphrase], [[reference], [paraphrase]]):6.2f}" in outputs
    short = bleu(["Der Hund schläft."], ["Der Hund schläft nicht."])
    assert f"none {0:.2f}" in outputs and f"exp {short:.2f}" in outputs and f"exp smoothing by hand: {short:.2f}" in outputs
    assert bleu(["Ja."], ["Ja."]) == 0 and f"sentence BLEU (exp, effective order): {sentence_bleu('Ja.', 'Ja.'):.2f}" \
        in outputs and "100.00" in outputs


def test_notebook_15_names_the_backward_passes_its_training_needs():
    """Cell 0 tells a student of the edition which backward passes the training cell needs: those one training
    step of the task calls, no more and no fewer."""
    from tinytransformer.tasks.translation import TranslationTask
    from tinytransformer.train import train
    text = " ".join(read(notebook("15_")).cells[0].source.split())
    named = re.search(r"the ops this model uses are written: (.*?) \(", text).group(1)
    listed = set(re.split(r", | and ", named))
    called = set()

    def record(frame, event, arg):
        name = frame.f_code.co_name
        if event == "call" and name.endswith("_backward") and "/ops/" in frame.f_code.co_filename.replace("\\", "/"):
            called.add(name.removesuffix("_backward"))
    sys.setprofile(record)
    try:
        train(None, TranslationTask(), steps=1, eval_every=0, target_accuracy=None, progress=False, seed=0)
    finally:
        sys.setprofile(None)
    assert listed == called
    assert "cross_entropy" in text and "cross-entropy's, in an edition of every op" in text


def test_the_vision_lesson_in_notebook_16_is_the_benchmarks():
    """Notebook 16 trains seed 0 with the task's defaults beside the three baselines of benchmarks/digits.py:
    the accuracies it prints are the recorded ones, and the prose's verdict is what they say (level with
    logistic regression, within a point; behind 1-nearest-neighbour and the SVM)."""
    import json
    record = json.loads((NOTEBOOK_DIR.parent / "benchmarks" / "results" / "digits.json").read_text())
    seed_0 = next(run for run in record["runs"] if run["seed"] == 0)
    outputs = all_outputs(read(notebook("16_")))
    assert f"validation accuracy {seed_0['validation_accuracy']:.1%} after {seed_0['steps']} steps" in outputs
    assert f"test accuracy {seed_0['test_accuracy']:.1%} on {record['n_test']} images" in outputs
    baselines = {name: measured["test_accuracy"] for name, measured in record["baselines"].items()}
    assert all(f"{accuracy:.1%}" in outputs for accuracy in baselines.values())
    assert f"C = {record['baselines']['SVM (RBF kernel)']['C']:g}" in outputs       # chosen on validation alike
    assert abs(seed_0["test_accuracy"] - baselines["logistic regression"]) < 0.01
    assert seed_0["test_accuracy"] < min(baselines["1-nearest-neighbour"], baselines["SVM (RBF kernel)"])


# The exercise checks of notebooks 15 and 16 want the student's own computation: each compares with the
# library and refuses an answer that is the library's function, calls it, or reaches it through a helper.

CHECKED_IMPORTS = {
    "15_": "from collections import Counter\nimport numpy as np\nimport tinytransformer as tt\n"
           "from tinytransformer import metrics\nfrom tinytransformer.tasks import german\n",
    "16_": "import numpy as np\nimport tinytransformer as tt\nfrom tinytransformer.tasks import digits\n",
}
# (notebook, exercise, an answer that hands the exercise to the library; the names it is given run in the notebook's)
LIBRARY_ANSWERS = [
    ("15_", 1, "metrics.bleu"),
    ("15_", 1, "lambda hypotheses, streams: metrics.bleu(hypotheses, streams)"),
    ("15_", 1, "lambda hypotheses, streams: helper(hypotheses, streams)",
     "def helper(h, r):\n    m, t, c, rr = metrics.bleu_statistics(h, r)\n"
     "    return 100 * np.exp(np.mean(np.log(np.divide(m, t)))) * min(1, np.exp(1 - rr / c))"),
    ("15_", 2, "lambda hypothesis, reference: metrics.sentence_bleu(hypothesis, [reference])"),
    ("15_", 2, "make()", "def make(score=metrics.bleu):\n    return lambda h, r: score([h], [r], effective_order=True)"),
    ("15_", 3, "lambda n: german.german_text(german.german_number(n))[:-1].lower()"),
    ("16_", 1, "digits.to_patches"),
    ("16_", 1, "make()", "def make():\n    f = digits.to_patches\n    return lambda images, p: f(images, p)"),
    ("16_", 2, "count", "def count(p, d):\n"
     "    m = tt.nn.VisionTransformer(digits.DigitsTask(patch_size=p).config(d_model=d, n_heads=2), rng=0)\n"
     "    return m.patch_embedding.W.data.size + m.patch_embedding.b.data.size"),
]


def checked_namespace(prefix):
    """The exercise, check and solution cells of a notebook run in one namespace, as in the notebook."""
    nb = read(notebook(prefix))
    namespace = {"__name__": "__main__"}
    exec(CHECKED_IMPORTS[prefix], namespace)
    for cell in nb.cells:
        if set(cell.metadata.get("tags", [])) & {"exercise", "check", "solution"}:
            exec(cell.source, namespace)
    return namespace


@pytest.mark.parametrize("answer", LIBRARY_ANSWERS, ids=lambda a: f"{a[0]}{a[1]}:{a[2]}")
def test_an_exercise_check_refuses_a_plain_call_to_the_library(answer, capsys):
    prefix, exercise, expression, *definitions = answer
    namespace = checked_namespace(prefix)
    capsys.readouterr()
    for definition in definitions:
        exec(definition, namespace)
    candidate = eval(expression, namespace)
    namespace[f"check_exercise_{exercise}"](candidate)
    printed = capsys.readouterr().out
    assert printed.startswith(f"Exercise {exercise}: not right yet; it uses"), printed


@pytest.mark.parametrize("prefix", ["15_", "16_"])
def test_the_library_answers_are_right_answers(prefix, capsys):
    """The refusal is the only thing that fails them: with the refusal taken out, each passes its check;
    and every exercise of the notebook has one."""
    for answer in (a for a in LIBRARY_ANSWERS if a[0] == prefix):
        namespace = checked_namespace(prefix)
        namespace["library_use"] = lambda candidate, forbidden: []
        capsys.readouterr()
        for definition in answer[3:]:
            exec(definition, namespace)
        namespace[f"check_exercise_{answer[1]}"](eval(answer[2], namespace))
        assert capsys.readouterr().out.strip() == f"Exercise {answer[1]}: correct", answer
    exercises = len(tagged(read(notebook(prefix)), "check"))
    assert {a[1] for a in LIBRARY_ANSWERS if a[0] == prefix} == set(range(1, exercises + 1))


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
