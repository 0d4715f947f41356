"""Running a submission's backward passes in a process of its own, with a time and a memory limit.

    with Batch(ops) as batch:                       # the trials, made once by the instructor's library
        found = batch.run(functions, timeout=10)    # {op: [answer, ...]} or {op: Stopped(status, problem)}

A Batch makes every op's trials (op_grading.trials, tape_grading.tape_trials)
and writes their (dout, cache) pairs where a child process can read them
(wire.py: .npz and JSON, no pickle), beside a copy of the package whose
backward passes are all stubs. run() starts child.py on one submission's
functions and collects its answers op by op. An op that gives no answer
within `timeout` seconds is a timeout; one during which the process ends
(os._exit, a crash, the memory limit) is an error; either way a new process
takes the ops after it. Nothing in the answers decides a grade by itself:
submission.py judges them in this process.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import wire
from .op_grading import PROJECT, trials
from .stubs import backward_names, stub_source
from .tape_grading import TAPE, tape_trials

PACKAGE = Path(__file__).resolve().parents[1]
CHILD = Path("tinytransformer/course/child.py")
MEMORY = 2 ** 30                       # bytes of address space a submission's process may use
POLL = 0.005                           # seconds between looks at a running process


class Stopped(NamedTuple):
    """A submission's run that ended before it answered: 'timeout' or 'error', and the problem in a line."""
    status: str                        # "timeout" or "error"
    problem: str


class Batch:
    """The trials of `ops` (TAPE for Tape.backward), written once for every submission of a class."""

    def __init__(self, ops, seed=0):
        self.ops = list(ops)
        self.trials = {op: tape_trials(seed) if op == TAPE else trials(op, seed) for op in self.ops}

    def __enter__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="tinytransformer-grade-"))
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
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, functions, timeout=10.0, memory=MEMORY):
        """{op: [answer dict, ...] | Stopped} for each op of `functions` ({op: the student's function:
        qualname, module, file, line, source}), run in child processes under the limits."""
        job = Path(tempfile.mkdtemp(dir=self.folder, prefix="job-"))
        (job / "out").mkdir()
        found, remaining = {}, [op for op in self.ops if op in functions]
        try:
            while remaining:
                status = self._one_process(job, functions, remaining, timeout, memory)
                for op in remaining:
                    if op not in found and (job / "out" / f"{op}.npz").exists():
                        found[op] = read_answers(job / "out" / f"{op}.npz", op)
                pending = [op for op in remaining if op not in found]
                if pending:                                  # the first op without an answer stopped the process
                    found[pending[0]] = (Stopped("timeout", f"no answer within {timeout:g} s") if status is None
                                         else Stopped("error", f"the process ended (exit status {status}) "
                                                               "during this op"))
                remaining = pending[1:]
        finally:
            shutil.rmtree(job, ignore_errors=True)
        return found

    def _one_process(self, job, functions, ops, timeout, memory):
        """Run the child on ops until it exits (its exit status) or an op takes over timeout (None)."""
        modules = sorted({f["module"] for f in functions.values()} | {"tinytransformer.ops"})
        spec = dict(ops=ops, functions=functions, modules=modules,
                    inputs=str(self.inputs), forbidden=[str(p) for p in forbidden()])
        (job / "job.json").write_text(json.dumps(spec))
        cpu = int(timeout * len(ops)) + 10
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(self.tree / CHILD), str(job), str(self.tree),
             str(Path(np.__file__).resolve().parents[1]), str(memory), str(cpu)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PATH": os.defpath},
            start_new_session=True)
        answered, last = 0, time.monotonic()
        try:
            while process.poll() is None:
                now = len(list((job / "out").glob("*.npz")))
                if now > answered:
                    answered, last = now, time.monotonic()
                elif time.monotonic() - last > timeout:
                    return None
                time.sleep(POLL)
            return process.returncode
        finally:
            if process.poll() is None:
                os.killpg(process.pid, 9)
            process.wait()


def read_answers(path, op):
    """The child's answers for one op, decoded; an unreadable file is the op's error."""
    try:
        outline, arrays = wire.load(path)
        return [dict(a, value=wire.decode(a["value"], arrays)) if "value" in a else a for a in outline]
    except Exception as error:                      # whatever the file holds, it is only data
        return Stopped("error", f"its answers could not be read ({type(error).__name__})")


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
