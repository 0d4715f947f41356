"""The student edition: a copy of the project whose backward passes are the student's to write.

    python -m tinytransformer assignment DIR [--ops softmax,layer_norm] [--hide attention] [--tape]

copies the project's files that git tracks (tracked_files; or an explicit list,
for a project that is no git checkout), never an untracked one such as the
instructor's grades.csv, submissions/ or notes, into DIR, which must be new or
empty. In the copy, the body of every backward pass in tinytransformer/ops/
(or of the ops named by --ops) is a stub made from the library's own source
(stubs.py); --tape blanks Tape.backward, the tape's replay, too. Each notebook
loses its solutions: the cells from the first one tagged "solution" to the
end, with their "Solutions" heading. Its exercise and check cells are cleared,
and so is any output that prints a backward pass's source; a line of a
teaching cell that prints a blank backward pass's answer (answers.py
recognises it under other names) is left out, with that cell's outputs; a
cell whose metadata says it works a blank op's backward out by hand
("answer_of") is shown as its "edition_source", the same lesson calling the
op, without outputs; every other output stays. What would hand the answers over is left out
(LEFT_OUT), and a README for students goes above the project's.

A week's edition (--ops): the other ops' backward passes stay the library's, so
that the models train, but a kept backward pass that calls a blank one loses
the derivation comment above it (attention's spells softmax's backward out).
--hide blanks later weeks' ops as well, their stubs saying so, for an
instructor who would rather the models wait than show those answers.

The forward passes, the tape, the layers and the models stay as they are, so a
student's backward passes train the Transformer, GPT and BERT. The edition is
built in a new hidden folder beside DIR and renamed into place, so a failure
(a full disk, a second assignment at the same time) leaves no half.
"""
import ast
import errno
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .answers import answer_forms, without_answers
from .grader import PROJECT, op_names
from .stubs import backward_names, stub_source, without_derivations

STUDENT_README = Path(__file__).resolve().parent / "templates" / "student_readme.md"
OPS = Path("tinytransformer/ops")
TAPE_FILE, TAPE_FUNCTION = Path("tinytransformer/tensor.py"), "Tape.backward"

# Never copied: version control, environments, caches, build output.
SKIPPED = {".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "_build",
           "build", "dist", ".ci"}
# Made by building the book (docs/_ext/book.py), never committed: copies of the notebooks and the sources with their
# outputs and backward passes, so an edition made after a book build must not carry them.
GENERATED = {"docs/_build", "docs/notebooks", "docs/code", "docs/api"}
# Left out of an edition, with the reason: what holds near-copies of the backward passes, and
# what checks things only the instructor's copy has.
LEFT_OUT = {
    "tinytransformer/course/mistakes.py": "the catalogue of mistakes: each one a backward pass with one change",
    "notebooks/14_spot_the_bug.ipynb": "shows the catalogue of mistakes",
    "tests/test_mistakes.py": "grades the catalogue of mistakes",
    "tests/test_edition.py": "builds editions and fills the library's backward passes back in",
    "tests/test_stubs.py": "checks the stubs against the library's own backward passes",
    "tests/test_notebooks.py": "checks the solution cells and committed outputs that an edition has not",
    "tests/test_class_grading.py": "grades submissions against the library's own backward passes",
    "tests/test_what_python_runs.py": "grades submissions against the library's own backward passes",
    "tests/test_wire.py": "grades submissions against the library's own backward passes",
    "tests/test_sandbox.py": "attacks the instructor's grader with the library's own backward passes",
    "tests/test_grade_perimeter_sandbox.py": "grades with the library's own backward passes, as test_sandbox.py",
    "tests/test_grade_perimeter_gradescope.py": "builds the instructor's autograder from the instructor's copy",
    "tests/test_grade_perimeter_edition.py": "quotes the silu derivative an edition leaves out of notebook 17",
    "tests/test_autograder.py": "builds the instructor's autograder from the instructor's copy",
    "tests/test_assignment.py": "builds editions from the instructor's git checkout",
    "tests/test_ops_attention.py": "spells the mask's backward out as its expected value",
    "tests/test_ops_embedding.py": "spells the embedding's backward out as a scatter-add loop",
    "tests/test_gradcheck.py": "names the right gradient beside each wrong one it checks the checker on",
    "tests/test_site.py": "checks the book's build and the project's CI files, which an edition has not",
    "tests/test_docs_numbers.py": "reads the number rules of tests/test_notebooks.py, which is left out",
    "tests/test_notebook_records.py": "checks the notebooks' committed outputs with test_notebooks.py's helpers",
    "benchmarks/ab_speedups.py": "holds complete backward passes, the speed-ups it measures",
    "benchmarks/speed_idioms.py": "times pieces of the backward passes, each idiom against its plain form",
    "docs/results/speed.md": "its table of speed idioms writes pieces of the backward passes out",
    "benchmarks/floor.py": "takes the products of every backward pass from a tape, each written out",
    "tests/test_benchmark_floor.py": "checks benchmarks/floor.py, which is left out",
    "benchmarks/digits.py": "its softmax regression's gradient is cross-entropy's backward",
}


