"""The sandbox's last walls, tried as a submission would: another uid's files, the instructor's keyring, the
network, outliving grade, and NumPy inside a system site-packages.

The commands run Debian's /usr/bin/python3, which uid 65534 can reach (this environment's own Python sits under
/root, which it cannot); each wall is shown closed in the sandbox and open without it, so no check passes by
accident.
"""
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from tinytransformer.course import sandbox

PYTHON = "/usr/bin/python3"
ROOT = os.geteuid() == 0
BWRAP = sandbox.find_bwrap()
needs_root = pytest.mark.skipif(not ROOT or not os.access(PYTHON, os.X_OK), reason="needs root and /usr/bin/python3")


def run(box, code, read_only=(), timeout=60):
    """(exit status, stdout) of Debian's Python running code in box."""
    process = box.popen([PYTHON, "-I", "-S", "-c", textwrap.dedent(code)], read_only, stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = process.communicate(timeout=timeout)
    return process.returncode, out.decode(errors="replace")


@pytest.fixture
def shared():
    """A folder uid 65534 may list, as a grading run's is, holding a file only root may read."""
    folder = Path(sandbox.work_folder("tinytransformer-test-"))
    (folder / "root-only").write_text("root's secret")
    (folder / "root-only").chmod(0o600)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def debian_python(monkeypatch):
    """bwrap's view built for /usr/bin/python3: nothing of this environment's Python (under /root) bound."""
    monkeypatch.setattr(sandbox, "python_paths", lambda: [])
    monkeypatch.setattr(sandbox, "numpy_paths", lambda: [])


def boxes(*kinds):
    made = {"bubblewrap as nobody": sandbox.Sandbox("bubblewrap", BWRAP, as_nobody=True),
            "bubblewrap as root": sandbox.Sandbox("bubblewrap", BWRAP), "user": sandbox.Sandbox("user"),
            "none": sandbox.Sandbox("none")}
    return [pytest.param(made[k], id=k, marks=[pytest.mark.skipif(k.startswith("bubblewrap") and not BWRAP,
                                                                  reason="no bwrap")]) for k in kinds]


READ = """
    try:
        print(open({path!r}).read())
    except OSError as error:
        print(type(error).__name__)
"""


@needs_root
@pytest.mark.parametrize("box", boxes("bubblewrap as nobody", "user"))
def test_a_file_only_root_may_read_stays_closed_in_a_bound_folder(box, shared, debian_python):
    status, out = run(box, READ.format(path=str(shared / "root-only")) + "    import os; print('uid', os.getuid())",
                      [shared])
    assert status == 0, out
    assert "PermissionError" in out and "root's secret" not in out and "uid 65534" in out


@needs_root
@pytest.mark.parametrize("box", boxes("bubblewrap as root", "none"))
def test_without_uid_65534_on_the_host_the_same_file_is_read(box, shared, debian_python):
    """What describe() warns of: bwrap started by root maps the command's uid to root's."""
    status, out = run(box, READ.format(path=str(shared / "root-only")), [shared])
    assert status == 0 and "root's secret" in out, out
    if box.kind == "bubblewrap":
        assert "uid 0 on the host" in box.describe()


def test_choose_prefers_bubblewrap_as_nobody_and_says_when_it_cannot(monkeypatch):
    tried = []
    monkeypatch.setattr(sandbox, "probe", lambda box: tried.append((box.kind, box.as_nobody, box.network))
                        or ("" if (box.kind, box.as_nobody) == ("bubblewrap", False) else "Permission denied"))
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: "/usr/bin/bwrap")
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    sandbox.choose.cache_clear()
    try:
        box = sandbox.choose()
    finally:
        sandbox.choose.cache_clear()
    assert tried == [("bubblewrap", True, False), ("bubblewrap", False, False)]
    assert box.kind == "bubblewrap" and "uid 0 on the host" in box.describe()
    assert sandbox.Sandbox("bubblewrap", "b", as_nobody=True).describe() == "bubblewrap"
    assert "can reach the network" in sandbox.Sandbox("user", network=True).describe()


KEYRING = """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    found = libc.syscall({keyctl}, 6, {serial}, None, 0)         # KEYCTL_DESCRIBE the instructor's key
    print("keyctl", found, ctypes.get_errno())
    try:
        print("listed" if "grader-secret" in open("/proc/keys").read() else "unlisted")
    except OSError:                                               # bubblewrap: /proc/keys covered
        print("unlisted")
"""


