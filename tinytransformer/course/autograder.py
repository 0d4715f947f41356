"""A Gradescope autograder for an edition: a zip that installs the instructor's library and grades with it.

    python -m tinytransformer assignment DIR [--ops ...] [--tape] --autograder    # also writes DIR-autograder.zip

The zip holds the instructor's tinytransformer as a wheel (built from the files git tracks), the points of the
ops the edition asks for and Gradescope's two scripts; no seed: every submission's cases are drawn from a fresh
secret seed, so what one upload learns of its cases (a message, its feedback) is of no use to the next, its own
or a classmate's. The seed goes in results.json's extra_data and the grader's output, which Gradescope shows the
instructor only, so a grade can be reproduced (`grade --seed N`); never in the student's feedback, each test's
text capped at FEEDBACK characters of one printable line. setup.sh makes a virtual environment in
/autograder/venv (so that a Python that refuses system-wide installs, "externally managed" as Debian 12's and
Ubuntu 23.04's, works too) and installs the wheel with its grading extra there. run_autograder grades
/autograder/submission with `python -m tinytransformer grade` and always leaves /autograder/results/results.json:
when the grader dies, is killed or runs out of time, a score of 0 with the reason. Both read the root from
AUTOGRADER_ROOT (default /autograder), so the zip can be tried on a fake tree.
"""
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .op_grading import PROJECT
from ..files import atomic_write

# Gradescope's two scripts, each a file of templates/: setup.sh runs once when the autograder is uploaded,
# run_autograder for every submission.
TEMPLATES = Path(__file__).resolve().parent / "templates"
SCRIPTS = ("setup.sh", "run_autograder")

# What a student whose upload cannot be read is told, unless the reader's message says it already.
UPLOAD = ("What to upload: handin.zip, which `python -m tinytransformer handin` writes in your edition (its "
          "tinytransformer/ folder, zipped, without .venv).")


class AutograderError(Exception):
    """The autograder cannot be built: the message says why, in one line."""


def build_autograder(path, points, files=None, project=PROJECT):
    """Write the autograder zip to path, atomically: setup.sh, run_autograder, points.json and the wheel.

    files: the project's files the wheel is built from (default: every file of tinytransformer/).
    """
    path, project = Path(path), Path(project)
    with tempfile.TemporaryDirectory() as scratch:
        wheel = build_wheel(project, Path(scratch), files)

        def write(f):
            with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
                for name in SCRIPTS:
                    info = zipfile.ZipInfo(name)
                    info.external_attr = 0o755 << 16                   # executable, as Gradescope needs
                    z.writestr(info, (TEMPLATES / name).read_text())
                z.writestr("points.json", json.dumps(points, indent=1) + "\n")
                z.write(wheel, wheel.name)
        atomic_write(path, write)
    return path


def build_wheel(project, scratch, files=None):
    """The project's wheel, built from a copy of its files (the project's tree gets no build folders), by pip in its
    own build environment with pyproject.toml's build requirements: an instructor's environment need not hold them."""
    source = scratch / "source"
    if files is None:
        shutil.copytree(project / "tinytransformer", source / "tinytransformer",
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        for name in (f for f in files if f.startswith("tinytransformer/")):
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project / name, source / name)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(project / name, source / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                           "-w", str(scratch / "wheel"), str(source)], capture_output=True, text=True)
    wheels = list((scratch / "wheel").glob("tinytransformer-*.whl"))
    if done.returncode or not wheels:
        last = (done.stderr.strip().splitlines() or ["no wheel written"])[-1]
        raise AutograderError(f"could not build the library's wheel with pip: {last}")
    return wheels[0]


FEEDBACK = 600          # characters of one test's text in the student's feedback: a diagnosis, not a data dump


def gradescope_results(graded, points, seed):
    """results.json of one submission (submission.Graded), in Gradescope's format: one test per op, each test's
    text one printable line of FEEDBACK characters at most; the seed in extra_data, for the instructor."""
    tests = [{"name": op, "score": points[op] if r.status == "pass" else 0.0, "max_score": points[op],
              "visibility": "visible",
              "output": capped(r.status + (f": {r.diagnosis}" if r.diagnosis else ""))
              + (f"\nflagged for an instructor's review: {capped(r.review)}" if r.review else "")}
             for op, r in graded.ops.items()]
    result = {"score": graded.score, "tests": tests, "extra_data": {"seed": seed}, "stdout_visibility": "hidden"}
    if graded.problem:
        problem = capped(graded.problem)
        result["output"] = f"Not graded: {problem}." + ("" if "upload" in problem else f" {UPLOAD}")
    return result


def capped(text):
    """text as one printable line of FEEDBACK characters at most (what a student's code raised may be anything)."""
    line = "".join(c if c.isprintable() else " " for c in str(text))
    return line if len(line) <= FEEDBACK else line[:FEEDBACK - 25] + " ... (cut: too long to show)"