class EditionError(Exception):
    """A student edition cannot be written: the message says why, in one line."""


def op_files(project=PROJECT):
    """{op name: its file, relative to the project} for every backward pass in tinytransformer/ops/."""
    found = {}
    for path in sorted((project / OPS).glob("*.py")):
        for name in backward_names(path.read_text()):
            found[name.removesuffix("_backward")] = OPS / path.name
    return found


# Ops whose backward passes share their derivation, so that one shown would give the other's answer away
# (layer norm's dgamma and its mean of dxhat * xhat are RMS norm's too; the tiled attention's derivation starts
# from the ordinary one's backward): an edition blanks them together.
KIN = ({"layer_norm", "rms_norm"}, {"attention", "flash_attention"})


def with_kin(names, found):
    """names and every op that shares a derivation with one of them (KIN), in the order of found."""
    wanted = set(names)
    for group in KIN:
        if wanted & group:
            wanted |= group
    return [name for name in found if name in wanted]


def build_edition(target, ops=None, tape=False, hide=(), files=None, project=PROJECT):
    """Write a student edition into target; return [(function, "file:line")] of the stubs, in file order.

    ops: the op names to blank (default every op in tinytransformer/ops/); tape: blank Tape.backward too;
    hide: ops of later weeks, blanked too but not this edition's work (their stubs say so); files: the
    project's files to copy, relative to it (default: the files git tracks, tracked_files).
    """
    target, project = check_target(target), Path(project)
    for needed in ("pyproject.toml", "tinytransformer/ops", "notebooks", "tests"):
        if not (project / needed).exists():
            raise EditionError(f"the project's source tree is needed ({project / needed} is missing); "
                               "run it from a clone of tinytransformer, installed with pip install -e")
    if target.resolve().is_relative_to(project.resolve()):
        raise EditionError(f"{target} is inside the project ({project.resolve()}), which the edition is copied "
                           "from: it would copy itself; give a folder outside it (nothing was written)")
    found = op_files(project)
    ops = list(found) if ops is None else list(ops)
    unknown = [name for name in ops + list(hide) if name not in found]
    if unknown or not ops:
        raise EditionError(f"no op named {', '.join(unknown) or '(none given)'}; "
                           f"the ops are: {', '.join(found)}")
    ops = with_kin(ops, found)
    hide = [name for name in with_kin(hide, found) if name not in ops]
    files = tracked_files(project) if files is None else sorted({Path(f).as_posix() for f in files})
    blanks = {}                                             # file -> the functions to blank in it
    for name in ops + hide:
        blanks.setdefault(found[name], set()).add(f"{name}_backward")
    if tape:
        blanks[TAPE_FILE] = {TAPE_FUNCTION}
    later = {f"{name}_backward" for name in hide}
    try:
        building = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".building"))
    except OSError as error:
        raise EditionError(f"{target}: the folder {target.parent} cannot be written ({error.strerror}; "
                           "nothing was written)") from None
    try:
        copy_files(project, building, files)
        blanked = {f"{name}_backward" for name in ops + hide}
        for path in sorted(set(found.values()) | set(blanks)):
            source = (project / path).read_text()
            if path in blanks:
                source = stub_source(source, path.as_posix(), blanks[path], later)
            kept = callers(source, blanked)                # attention's derivation spells softmax's backward
            if path in blanks or kept:
                (building / path).write_text(without_derivations(source, kept))
        answers = answer_forms(blanked, project)           # a teaching cell may print one (notebook 17's silu)
        for notebook in sorted((building / "notebooks").glob("*.ipynb")):
            notebook.write_text(student_notebook(notebook.read_text(), answers, blanked))
        stubs = stub_lines(building, blanks)
        readme = building / "README.md"
        readme.write_text(student_readme([s for s in stubs if s[0] not in later], tape,
                                         [s for s in stubs if s[0] in later]) + "\n---\n\n" + readme.read_text())
        os.rename(building, target)                  # atomic; replaces only a missing target or an empty folder
    except OSError as error:
        appeared = error.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR) and error.filename == str(building)
        raise EditionError(f"{target} appeared while the edition was built (another assignment?) and was left as "
                           "it is (nothing was written)" if appeared else
                           f"could not write the edition {target}: {error.strerror or error} "
                           "(nothing was written)") from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return stubs