@needs_root
@pytest.mark.parametrize("box", boxes("bubblewrap as nobody", "bubblewrap as root", "user", "none"))
def test_the_instructors_session_keyring_is_out_of_reach(box, shared, debian_python):
    """A key in grade's session keyring (Kerberos and AFS keep tickets there): the command can neither describe
    it by its serial nor list it, in any sandbox; without one it does both."""
    machine = os.uname().machine
    if machine not in sandbox.SECCOMP:
        pytest.skip(f"no syscall numbers for {machine}")
    numbers = sandbox.SECCOMP[machine][1]
    code = f"""
        import ctypes, subprocess, sys
        sys.path.insert(0, {str(Path(sandbox.__file__).parents[2])!r})
        from tinytransformer.course import sandbox
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.syscall({numbers['keyctl']}, 1, None) > 0                          # a session keyring of its own
        serial = libc.syscall({numbers['add_key']}, b"user", b"grader-secret", b"ticket", 6, -3)
        assert serial > 0, ctypes.get_errno()
        box = sandbox.Sandbox({box.kind!r}, {box.bwrap!r}, as_nobody={box.as_nobody!r})
        sandbox.python_paths = sandbox.numpy_paths = lambda: []
        code = {KEYRING!r}.format(keyctl={numbers['keyctl']}, serial=serial)
        process = box.popen([{PYTHON!r}, "-I", "-S", "-c", __import__("textwrap").dedent(code)], stdout=subprocess.PIPE)
        print(process.communicate()[0].decode())
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if box.kind == "none":
        assert "listed" in out.stdout.split() and "keyctl -1" not in out.stdout
    else:
        assert "unlisted" in out.stdout.split() and "keyctl -1 1" in out.stdout, out.stdout   # EPERM


CALLS = """
    import ctypes, os, threading
    libc = ctypes.CDLL(None, use_errno=True)
    def tried(name, *arguments):
        result = getattr(libc, name)(*arguments)
        print(name, "refused" if result == -1 and ctypes.get_errno() == 1 else "allowed")
    tried("syscall", {add_key}, b"user", b"x", b"y", 1, -3)
    tried("syscall", {request_key}, b"user", b"x", None, -3)
    tried("prctl", 1, 0, 0, 0, 0)                          # PR_SET_PDEATHSIG 0: outlive the parent
    tried("prctl", 1, 9, 0, 0, 0)                          # SIGKILL again: allowed
    tried("prctl", 15, b"renamed", 0, 0, 0)                # PR_SET_NAME: any other option is allowed
    try:
        os.fork()
        print("fork allowed")
    except OSError:
        print("fork refused")
    thread = threading.Thread(target=print, args=("a thread runs",))
    thread.start(); thread.join()
"""


@needs_root
@pytest.mark.parametrize("box", boxes("bubblewrap as nobody", "user"))
def test_the_filter_refuses_keys_new_processes_and_a_changed_death_signal(box, debian_python):
    numbers = sandbox.SECCOMP.get(os.uname().machine, (0, {}))[1]
    if not numbers:
        pytest.skip("no syscall numbers here")
    status, out = run(box, CALLS.format(**numbers))
    assert status == 0, out
    assert out.split("\n")[:5] == ["syscall refused", "syscall refused", "prctl refused", "prctl allowed",
                                   "prctl allowed"]
    assert "fork refused" in out and "a thread runs" in out


@needs_root
def test_what_the_command_execs_keeps_its_uid_and_filter(debian_python):
    """The command may execve what it sees (the threat model says why that is harmless): the new program is
    still uid 65534, still refused fork, and a setuid-root program gains nothing (no_new_privs)."""
    code = """
        import os
        os.execv("/usr/bin/python3", ["python3", "-I", "-S", "-c",
                 "import os\\ntry:\\n    os.fork()\\n    print('fork allowed')\\n"
                 "except OSError:\\n    print('fork refused')\\n"
                 "print('uid', os.getuid(), os.geteuid())\\n"
                 "print([l for l in open('/proc/self/status') if l.startswith('NoNewPrivs')][0].split()[1])"])
    """
    status, out = run(sandbox.Sandbox("user"), code)
    assert status == 0 and out.split("\n")[:3] == ["fork refused", "uid 65534 65534", "1"], out


@needs_root
def test_the_user_sandbox_has_no_network_where_the_kernel_gives_it_a_namespace(debian_python):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    code = f"""
        import socket
        try:
            socket.create_connection(("127.0.0.1", {server.getsockname()[1]}), timeout=5)
            print("connected")
        except OSError as error:
            print("no network", error.errno)
    """
    try:
        confined, plain = (run(box, code) for box in (sandbox.Sandbox("user"), sandbox.Sandbox("none")))
    finally:
        server.close()
    assert plain == (0, "connected\n")
    assert confined[0] == 0 and confined[1].startswith("no network"), confined


@needs_root
def test_a_user_sandboxed_command_dies_with_grade_even_after_clearing_its_death_signal(tmp_path):
    """grade (a process here) starts the command, which tries to clear its parent-death signal; grade is killed
    with SIGKILL, which no cleanup survives; the command dies with it."""
    pids = tmp_path / "pid"
    code = f"""
        import subprocess, sys, time
        sys.path.insert(0, {str(Path(sandbox.__file__).parents[2])!r})
        from tinytransformer.course import sandbox
        sandbox.python_paths = sandbox.numpy_paths = lambda: []
        child = ("import ctypes, os, sys, time; ctypes.CDLL(None).prctl(1, 0, 0, 0, 0); "
                 "print(os.getpid(), flush=True); time.sleep(600)")
        process = sandbox.Sandbox("user").popen([{PYTHON!r}, "-I", "-S", "-c", child], stdout=subprocess.PIPE)
        open({str(pids)!r}, "w").write(process.stdout.readline().decode())
        time.sleep(600)
    """
    grade = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)])
    for _ in range(600):
        if pids.exists() and pids.read_text().strip():
            break
        time.sleep(0.1)
    pid = int(pids.read_text())
    os.kill(grade.pid, signal.SIGKILL)
    grade.wait()
    for _ in range(100):
        if not alive(pid):
            break
        time.sleep(0.05)
    assert not alive(pid)


def alive(pid):
    """True while pid runs (a zombie, which init reaps, counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not BWRAP or not ROOT, reason="needs bwrap, run as root")
