"""Running a submission's backward passes in a sandboxed process, with time, memory and size limits.

    with GradingRun(ops, seed) as run:              # the trials, made once by the instructor's library
        found = run.run(functions, timeout=10)      # {op: [answer, ...]} or {op: Stopped(status, problem)}

A GradingRun makes every op's trials (op_grading.trials, tape_grading.tape_trials)
from its seed and writes their (dout, cache) pairs (wire.py: .npz and JSON,
no pickle) beside a copy of the package whose backward passes are all stubs.
run() starts child.py in the sandbox (sandbox.py), which sees those two
folders read-only and nothing of the instructor's; the student's functions go
in on its stdin, its answers come back on its stdout, one message per op, read
with a size cap and checked (numeric arrays of bounded size) before anything
else looks at them. An op whose answer does not come within `timeout`
seconds is a timeout; one during which the process ends (a crash, the memory
limit) or sends what cannot be read is an error; either way a new process
takes the ops after it, until the submission's whole time (`wall_time`) is
spent. Nothing in the answers decides a grade by itself: submission.py judges
them in this process.
"""
import io
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import sandbox, wire
from .op_grading import PROJECT, trials
from .stubs import backward_names, stub_source
from .tape_grading import TAPE, tape_trials

PACKAGE = Path(__file__).resolve().parents[1]
CHILD = Path("tinytransformer/course/child.py")
MEMORY = 2 ** 30                       # bytes of address space a submission's process may use
ANSWER_BYTES = 2 ** 24                 # the largest answer message for one op
STARTUP = 20.0                         # seconds a process may take to start, besides the op's timeout
HEADER = 200                           # the longest header line of a message


class Stopped(NamedTuple):
    """A submission's run that ended before it answered: 'timeout' or 'error', and the problem in a line."""
    status: str                        # "timeout" or "error"
    problem: str


class BadAnswer(Exception):
    """A message from the child that is not an answer: the op's error, in a line."""