def check_target(target):
    """target as an absolute Path, if it can become the edition: a new name, or an empty folder, never a link."""
    text = os.fspath(target)
    if os.path.basename(os.path.normpath(text)) in ("", ".", "..") or not text.strip():
        raise EditionError(f"DIR {text!r}: expected the name of a new folder for the edition, "
                           "such as week3 (nothing was written)")
    target = Path(os.path.abspath(text))
    if target.is_symlink():
        raise EditionError(f"{target} is a symbolic link (to {os.readlink(target)}); give a new folder's name, "
                           "not a link (nothing was written)")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise EditionError(f"{target} exists and is not an empty folder; give a new or empty one "
                           "(nothing was written)")
    if not target.parent.is_dir():
        raise EditionError(f"{target}: the folder {target.parent} does not exist (nothing was written)")
    return target


def tracked_files(project):
    """The files git tracks in project (paths relative to it, that exist): what an edition may copy. Never an
    untracked file, such as the instructor's grades.csv, submissions/ or notes."""
    try:
        done = subprocess.run(["git", "ls-files", "-z", "--cached"], cwd=project, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        done = subprocess.CompletedProcess([], 1, b"", str(error).encode())
    if done.returncode:
        why = (done.stderr.decode(errors="replace").strip().splitlines() or ["git failed"])[-1]
        raise EditionError(f"{project} is not a git checkout that git can read ({why}): an edition is built only "
                           "from the files git tracks (or those listed with --files), so that nothing of yours "
                           "goes in; run it from a clone of tinytransformer")
    names = [name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name]
    return sorted(name for name in names if (project / name).is_file())


def copy_files(project, destination, files):
    """Copy the listed files of the project, without SKIPPED folders, the book's GENERATED pages or LEFT_OUT files."""
    for name in files:
        parts = Path(name).parts
        if (name in LEFT_OUT or any(part in SKIPPED or part.endswith(".egg-info") for part in parts)
                or any("/".join(parts[:i]) in GENERATED for i in range(1, len(parts) + 1))):
            continue
        if Path(name).is_absolute() or ".." in parts or not (project / name).is_file():
            raise EditionError(f"{name}: expected a file of the project {project}, relative to it")
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(project / name, destination / name, follow_symlinks=False)   # a link stays a link


def callers(source, blanked):
    """The module-level backward passes in source that stay, but call one of blanked (attention calls softmax's)."""
    return {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)
            and node.name.endswith("_backward") and node.name not in blanked
            and any(isinstance(call, ast.Call) and getattr(call.func, "id", None) in blanked
                    for call in ast.walk(node))}