def test_numpy_inside_a_hidden_site_packages_is_bound_and_nothing_beside_it(debian_python, monkeypatch):
    """NumPy in a system site-packages (Debian's python3-numpy, a pyenv build, a venv with system packages): the
    site-packages is shown empty, NumPy alone bound inside it. bwrap used to refuse: "Can't mkdir ...: Read-only
    file system"."""
    tree = Path(sandbox.work_folder("tinytransformer-test-"))
    try:
        packages = tree / "lib" / "python3" / "dist-packages"
        for name in ("numpy", "instructors_package"):
            (packages / name).mkdir(parents=True)
            (packages / name / "__init__.py").write_text(f"NAME = {name!r}\n")
        monkeypatch.setattr(sandbox, "hidden_paths", lambda: [str(packages)])
        monkeypatch.setattr(sandbox, "numpy_paths", lambda: [str(packages / "numpy")])
        monkeypatch.setattr(sandbox, "python_paths", lambda: [str(tree)])          # bound, as a pyenv build is
        code = (f"import os, sys; sys.path.insert(0, {str(packages)!r}); import numpy; "
                f"print(sorted(os.listdir({str(packages)!r})), numpy.NAME)")
        status, out = run(sandbox.Sandbox("bubblewrap", BWRAP), code)
        assert (status, out) == (0, "['numpy'] numpy\n")
    finally:
        shutil.rmtree(tree)


@pytest.mark.slow
def test_a_tree_left_by_grade_killed_with_sigkill_is_removed_by_the_next_grade(tmp_path):
    """kill -9 runs no cleanup: the grading run's temporary tree (the stub package, the cases) stays behind, and
    the next `grade` removes it before it makes its own."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_class_grading import library_files, with_function, write
    looping = with_function(library_files(), "add", "def add_backward(dout, cache):\n    while True:\n        pass\n")
    submission = write(tmp_path / "looping", looping)
    (tmp_path / "points.json").write_text('{"add": 1}')
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = {"PYTHONPATH": str(Path(sandbox.__file__).parents[2]), "TMPDIR": str(temporary), "PATH": os.environ["PATH"],
           "OPENBLAS_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "tinytransformer", "grade", "--points", str(tmp_path / "points.json")]
    flags = [] if sandbox.choose(allow_none=True).kind != "none" else ["--no-sandbox"]
    grade = subprocess.Popen([*command, str(submission), *flags], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(600):
            trees = [p for p in temporary.glob("tinytransformer-grade-*") if (p / "inputs").is_dir()]
            if trees:
                break
            time.sleep(0.1)
        assert trees, "grade made no temporary tree"
        time.sleep(1)
        os.kill(grade.pid, signal.SIGKILL)
        grade.wait()
    finally:
        try:
            os.killpg(grade.pid, signal.SIGKILL)
        except OSError:
            pass
    assert trees[0].is_dir()                                     # left behind
    done = subprocess.run([*command, str(tmp_path / "missing"), *flags], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert not trees[0].exists() and not list(temporary.iterdir())