class GradingRun:
    """The trials of `ops` (TAPE for Tape.backward), drawn from seed, written once for every submission of a class;
    box: the sandbox.Sandbox the submissions run in (default: the strongest that starts here)."""

    def __init__(self, ops, seed=0, box=None):
        self.ops, self.seed = list(ops), seed
        self.box = box or sandbox.choose()
        self.trials = {op: tape_trials(seed) if op == TAPE else trials(op, seed) for op in self.ops}
        self.running, self.lock, self.closed = set(), threading.Lock(), False

    def __enter__(self):
        sweep(Path(tempfile.gettempdir()))
        self.folder = Path(sandbox.work_folder(FOLDER))        # uid 65534 may read the stub tree and the trials
        self.package_mode = PACKAGE.stat().st_mode
        (self.folder / "owner").write_text(json.dumps({"pid": os.getpid(), "started": started(os.getpid()),
                                                       "package_mode": self.package_mode}))
        if self.box.kind == "user":                            # ... but not the package
            PACKAGE.chmod(self.package_mode & ~0o007)
        self.tree, self.inputs = self.folder / "tree", self.folder / "inputs"
        stub_tree(self.tree)
        self.inputs.mkdir()
        for op, found in self.trials.items():
            arrays = {}
            if op == TAPE:
                outline = [{"case": t.case, "names": list(t.arrays),
                            "arrays": wire.encode(list(t.arrays.values()), arrays)} for t in found]
            else:
                outline = [wire.encode((t.dout, t.cache), arrays) for t in found]
            wire.save(self.inputs / f"{op}.npz", outline, arrays)
        return self

    def __exit__(self, *exc):
        with self.lock:
            self.closed = True
            for process in self.running:            # its thread reaps it, reading the end of its answers
                signal_session(process)
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.box.kind == "user":
            PACKAGE.chmod(self.package_mode)

    def run(self, functions, timeout=10.0, memory=MEMORY):
        """{op: [answer dict, ...] | Stopped} for each op of `functions` ({op: the student's function:
        qualname, module, file, line, source}), run in sandboxed processes under the limits."""
        remaining = [op for op in self.ops if op in functions]
        found, end = {}, time.monotonic() + wall_time(timeout, len(remaining))
        while remaining:
            self._one_process(functions, remaining, found, timeout, memory, end)
            remaining = [op for op in remaining if op not in found]
        return found

    def _one_process(self, functions, ops, found, timeout, memory, end):
        """Run the child on ops, putting each answer (or the Stopped of the first op without one) in found."""
        modules = sorted({functions[op]["module"] for op in ops} | {"tinytransformer.ops"})
        files = {path: text for op in ops for path, text in functions[op].get("files", {}).items()}
        spec = dict(ops=ops, functions={op: {k: v for k, v in functions[op].items() if k != "files"} for op in ops},
                    files=files, modules=modules, memory=memory,
                    cpu=int(min(end - time.monotonic(), timeout * len(ops))) + 10,
                    forbidden=[str(p) for p in forbidden()])
        numpy_home = str(Path(np.__file__).resolve().parents[1])
        with self.lock:
            if self.closed:
                raise RuntimeError("the grading run has ended")
            process = self.box.popen([os.path.realpath(sys.executable), "-I", "-S", str(self.tree / CHILD),
                                      str(self.tree), numpy_home, str(self.inputs)], [self.tree, self.inputs],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            self.running.add(process)
        try:
            send(process, json.dumps(spec).encode())
            reader = Reader(process.stdout.fileno())
            expected = ["ready", *ops]
            for index, name in enumerate(expected):
                op = ops[max(index - 1, 0)]
                wait = timeout + (STARTUP if name == "ready" else 0)
                try:
                    answer = reader.message(name, min(time.monotonic() + wait, end))
                    if name != "ready":
                        found[op] = checked(decoded(answer), self.trials[op])
                except TimeoutError:
                    found[op] = Stopped("timeout", f"no answer within {timeout:g} s" if time.monotonic() < end
                                        else "the submission's whole time ran out before this op answered")
                    return
                except EOFError:
                    found[op] = Stopped("error", f"the process ended ({ending(process)}) during this op")
                    return
                except BadAnswer as error:
                    found[op] = Stopped("error", f"its answer could not be read: {error}")
                    return
        finally:
            kill(process)
            with self.lock:
                self.running.discard(process)


FOLDER = "tinytransformer-grade-"     # a grading run's temporary folder, in the temporary folder


def sweep(temporary):
    """Remove the folders of grading runs whose process is gone (killed with SIGKILL, which no cleanup survives),
    and give the package back the permissions such a run took from it, when no other run is going on."""
    stale, live = [], 0
    for folder in temporary.glob(FOLDER + "*"):
        try:
            owner = json.loads((folder / "owner").read_text())
            gone = started(owner["pid"]) != owner["started"]
        except (OSError, ValueError, TypeError, KeyError):      # no owner yet: a run starting now, unless old
            owner, gone = {}, age(folder) > 3600
        if gone:
            stale.append((folder, owner))
        live += not gone
    for folder, owner in stale:
        mode = owner.get("package_mode")
        if not live and isinstance(mode, int) and PACKAGE.stat().st_mode != mode:
            PACKAGE.chmod(mode)
        shutil.rmtree(folder, ignore_errors=True)


def age(path):
    """Seconds since path last changed (0 when it is gone)."""
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0


def started(pid):
    """The start time of process pid (clock ticks since boot, /proc/PID/stat), None if no such process: a pid
    and its start time name one process, even after the pid is reused."""
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, TypeError, ValueError):
        return None
    return int(stat.rpartition(")")[2].split()[19])


def wall_time(timeout, ops):
    """Seconds one submission may take in all: every op's timeout, and two processes' start."""
    return timeout * ops + STARTUP * 2


def send(process, data):
    """Write data to the child's stdin and close it; a child that died first has its answer read as an ending."""
    try:
        process.stdin.write(data)
        process.stdin.close()
    except OSError:
        pass


