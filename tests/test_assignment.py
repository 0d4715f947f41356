"""`python -m tinytransformer assignment`: nothing of the user's lost, one line for every path it cannot use, one
edition whole or none at all (two at once, a full disk, a folder where the zip goes)."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROG = "python -m tinytransformer assignment: "


def assignment(cwd, *args, env=None, wrap=()):
    """python -m tinytransformer assignment ARGS in cwd (this checkout's package); args may be bytes."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1", **(env or {})}
    return subprocess.run([*wrap, sys.executable, "-m", "tinytransformer", "assignment", *args], cwd=cwd, env=env,
                          capture_output=True, timeout=300)


def refused(done):
    """The one line of a refusal (exit status 2, nothing on stdout, no traceback)."""
    err = done.stderr.decode("utf-8", "backslashreplace")
    assert done.returncode == 2 and done.stdout == b"" and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PROG), err
    return lines[0]


def names(folder):
    return sorted(p.name for p in Path(folder).iterdir())


def test_a_users_folder_named_like_the_build_folder_is_left_alone(tmp_path):
    (tmp_path / ".wk.building").mkdir()
    (tmp_path / ".wk.building" / "notes.txt").write_text("mine")
    done = assignment(tmp_path, "wk", "--ops", "exp")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".wk.building" / "notes.txt").read_text() == "mine"
    assert names(tmp_path) == [".wk.building", "wk", "wk.points.json"]


@pytest.mark.slow
def test_a_users_autograder_zip_is_not_replaced_without_force(tmp_path):
    (tmp_path / "wk-autograder.zip").write_bytes(b"my own zip")
    line = refused(assignment(tmp_path, "wk", "--ops", "exp", "--autograder"))
    assert "wk-autograder.zip" in line and "--force" in line
    assert names(tmp_path) == ["wk-autograder.zip"] and (tmp_path / "wk-autograder.zip").read_bytes() == b"my own zip"
    done = assignment(tmp_path, "wk", "--ops", "exp", "--autograder", "--force")
    assert done.returncode == 0, done.stderr
    assert "run_autograder" in zipfile.ZipFile(tmp_path / "wk-autograder.zip").namelist()


def test_an_autograder_zip_that_is_a_folder_is_refused_before_any_work(tmp_path):
    (tmp_path / "wk-autograder.zip").mkdir()
    line = refused(assignment(tmp_path, "wk", "--ops", "exp", "--autograder"))
    assert "wk-autograder.zip" in line and "folder" in line
    assert names(tmp_path) == ["wk-autograder.zip"] and names(tmp_path / "wk-autograder.zip") == []


@pytest.mark.parametrize("name", ["", ".", ".."])
def test_a_name_that_is_no_new_folder_is_refused(tmp_path, name):
    (tmp_path / "here").mkdir()
    line = refused(assignment(tmp_path / "here", name))
    assert f"DIR {name!r}" in line
    assert names(tmp_path) == ["here"] and names(tmp_path / "here") == []


@pytest.mark.parametrize("dangling", [False, True], ids=["to a folder", "dangling"])
def test_a_symlinked_target_is_refused_and_left_as_it_is(tmp_path, dangling):
    real = tmp_path / "real"
    if not dangling:
        real.mkdir()
    (tmp_path / "wk").symlink_to(real)
    line = refused(assignment(tmp_path, "wk"))
    assert "symbolic link" in line
    assert (tmp_path / "wk").is_symlink() and os.readlink(tmp_path / "wk") == str(real)
    assert names(tmp_path) == (["wk"] if dangling else ["real", "wk"]) and (dangling or names(real) == [])


@pytest.mark.parametrize("name, env", [(b"wk\xff", {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "0"}),
                                       ("wk\u00e9".encode(), {"PYTHONIOENCODING": "ascii"})],
                         ids=["not UTF-8", "not ASCII"])
