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

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when the autograder is uploaded. It installs the instructor's
# tinytransformer (the wheel in this zip) with its grading extra in a virtual environment, $ROOT/venv: Pythons
# that refuse system-wide installs ("externally managed": Debian 12, Ubuntu 23.04 and later) work the same.
# NumPy already installed on the system is used (--system-site-packages); what is missing comes from PyPI.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
VENV="$ROOT/venv"
if ! python3 -m venv --system-site-packages "$VENV"; then
    # Debian and Ubuntu ship venv's pip apart, in python3-venv
    echo "setup.sh: python3 -m venv failed; installing python3-venv with apt-get" >&2
    rm -rf "$VENV"
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null
    fi
    python3 -m venv --system-site-packages "$VENV"
fi
wheel=$(ls "$ROOT"/source/tinytransformer-*.whl)
"$VENV/bin/python" -m pip install --quiet "numpy>=1.26"
"$VENV/bin/python" -m pip install --quiet "$wheel[grading]"
# Student code runs as an unprivileged user (the grader's sandbox): it may read Python and NumPy, but not the
# instructor's files: this zip (the wheel, the seed) and the installed library (every backward pass).
chmod 755 "$ROOT"
chmod -R a+rX "$VENV"
chmod -R go-rwx "$ROOT/source" "$VENV"/lib/python3*/site-packages/tinytransformer
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission, as root: grade it with the instructor's library (-I: the installed
# one, whatever folder this runs in), the student's code in the grader's sandbox. It always leaves results.json:
# if the grader stops without writing it, is killed, or runs out of time (GRADE_SECONDS, default 540, below
# Gradescope's default limit of 10 minutes), a score of 0 with the reason, which the instructor sees too.
set -uo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
RESULTS="$ROOT/results/results.json"
ERRORS="$ROOT/results/grader-errors.txt"
PY="$ROOT/venv/bin/python"
[ -x "$PY" ] || PY=python3
mkdir -p "$ROOT/results"
rm -f "$RESULTS" "$ERRORS"
grader=

zero() {  # results.json with a score of 0 and the reason: $1, text of ours (the grader's last line is escaped)
    local last
    last=$(tail -n 1 "$ERRORS" 2>/dev/null | LC_ALL=C tr -cd '\\040-\\176' | cut -c 1-300 | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g')
    printf '{"score": 0, "tests": [], "output": "Not graded: %s%s. This is not a judgement of your work: \
your instructor sees this message and will grade your submission again."}\\n' "$1" "${last:+ ($last)}" \\
        > "$RESULTS.writing" && mv -f "$RESULTS.writing" "$RESULTS"
}

stopped() {  # the autograder itself was stopped (an outer timeout, Gradescope's limit): $1, the signal
    trap - TERM INT HUP
    [ -n "$grader" ] && kill -TERM "$grader" 2>/dev/null
    zero "the autograder was stopped (SIG$1) before the grader finished"
    [ -n "$grader" ] && wait "$grader"             # its cleanup; timeout kills it 10 s after the signal at most
    exit 1
}
trap 'stopped TERM' TERM
trap 'stopped INT' INT
trap 'stopped HUP' HUP

timeout --kill-after=10 "${GRADE_SECONDS:-540}" "$PY" -I -m tinytransformer grade "$ROOT/submission" \\
    --points "$ROOT/source/points.json" --seed "$(cat "$ROOT/source/seed")" --gradescope "$RESULTS" --force \\
    2> "$ERRORS" &
grader=$!
wait "$grader"
status=$?
cat "$ERRORS" >&2
if [ "$status" = 124 ]; then
    zero "the grader ran out of time (${GRADE_SECONDS:-540} s)"
elif [ "$status" -gt 128 ]; then
    zero "the grader was killed (signal $((status - 128)))"
elif [ "$status" != 0 ]; then
    zero "the grader stopped with exit status $status"
elif ! "$PY" -I -c 'import json, sys; assert "score" in json.load(open(sys.argv[1]))' "$RESULTS" 2>/dev/null; then
    zero "the grader wrote no readable results.json"
fi
exit 0
"""

# What a student whose upload cannot be read is told, unless the reader's message says it already.
UPLOAD = ("What to upload: your whole edition as one .zip: the folder that holds pyproject.toml and "
          "tinytransformer/, zipped.")


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
                for name, text in (("setup.sh", SETUP), ("run_autograder", RUN)):
                    info = zipfile.ZipInfo(name)
                    info.external_attr = 0o755 << 16                   # executable, as Gradescope needs
                    z.writestr(info, text)
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