def signal_session(process):
    """SIGKILL to the process and everything in its session (the sandbox's own processes die with it)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            process.kill()


def kill(process):
    """Kill the process and its session, reap it, close its output."""
    signal_session(process)
    process.wait()
    process.stdout.close()


def ending(process):
    """'exit status 1' or 'killed by SIGSEGV': how the process ended (it is reaped first)."""
    try:
        code = process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return "it closed its output"
    if code < 0 or code - 128 in signal.valid_signals():      # bubblewrap passes a signal on as 128 + its number
        return f"killed by {signal.Signals(abs(code) % 128).name}"
    return f"exit status {code}"


class Reader:
    """Messages on a pipe, read against a deadline: a header line 'NAME LENGTH', then LENGTH bytes."""

    def __init__(self, descriptor):
        self.descriptor, self.buffer = descriptor, bytearray()

    def message(self, name, deadline):
        """The bytes of the next message, which must be called name; TimeoutError, EOFError or BadAnswer."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > HEADER:
                raise BadAnswer("a header line too long")
            self.more(deadline)
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        parts = line.decode("ascii", errors="replace").split(" ")
        if len(parts) != 2 or parts[0] != name or not parts[1].isdigit():
            raise BadAnswer(f"expected the answer of {name}, got a header {line[:40]!r}")
        length = int(parts[1])
        if length > ANSWER_BYTES:
            raise BadAnswer(f"{length} bytes, over the limit of {ANSWER_BYTES}")
        while len(self.buffer) < length:
            self.more(deadline)
        data, self.buffer = bytes(self.buffer[:length]), self.buffer[length:]
        return data

    def more(self, deadline):
        """Read what the pipe holds into the buffer, waiting until deadline at most."""
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.descriptor], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(self.descriptor, 1 << 16)
        if not chunk:
            raise EOFError
        self.buffer += chunk


def decoded(data):
    """The answers in a message (an .npz in memory), every member checked before any is read; else BadAnswer."""
    if not data:
        return []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if any(m.compress_type != zipfile.ZIP_STORED for m in members) or \
                    sum(m.file_size for m in members) > len(data):
                raise BadAnswer("a compressed or oversized member")
        outline, arrays = wire.load(io.BytesIO(data))
        return [dict(a, value=wire.decode(a["value"], arrays)) if "value" in a else a for a in outline]
    except BadAnswer:
        raise
    except Exception as error:                      # whatever the bytes hold, they are only data
        raise BadAnswer(type(error).__name__) from None


def checked(answers, trials):
    """answers, if each is a dict of strings and numeric arrays no larger than the trials' own; else BadAnswer."""
    largest = max(x.size for t in trials for x in arrays_in(t) if isinstance(x, np.ndarray))
    if not isinstance(answers, list) or len(answers) > len(trials) or not all(isinstance(a, dict) for a in answers):
        raise BadAnswer("not a list of answers, one per case")
    for answer in answers:
        for value in arrays_in(answer.get("value")):
            if isinstance(value, np.ndarray) and (value.dtype.kind not in "biufc" or value.ndim > 8
                                                  or value.size > 64 * largest):
                raise BadAnswer(f"an array of {value.dtype} {value.shape}: gradients are numbers "
                                "of the inputs' sizes")
    return answers


def arrays_in(value):
    """Every leaf of value, through tuples, lists, dicts and a trial's fields."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in arrays_in(item)]
    if isinstance(value, dict):
        return arrays_in(list(value.values()))
    if hasattr(value, "_fields"):
        return arrays_in(tuple(value))
    return [value]


def forbidden():
    """What the child may never read: the instructor's package, and its project when run from a clone."""
    found = [PACKAGE]
    if (PROJECT / "pyproject.toml").exists() and (PROJECT / "tinytransformer").resolve() == PACKAGE:
        found.append(PROJECT)
    return found


def stub_tree(target):
    """The package's .py files under target/tinytransformer, every backward pass (and Tape.backward) a stub,
    course/mistakes.py left out, and an __init__ that imports nothing."""
    for path in PACKAGE.rglob("*.py"):
        relative = Path("tinytransformer") / path.relative_to(PACKAGE)
        if "__pycache__" in path.parts or path.name == "mistakes.py":
            continue
        source = path.read_text()
        if path == PACKAGE / "__init__.py":
            source = '"""The instructor\'s package, its backward passes stubs: a submission\'s process."""\n'
        elif path.parent == PACKAGE / "ops" and backward_names(source):
            source = stub_source(source, relative.as_posix(), set(backward_names(source)))
        elif path == PACKAGE / "tensor.py":
            source = stub_source(source, relative.as_posix(), {"Tape.backward"})
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_text(source)