def test_a_name_the_terminal_cannot_print_is_refused_before_any_work(tmp_path, name, env):
    line = refused(assignment(tmp_path, name, env=env))
    assert "encoding" in line
    assert names(tmp_path) == []


def small_disk(tmp_path, size, options=""):
    """The command prefix that runs a command with a tmpfs of size bytes mounted at tmp_path / 'disk' (a mount
    namespace of its own, in a user namespace: no root needed), and lists what the command left on it in
    tmp_path / 'left'; skips where the machine allows neither."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f'mount -t tmpfs -o size={size}{options} tmpfs "{disk}" || exit 9; '
              f'"$@"; status=$?; ls -A "{disk}" > "{tmp_path / "left"}"; exit $status')
    wrap = ("unshare", "-rm", "sh", "-c", script, "sh")
    if not shutil.which("unshare") or subprocess.run([*wrap, "true"], capture_output=True).returncode:
        pytest.skip("this machine cannot mount a small tmpfs in a user namespace (unshare -rm)")
    return disk, wrap


def test_a_folder_that_cannot_be_written_is_one_line(tmp_path):
    disk, wrap = small_disk(tmp_path, 1 << 20, ",ro")
    line = refused(assignment(tmp_path, str(disk / "wk"), wrap=wrap))
    assert str(disk) in line and "cannot be written" in line and (tmp_path / "left").read_text() == ""


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path):
    disk, wrap = small_disk(tmp_path, 1 << 20)
    line = refused(assignment(tmp_path, str(disk / "wk"), wrap=wrap))
    assert "no space left" in line.lower() and "nothing was written" in line
    assert (tmp_path / "left").read_text() == ""             # the tmpfs was empty when the command ended


@pytest.mark.slow
def test_a_disk_that_fills_up_at_the_autograder_zip_leaves_nothing(tmp_path):
    """Room for the edition, not for its zip: the edition and the points file this run wrote go again."""
    assert assignment(tmp_path, "reference", "--ops", "exp").returncode == 0
    pages = sum(-(-p.stat().st_size // 4096) * 4096 if p.is_file() else 4096         # a tmpfs counts pages
                for p in (tmp_path / "reference").rglob("*"))
    disk, wrap = small_disk(tmp_path, pages + 64 * 1024)
    line = refused(assignment(tmp_path, str(disk / "wk"), "--ops", "exp", "--autograder", wrap=wrap))
    assert "could not write the points file or the autograder" in line      # the edition was written first
    assert "no space left" in line.lower() and "nothing was written" in line
    assert (tmp_path / "left").read_text() == ""


@pytest.mark.slow
def test_hide_keeps_later_weeks_out_of_the_points_and_says_so(tmp_path):
    done = assignment(tmp_path, "wk", "--ops", "softmax", "--hide", "layer_norm,softmax")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "wk: 1 function to write" in out and \
        "  and blank as later weeks' work: layer_norm_backward, rms_norm_backward" in out     # rms_norm: its kin
    assert json.loads((tmp_path / "wk.points.json").read_text()) == {"softmax": 1}
    assert "--hide names later weeks' ops" in refused(assignment(tmp_path, "all", "--hide", "layer_norm"))


@pytest.mark.slow
def test_two_at_once_one_wins_and_the_other_fails_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "tinytransformer", "assignment", "wk", "--ops", "exp"]
    runs = [subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)]
    done = [subprocess.CompletedProcess(run.args, run.wait(300), *run.communicate()) for run in runs]
    assert sorted(d.returncode for d in done) == [0, 2], [d.stderr for d in done]
    loser = next(d for d in done if d.returncode == 2)
    assert "wk" in refused(loser)
    assert names(tmp_path) == ["wk", "wk.points.json"]       # no build folder left behind
    reference = tmp_path / "reference"
    assert assignment(tmp_path, "reference", "--ops", "exp").returncode == 0
    files = lambda root: sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    assert files(tmp_path / "wk") == files(reference)
