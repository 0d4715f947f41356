"""A Gradescope autograder for an edition: a zip that installs the instructor's library and grades with it.

    python -m tinytransformer assignment DIR [--ops ...] [--tape] --autograder    # also writes DIR-autograder.zip

The zip holds the instructor's tinytransformer as a wheel (built from this
project), the points of the ops the edition asks for, and Gradescope's two
scripts: setup.sh installs NumPy and the wheel (nothing else is fetched), and
run_autograder grades /autograder/submission with `python -m tinytransformer
grade` and writes /autograder/results/results.json. Both read the root from
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

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, when the autograder is uploaded: NumPy from PyPI, the instructor's tinytransformer
# from the wheel in this zip (--no-deps: nothing else is fetched).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
python3 -m pip install --quiet "numpy>=1.26"
python3 -m pip install --quiet --no-deps "$ROOT"/source/tinytransformer-*.whl
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: grade it with the instructor's library, write results.json
# (-I: the installed library, whatever folder this runs in).
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
mkdir -p "$ROOT/results"
python3 -I -m tinytransformer grade "$ROOT/submission" --points "$ROOT/source/points.json" \\
    --gradescope "$ROOT/results/results.json"
"""


class AutograderError(Exception):
    """The autograder cannot be built: the message says why, in one line."""


def build_autograder(path, points, project=PROJECT):
    """Write the autograder zip to path: setup.sh, run_autograder, points.json and the library's wheel."""
    path, project = Path(path), Path(project)
    with tempfile.TemporaryDirectory() as scratch:
        wheel = build_wheel(project, Path(scratch))
        temporary = path.with_name(f".{path.name}.writing")
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in (("setup.sh", SETUP), ("run_autograder", RUN)):
                info = zipfile.ZipInfo(name)
                info.external_attr = 0o755 << 16                   # executable, as Gradescope needs
                z.writestr(info, text)
            z.writestr("points.json", json.dumps(points, indent=1) + "\n")
            z.write(wheel, wheel.name)
        temporary.replace(path)
    return path


def build_wheel(project, scratch):
    """The project's wheel, built from a copy of it (the project's tree gets no build folders), by pip in its own
    build environment with pyproject.toml's build requirements: an instructor's environment need not hold them."""
    source = scratch / "source"
    shutil.copytree(project / "tinytransformer", source / "tinytransformer",
                    ignore=shutil.ignore_patterns("__pycache__"))
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
        result["output"] = f"not graded: {graded.problem}"
    return result
