"""The student edition: built from the library, graded by the library's grader, whole again with the
library's backward passes put back."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import ops
from tinytransformer.course import edition, grader
from tinytransformer.course.answers import answer_forms, without_answers
from tinytransformer.course.stubs import without_derivations

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = [path for path in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
             if f"notebooks/{path.name}" not in edition.LEFT_OUT]
ALL_OPS = [name for name in grader.op_names() if name != grader.TAPE]
GRADED = len(grader.op_names())                 # the ops and the tape


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """An edition with every op blank (the default), and the stubs build_edition reports."""
    target = tmp_path_factory.mktemp("editions") / "blank"
    return target, edition.build_edition(target)


@pytest.fixture
def blank(built):
    return built[0]


def cli(folder, *args):
    """python -m tinytransformer ARGS, run in folder with folder's package first on the path."""
    env = {**os.environ, "PYTHONPATH": str(folder), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "tinytransformer", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def restore(folder, *paths):
    """Put the library's own files back into an edition: the reference filled back in."""
    for path in paths:
        shutil.copy(REPO / path, folder / path)


def test_the_edition_is_the_project_with_its_layout(blank):
    for path in ("pyproject.toml", "README.md", "tinytransformer/__main__.py", "tinytransformer/nn/model.py",
                 "notebooks/execute.py", "tests/conftest.py", "docs/conf.py"):
        assert (blank / path).is_file(), path
    for path in edition.LEFT_OUT:
        assert not (blank / path).exists(), path
    assert not (blank / ".ci").exists() and not list(blank.rglob("__pycache__"))
    assert (blank / "tinytransformer/nn/model.py").read_bytes() == (REPO / "tinytransformer/nn/model.py").read_bytes()
    assert (blank / "pyproject.toml").read_bytes() == (REPO / "pyproject.toml").read_bytes()


def test_every_blank_op_is_not_written_yet_and_the_grader_exits_1_without_a_traceback(built):
    blank, stubs = built
    done = cli(blank, "check")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr and not done.stderr
    rows = [line.split(None, 2) for line in done.stdout.splitlines()
            if line.split()[:1] and line.split()[0] in grader.op_names()]
    assert [row[0] for row in rows if "not written yet" in row[2]] == ALL_OPS
    assert [function for function, _ in stubs] == [f"{op}_backward" for op in ALL_OPS]
    for function, place in stubs:
        path, line = place.split(":")
        assert (blank / path).read_text().splitlines()[int(line) - 1].startswith(f"def {function}(")
        assert f"write {function} first: {place}" in done.stdout
    assert done.stdout.rstrip().endswith(f"1 of {GRADED} pass; not written yet: " + ", ".join(ALL_OPS))


def test_the_readme_lists_every_stub_and_keeps_the_projects_readme(blank):
    readme = (blank / "README.md").read_text()
    assert readme.startswith("# tinytransformer: student edition")
    for op in ALL_OPS:
        assert f"| `{op}_backward` | `tinytransformer/ops/" in readme
    assert readme.endswith((REPO / "README.md").read_text())


def test_the_reference_filled_back_in_passes(tmp_path):
    target = tmp_path / "edition"
    edition.build_edition(target, tape=True)
    restore(target, *sorted({p.as_posix() for p in edition.op_files().values()}), "tinytransformer/tensor.py")
    done = cli(target, "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith(f"{GRADED} of {GRADED} pass")


@pytest.mark.slow
def test_an_edition_with_every_blank_written_right_passes_its_own_test_suite(tmp_path):
    """The student's reward: every test the edition ships passes once the blanks are written (here: the
    library's own backward passes and Tape.backward put back)."""
    target = tmp_path / "edition"
    edition.build_edition(target, tape=True)
    restore(target, *sorted({p.as_posix() for p in edition.op_files().values()}), "tinytransformer/tensor.py")
    env = {**os.environ, "PYTHONPATH": str(target), "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=target, env=env,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout.splitlines()[-1] and "failed" not in done.stdout.splitlines()[-1]


def test_ops_blanks_only_those(tmp_path):
    target = tmp_path / "week"
    stubs = edition.build_edition(target, ops=["softmax", "layer_norm"])
    assert [function for function, _ in stubs] == ["softmax_backward", "layer_norm_backward", "rms_norm_backward"]
    for path in sorted(set(edition.op_files().values()) | {Path("tinytransformer/tensor.py")}):
        same = (target / path).read_text() == (REPO / path).read_text()
        assert same == (path.name not in ("softmax.py", "layernorm.py", "attention.py")), path
    # attention's backward calls softmax's: it stays, without the derivation above it, which spells softmax's out
    assert (target / "tinytransformer/ops/attention.py").read_text() == without_derivations(
        (REPO / "tinytransformer/ops/attention.py").read_text(), {"attention_backward"})
    done = cli(target, "check")
    assert done.returncode == 1
    # the library's attention backward calls softmax_backward, so it waits for it, and says so
    assert done.stdout.rstrip().endswith(f"{GRADED - 4} of {GRADED} pass; not written yet: softmax, layer_norm, rms_norm, "
                                      "attention")
    attention = next(line for line in done.stdout.splitlines() if line.startswith("attention "))
    assert attention.endswith("write softmax_backward first: tinytransformer/ops/softmax.py:37")
    assert "def log_softmax_backward(dout, cache):\n    out, axis = cache\n    # y_i" in (
        target / "tinytransformer/ops/softmax.py").read_text()


def test_tape_blanks_the_replay_too(tmp_path):
    target = tmp_path / "hard"
    stubs = edition.build_edition(target, ops=["relu"], tape=True)
    assert stubs[-1][0] == "Tape.backward"
    done = cli(target, "check", "--ops", "relu,tape")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("0 of 2 pass; not written yet: relu, tape")


@pytest.mark.parametrize("ops, message", [
    (["softmax", "sofmax"], "no op named sofmax; the ops are: "),
    ([], "no op named (none given); the ops are: "),
])
def test_an_unknown_op_is_refused_with_the_list_and_nothing_is_written(tmp_path, ops, message):
    with pytest.raises(edition.EditionError) as error:
        edition.build_edition(tmp_path / "x", ops=ops)
    assert str(error.value).startswith(message) and all(op in str(error.value) for op in ALL_OPS)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_that_is_not_empty_is_refused_and_left_alone(tmp_path):
    (tmp_path / "mine.txt").write_text("a student's work")
    with pytest.raises(edition.EditionError, match=r"exists and is not an empty folder; .* \(nothing was written\)"):
        edition.build_edition(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    with pytest.raises(edition.EditionError, match="is not an empty folder"):
        edition.build_edition(tmp_path / "mine.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    edition.build_edition(empty, ops=["exp"])                # an empty folder is fine
    assert (empty / "pyproject.toml").is_file()


def test_the_command_refuses_bad_input_in_one_line(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "work.py").write_text("")
    for args in (["assignment", str(tmp_path / "full")], ["assignment", str(tmp_path / "new"), "--ops", "sofmax"]):
        done = cli(REPO, *args)
        assert done.returncode == 2 and done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
        assert done.stderr.startswith("python -m tinytransformer assignment: ")
    assert not (tmp_path / "new").exists()


def test_the_command_writes_an_edition_and_says_what_to_write(tmp_path):
    done = cli(REPO, "assignment", str(tmp_path / "class"), "--ops", "softmax")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [f"wrote a student edition to {tmp_path / 'class'}: 1 function to write",
                                            "  softmax_backward         tinytransformer/ops/softmax.py:37"]


# The notebooks of the edition

def cells(path):
    return json.loads(path.read_text())["cells"]


def tags(cell):
    return set(cell.get("metadata", {}).get("tags", []))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_edition_notebooks_hold_no_solution_and_keep_every_other_output(blank, path):
    library, student = cells(path), cells(blank / "notebooks" / path.name)
    first_solution = min(i for i, cell in enumerate(library) if "solution" in tags(cell))
    assert not any("solution" in tags(cell) for cell in student)
    assert student[-1]["source"][0] == "## Solutions\n" and "Not in this edition" in "".join(student[-1]["source"])
    kept = student[:-1]
    every = {f"{op}_backward" for op in edition.op_files()}
    answers = answer_forms(every)
    library = [without_answers(edition.edition_cell(cell, every), answers)   # a cell or line spelling an answer goes
               for cell in library]
    assert [c["source"] for c in kept] == [c["source"] for c in library[:len(kept)]]
    assert len(kept) in (first_solution, first_solution - 1)            # the "## Solutions" heading goes too
    for theirs, ours in zip(library, kept):
        if tags(theirs) & {"exercise", "check"} or edition.shows_a_backward(theirs):
            assert ours["outputs"] == [] and ours["execution_count"] is None
        else:
            assert ours == theirs


def significant_lines(text):
    """Each line of text without its comment and its spaces: how a body is found wherever it was copied."""
    return [re.sub(r"\s+", "", line.split("#")[0]) for line in text.splitlines()]


def backward_bodies():
    """{function: the set of its body's lines} for every backward pass the edition blanks (and Tape.backward),
    without the docstring, the cache's unpacking and lines that also occur elsewhere in the library's file."""
    found = {}
    for path in sorted((REPO / "tinytransformer/ops").glob("*.py")) + [REPO / "tinytransformer/tensor.py"]:
        text = path.read_text()
        lines = significant_lines(text)
        functions = [(f"Tape.{n.name}" if n.col_offset else n.name, n) for n in ast.walk(ast.parse(text))
                     if isinstance(n, ast.FunctionDef) and (n.name.endswith("_backward") and path.parent.name == "ops"
                                                            or n.name == "backward" and "output" in ast.unparse(n.args))]
        for name, node in functions:
            body = [s for s in node.body if not (isinstance(s, ast.Expr) or isinstance(s, ast.Assign)
                                                 and getattr(s.value, "id", "") == "cache")]
            inside = {i for s in body for i in range(s.lineno - 1, s.end_lineno)}
            elsewhere = {line for i, line in enumerate(lines) if i not in inside}
            found[name] = {lines[i] for i in inside if len(lines[i]) >= 16 and lines[i] not in elsewhere}
    return {name: body for name, body in found.items() if body}     # not `return (dout,)`: too short to look for


def edition_texts(folder):
    """(path, its lines) of every text file of an edition; a notebook's cells' sources and stored outputs."""
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".ipynb":
            text = ""
            for cell in json.loads(path.read_text())["cells"]:
                text += "".join(cell["source"]) + "\n"
                for output in cell.get("outputs", []):
                    shown = output.get("text") or output.get("data", {}).get("text/plain", "")
                    text += ("".join(shown) if isinstance(shown, list) else shown) + "\n"
            yield path, text
        elif path.suffix in (".py", ".md", ".txt", ".rst", ".toml", ".html"):
            yield path, path.read_text(errors="replace")


def test_a_fresh_edition_holds_no_backward_body_anywhere(built):
    """Every line of a backward pass's body, in one file of the edition, is its answer: no file may hold one."""
    blank, stubs = built
    bodies = {name: body for name, body in backward_bodies().items() if name in dict(stubs)}
    assert len(bodies) >= 20
    leaks = []
    for path, text in edition_texts(blank):
        lines = set(significant_lines(text))
        leaks += [f"{path.relative_to(blank)}: {name}" for name, body in bodies.items() if body <= lines]
    assert not leaks


def test_a_tape_edition_holds_no_replay_body_anywhere(tmp_path):
    edition.build_edition(tmp_path / "tape", tape=True)
    body = backward_bodies()["Tape.backward"]
    assert len(body) >= 5
    assert not [path for path, text in edition_texts(tmp_path / "tape") if body <= set(significant_lines(text))]


def checkout(folder):
    """A git checkout of this project's tracked files in folder (its index: nothing committed, nothing fetched)."""
    for name in edition.tracked_files(REPO):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, folder / name)
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(command, cwd=folder, check=True, capture_output=True)
    return folder


INSTRUCTORS = {"grades.csv": "alice,25\n", "submissions/alice.zip": "PK", "notes/week3.md": "answers: ...",
               "tinytransformer/ops/answer_key.py": "def softmax_backward(dout, cache): ...",
               "notebooks/scratch.ipynb": "{}", "docs/_build/index.html": "<html>", "docs/code/softmax.py": "# copy"}


def test_a_fresh_edition_of_a_checkout_holds_none_of_its_untracked_files(tmp_path):
    """An instructor's checkout holds grades, submissions and notes that git does not track (and the book's
    generated pages): the edition is built from the tracked files only; a new file git add-ed goes in."""
    project = checkout(tmp_path / "project")
    for name, text in INSTRUCTORS.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    (project / "notebooks" / "99_added.ipynb").write_text((project / "notebooks" / "02_the_tape.ipynb").read_text())
    subprocess.run(["git", "add", "notebooks/99_added.ipynb"], cwd=project, check=True)
    edition.build_edition(tmp_path / "edition", ops=["exp"], project=project)
    made = {p.relative_to(tmp_path / "edition").as_posix() for p in (tmp_path / "edition").rglob("*") if p.is_file()}
    assert not [name for name in INSTRUCTORS if name in made]
    assert "notebooks/99_added.ipynb" in made
    tracked = {name for name in edition.tracked_files(project) if name not in edition.LEFT_OUT
               and not name.startswith(".ci/")}                # CI's scripts: SKIPPED
    assert made == tracked


def test_a_project_that_is_no_git_checkout_needs_a_list_of_its_files(tmp_path):
    project = checkout(tmp_path / "project")
    shutil.rmtree(project / ".git")
    (project / "grades.csv").write_text("alice,25\n")
    with pytest.raises(edition.EditionError, match="is not a git checkout .* the files git tracks \\(or those listed "
                                                   "with --files\\)"):
        edition.build_edition(tmp_path / "edition", project=project)
    assert not (tmp_path / "edition").exists()
    listed = edition.tracked_files(REPO)
    edition.build_edition(tmp_path / "edition", ops=["exp"], files=listed, project=project)
    assert not (tmp_path / "edition" / "grades.csv").exists() and (tmp_path / "edition" / "pyproject.toml").is_file()
    with pytest.raises(edition.EditionError, match=r"\.\./grades\.csv: expected a file of the project"):
        edition.build_edition(tmp_path / "other", ops=["exp"], files=listed + ["../grades.csv"], project=project)
    assert not (tmp_path / "other").exists()


def answers(function):
    """The values a backward pass's statements compute (each right-hand side and returned item, as ast.unparse
    writes it), 24 characters or longer: its answer, however a copy of it is spaced or named around."""
    found = set()
    for statement in function.body[1:] if ast.get_docstring(function) else function.body:
        for node in ast.walk(statement):
            value = node.value if isinstance(node, (ast.Assign, ast.AugAssign, ast.Return)) else None
            items = value.elts if isinstance(value, ast.Tuple) else [value] if value is not None else []
            found |= {text for text in map(ast.unparse, items) if len(text) >= 24 and text != "cache"}
    return found


def expressions(text):
    """Every expression of Python source text, as ast.unparse writes it."""
    return {ast.unparse(node) for node in ast.walk(ast.parse(text)) if isinstance(node, ast.expr)}


def library_answers():
    """{op_backward: its answers} for every backward pass in tinytransformer/ops/."""
    return {node.name: answers(node) for path in sorted((REPO / "tinytransformer/ops").glob("*.py"))
            for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_backward")}


@pytest.mark.slow
def test_no_python_file_of_a_fresh_edition_computes_a_blank_backwards_answer(built):
    """Any file of the edition (a test, a benchmark, a tool) that computes a blanked backward pass's value, such as
    a test's 'wrong' log_softmax that is right but for the mask, hands the answer over. (The notebooks are the
    lessons that derive each answer: their solutions are tested above.)"""
    blank, stubs = built
    wanted = {name: found for name, found in library_answers().items() if name in dict(stubs) and found}
    assert len(wanted) >= 18
    leaks = [f"{path.relative_to(blank)}: {name}: {sorted(found & expressions(path.read_text()))[0]}"
             for path in sorted(blank.rglob("*.py")) for name, found in wanted.items()
             if found & expressions(path.read_text())]
    assert not leaks


def test_the_answer_scan_finds_the_library_and_a_copy_with_other_spacing():
    library = set().union(*(expressions(p.read_text()) for p in (REPO / "tinytransformer/ops").glob("*.py")))
    assert all(found <= library for found in library_answers().values())
    copy = "def f(dout, cache):\n    out, axis = cache\n    return (dout-np.exp(out)*dout.sum(axis = axis,keepdims=True),)\n"
    assert library_answers()["log_softmax_backward"] & expressions(copy)


def test_a_weeks_edition_keeps_the_other_backward_passes_but_not_the_comment_that_spells_its_answer(tmp_path):
    """Week 3 blanks softmax: attention's backward stays (the models train), its code as the library's, but the
    derivation above it, which writes softmax's backward out, goes."""
    target = tmp_path / "week3"
    edition.build_edition(target, ops=["softmax", "log_softmax", "cross_entropy"])
    spelled = "dS = A * (dA - sum_j dA_j A_j)"
    assert spelled in (REPO / "tinytransformer/ops/attention.py").read_text()
    assert not [path for path in target.rglob("*.py") if spelled in path.read_text()]
    def attention(root):
        tree = ast.parse((root / "tinytransformer/ops/attention.py").read_text())
        return ast.dump(next(n for n in tree.body if getattr(n, "name", "") == "attention_backward"))
    assert attention(target) == attention(REPO)
    for name, found in library_answers().items():               # the later weeks' answers are all there
        if name.removesuffix("_backward") not in ("softmax", "log_softmax", "cross_entropy") and found:
            assert found <= expressions((target / edition.op_files()[name.removesuffix("_backward")]).read_text())


def test_hide_blanks_later_weeks_as_not_this_weeks_work(tmp_path):
    target = tmp_path / "week3"
    stubs = edition.build_edition(target, ops=["softmax"], hide=["layer_norm", "attention"])
    assert [f for f, _ in stubs] == ["softmax_backward", "layer_norm_backward", "rms_norm_backward",
                                     "attention_backward", "flash_attention_backward"]   # each hidden with its kin
    for op in ("layer_norm", "rms_norm", "attention", "flash_attention"):
        assert not library_answers()[f"{op}_backward"] & expressions((target / edition.op_files()[op]).read_text())
    readme = (target / "README.md").read_text()
    assert "| `softmax_backward` |" in readme and "| `layer_norm_backward` |" not in readme
    assert "they come in a later week's edition" in readme and \
        "`layer_norm_backward`, `rms_norm_backward`, `attention_backward`, `flash_attention_backward`" in readme
    done = cli(target, "check", "--ops", "layer_norm")
    line = (target / edition.op_files()["layer_norm"]).read_text().splitlines().index(
        "def layer_norm_backward(dout, cache):") + 1
    assert done.returncode == 1 and "layer_norm_backward comes in a later week: not in this edition " \
        f"(tinytransformer/ops/layernorm.py:{line})" in done.stdout


def test_ops_that_share_a_derivation_are_blanked_together(tmp_path):
    """RMS norm's backward holds layer norm's dgamma and its mean of dxhat * xhat: a week that blanks one blanks
    both, so neither file shows the other's answer."""
    stubs = edition.build_edition(tmp_path / "week4", ops=["layer_norm"])
    assert [f for f, _ in stubs] == ["layer_norm_backward", "rms_norm_backward"]
    text = (tmp_path / "week4" / edition.op_files()["layer_norm"]).read_text()
    for op in ("layer_norm", "rms_norm"):
        assert not library_answers()[f"{op}_backward"] & expressions(text)


def test_attention_and_its_tiled_twin_are_blanked_together(tmp_path):
    """The tiled attention's derivation starts from the ordinary op's backward pass, written out in its comment:
    a week that blanks either blanks both."""
    softmax_step = "dS = A * (dA - D)"                     # in the library's flash_attention.py, above its backward
    assert softmax_step in (REPO / edition.op_files()["flash_attention"]).read_text()
    for op in ("attention", "flash_attention"):
        stubs = edition.build_edition(tmp_path / op, ops=[op])
        assert [f for f, _ in stubs] == ["attention_backward", "flash_attention_backward"]
        for name in ("attention", "flash_attention"):
            text = (tmp_path / op / edition.op_files()[name]).read_text()
            assert not library_answers()["attention_backward"] & expressions(text), name
            assert softmax_step not in text, name


def test_the_library_itself_would_be_caught_as_a_leak():
    """The check above can fail: the library's own files hold every body."""
    lines = set()
    for _, text in edition_texts(REPO / "tinytransformer"):
        lines |= set(significant_lines(text))
    assert all(body <= lines for body in backward_bodies().values())


def execute(path, library):
    """Run a notebook top to bottom with library's package first on the path; every cell runs, errors or not."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(path.parent)}})
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(library)                  # the kernel inherits it
    try:
        client.execute()
    finally:
        os.environ.pop("PYTHONPATH") if saved is None else os.environ.__setitem__("PYTHONPATH", saved)
    return nb


def check_cells_fail_cleanly(nb):
    for cell in (c for c in nb.cells if "check" in tags(c)):
        text = "".join(out.get("text", "") for out in cell.outputs)
        assert not [out for out in cell.outputs if out.output_type == "error"], cell.source
        assert "not done yet" in text and "correct" not in text, text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["03_every_op", "08_training_copy_and_reverse", "12_bert_encoder_only"])
def test_the_check_cells_fail_cleanly_on_empty_exercises_with_every_backward_blank(blank, name):
    """Run on the blank edition's own library: 03 has a backward pass as its exercise; 08's and 12's
    checks need models that cannot train until the backward passes are written."""
    check_cells_fail_cleanly(execute(blank / "notebooks" / f"{name}.ipynb", blank))


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_edition_notebook_runs_and_its_checks_say_not_done_yet(blank, path):
    """With the library's backward passes (a student who has written them all), no cell fails."""
    nb = execute(blank / "notebooks" / path.name, REPO)
    assert not [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
                if out.output_type == "error"]
    check_cells_fail_cleanly(nb)



# Training on the student's gradients

@pytest.mark.parametrize("task, first", [("reverse", "cross_entropy_backward"), ("addition", "cross_entropy_backward"),
                                         ("mlm", "cross_entropy_backward")])
def test_train_with_a_blank_backward_stops_before_the_first_step_with_one_line(built, task, first):
    blank, stubs = built
    done = cli(blank, "train", "--task", task, "--steps", "5")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [f"python -m tinytransformer train: write {first} first: {dict(stubs)[first]}"]
    assert "step" not in done.stdout.split("\n", 1)[1]                  # nothing after the header: no step taken


def test_train_names_the_op_the_model_waits_for(tmp_path):
    target = tmp_path / "week3"
    edition.build_edition(target, ops=["softmax"])
    done = cli(target, "train", "--task", "reverse", "--steps", "5")
    assert done.stderr.splitlines() == ["python -m tinytransformer train: write softmax_backward first: "
                                        "tinytransformer/ops/softmax.py:37"]


def test_an_edition_trains_attention_with_the_students_plain_backward_not_the_fast_twin(tmp_path):
    """The models run attention's fast twin (ops/attention_fast.py), whose backward is the plain one run on slices
    of the batch: blank the plain one and training waits for it, as for any op."""
    target = tmp_path / "week5"
    edition.build_edition(target, ops=["attention"])
    line = (target / "tinytransformer/ops/attention.py").read_text().splitlines().index(
        "def attention_backward(dout, cache):") + 1
    done = cli(target, "train", "--task", "reverse", "--steps", "5")
    assert done.stderr.splitlines() == ["python -m tinytransformer train: write attention_backward first: "
                                        f"tinytransformer/ops/attention.py:{line}"]
    assert (target / "tinytransformer/ops/attention_fast.py").read_text() == \
        (REPO / "tinytransformer/ops/attention_fast.py").read_text()          # nothing of the answer in the twin


def layer_norm_stub(dout, cache):
    raise NotImplementedError("write layer_norm_backward first: tinytransformer/ops/layernorm.py:31")


def test_a_blank_backward_stops_training_before_any_update(monkeypatch):
    task = tt.tasks.make_task("reverse")
    model = task.new_model(task.config(d_model=16, n_heads=2, d_ff=16), np.random.default_rng(0))
    before = [p.data.copy() for p in model.parameters()]
    monkeypatch.setattr(ops, "layer_norm_backward", layer_norm_stub)
    with pytest.raises(NotImplementedError, match="write layer_norm_backward first"):
        tt.train.train(None, task, model=model, steps=3, progress=False)
    assert all(np.array_equal(p.data, b) for p, b in zip(model.parameters(), before))