def stub_lines(edition, blanks):
    """[(function, 'file:line')] of every stub written, read back from the edition's files."""
    found = []
    for path, names in sorted(blanks.items()):
        tree = ast.parse((edition / path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                found += [(f"{node.name}.{item.name}", f"{path.as_posix()}:{item.lineno}") for item in node.body
                          if isinstance(item, ast.FunctionDef) and f"{node.name}.{item.name}" in names]
            elif isinstance(node, ast.FunctionDef) and node.name in names:
                found.append((node.name, f"{path.as_posix()}:{node.lineno}"))
    order = op_names()                                    # the grader's order: the ops' files, the lesson's order
    return sorted(found, key=lambda item: order.index(item[0].removesuffix("_backward"))
                  if item[0].removesuffix("_backward") in order else len(order))


def student_notebook(text, answers=None, blanked=()):
    """A notebook (its .ipynb JSON) without its solutions, its exercise and check cells cleared, without the
    lines that print or evaluate one of `answers` ({form: backward pass}, answers.without_answers), and each
    cell that spells a blanked backward pass (names in `blanked`) in its edition's form (edition_cell)."""
    notebook = json.loads(text)
    cells = notebook["cells"]
    tags = [set(cell.get("metadata", {}).get("tags", [])) for cell in cells]
    solutions = [i for i, cell_tags in enumerate(tags) if "solution" in cell_tags]
    if solutions:
        start = solutions[0]
        if start and cells[start - 1]["cell_type"] == "markdown" and \
                "".join(cells[start - 1]["source"]).startswith("## Solutions"):
            start -= 1
        cells[start:] = [{"cell_type": "markdown", "id": "solutions-not-in-this-edition", "metadata": {},
                          "source": ["## Solutions\n", "\n",
                                     "Not in this edition: the check cell after each exercise tells you\n",
                                     "when your answer is right."]}]
    for index, (cell, cell_tags) in enumerate(zip(cells, tags)):
        if cell["cell_type"] == "code" and (cell_tags & {"exercise", "check"} or shows_a_backward(cell)):
            cell["outputs"], cell["execution_count"] = [], None
        cell = cells[index] = edition_cell(cell, blanked)
        if cell["cell_type"] == "code" and answers:
            cells[index] = without_answers(cell, answers)
    return json.dumps(notebook, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def edition_cell(cell, blanked):
    """The cell as an edition shows it. A cell whose metadata "answer_of" names an op of blanked (it works that
    op's backward pass out by hand) becomes its metadata's "edition_source", the same lesson calling the op
    (which the student writes), without outputs; a week that keeps the op keeps the cell. Neither key stays."""
    metadata = cell.get("metadata", {})
    if "answer_of" not in metadata:
        return cell
    cell = {**cell, "metadata": {key: value for key, value in metadata.items()
                                 if key not in ("answer_of", "edition_source")}}
    if any(f"{op}_backward" in blanked for op in metadata["answer_of"]):
        cell["source"] = metadata["edition_source"]
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return cell


def shows_a_backward(cell):
    """True when a cell's stored output prints a backward pass's source (notebook 03's show_pair)."""
    texts = [output.get("text", "") or output.get("data", {}).get("text/plain", "") for output in cell.get("outputs", [])]
    printed = "".join("".join(text) if isinstance(text, list) else text for text in texts)
    return "_backward(dout, cache):" in printed or "def backward(self" in printed


def student_readme(stubs, tape, later=()):
    """The students' part of the edition's README: what to write, how to check it, what then works; later: the
    stubs of later weeks' ops (hidden), listed apart."""
    rows = "\n".join(f"| `{function}` | `{place}` |" for function, place in stubs)
    tape_line = ("The tape's replay, `Tape.backward` in `tinytransformer/tensor.py`, is yours too: until it\n"
                 "is written, nothing that calls `backward()` runs (the grader grades your ops without it).\n"
                 if tape else "")
    later_line = ("Blank too, but not this week's work: they come in a later week's edition, and until then\n"
                  "what needs them stops and says so: "
                  + ", ".join(f"`{function}`" for function, _ in later) + ".\n\n" if later else "")
    left_out = "\n".join(f"- `{path}`: {why}" for path, why in LEFT_OUT.items())
    return STUDENT_README.read_text().format(rows=rows, tape_line=later_line + tape_line, left_out=left_out)
