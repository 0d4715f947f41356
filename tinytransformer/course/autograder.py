"""A Gradescope autograder for an edition: a zip that installs the instructor's library and grades with it.

    python -m tinytransformer assignment DIR [--ops ...] [--tape] --autograder    # also writes DIR-autograder.zip

The zip holds the instructor's tinytransformer as a wheel (built from the files git tracks), the points of the
ops the edition asks for, a secret seed (only here, never in an edition: the grading cases drawn from it cannot
be looked up by code the students have) and Gradescope's two scripts. setup.sh makes a virtual environment in
/autograder/venv (so that a Python that refuses system-wide installs, "externally managed" as Debian 12's and
Ubuntu 23.04's, works too) and installs the wheel with its grading extra there. run_autograder grades
/autograder/submission with `python -m tinytransformer grade` and always leaves /autograder/results/results.json:
when the grader dies, is killed or runs out of time, a score of 0 with the reason. Both read the root from
AUTOGRADER_ROOT (default /autograder), so the zip can be tried on a fake tree.
"""
import json
import secrets
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


def build_autograder(path, points, files=None, project=PROJECT, seed=None):
    """Write the autograder zip to path, atomically: setup.sh, run_autograder, points.json, seed and the wheel.

    files: the project's files the wheel is built from (default: every file of tinytransformer/); seed: the
    grading cases' secret seed (default: a fresh one from the operating system's randomness).
    """
    path, project = Path(path), Path(project)
    seed = secrets.randbits(63) if seed is None else seed
    with tempfile.TemporaryDirectory() as scratch:
        wheel = build_wheel(project, Path(scratch), files)

        def write(f):
            with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
                for name in SCRIPTS:
                    info = zipfile.ZipInfo(name)
                    info.external_attr = 0o755 << 16                   # executable, as Gradescope needs
                    z.writestr(info, (TEMPLATES / name).read_text())
                z.writestr("points.json", json.dumps(points, indent=1) + "\n")
                z.writestr("seed", f"{seed}\n")
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


def gradescope_results(graded, points):
    """results.json of one submission (submission.Graded), in Gradescope's format: one test per op."""
    tests = [{"name": op, "score": points[op] if r.status == "pass" else 0.0, "max_score": points[op],
              "visibility": "visible",
              "output": r.status + (f": {r.diagnosis}" if r.diagnosis else "")
              + (f"\nflagged for an instructor's review: {r.review}" if r.review else "")}
             for op, r in graded.ops.items()]
    result = {"score": graded.score, "tests": tests}
    if graded.problem:
        result["output"] = f"Not graded: {graded.problem}." + ("" if "upload" in graded.problem else f" {UPLOAD}")
    return result
