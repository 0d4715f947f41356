"""The process one submission's backward passes run in (started by isolation.py in the sandbox, never imported by the library).

    python -I -S child.py TREE NUMPY_HOME INPUTS < job (JSON)    > answers (messages)

It runs from TREE, a copy of the instructor's package whose backward passes
are all stubs (no reference solution is in this process), limits its own
memory, CPU time, files and processes, reads the trials' (dout, cache) pairs
from INPUTS, defines the student's functions (the job on stdin: their
sources only) in the modules of TREE, and calls them. For each op it writes
a message to its stdout: a line 'OP LENGTH', then an .npz of what each call
returned or what it raised (the student's own prints go to /dev/null). The
instructor's process judges those answers; nothing here decides a grade, so
nothing the student's code does here can change one. The sandbox is the wall;
an audit hook is a second layer: it keeps the student's code from opening
files outside TREE, NumPy and the standard library, and from starting
processes, sending signals or loading libraries.
"""
import ctypes
import io
import json
import os
import resource
import sys
import traceback

FORBIDDEN_EVENTS = ("subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.system", "os.kill",
                    "os.killpg", "signal.", "ctypes.", "socket.", "shutil.", "os.startfile", "pty.", "webbrowser.")
FILE_EVENTS = ("os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
               "os.link", "os.symlink", "os.utime", "os.chdir")


def within(path, folder):
    """True when path is folder or a path inside it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def guard(readable, forbidden):
    """The audit hook: reads only under `readable`, never under `forbidden`; no writes, no file changes."""
    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int):
                return
            path = os.path.realpath(os.fsdecode(path))
            writing = (mode is not None and any(c in mode for c in "wax+")) or \
                (mode is None and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
            if not writing and any(within(path, r) for r in readable) and not any(within(path, f) for f in forbidden):
                return
            raise PermissionError(f"a backward pass may not open {path} here")
        if event.startswith(FORBIDDEN_EVENTS):
            raise PermissionError(f"a backward pass may not do {event} here")
        if event in FILE_EVENTS:
            raise PermissionError(f"a backward pass may not do {event} here")
    return hook


def define(function, modules):
    """The student's function (its source only), defined in the module it belongs to; or the problem."""
    source = "\n" * (function["line"] - 1) + function["source"]        # line numbers as in the student's file
    module = modules[function["module"]]
    if "." in function["qualname"]:                                   # Tape.backward: a method
        namespace = dict(vars(module))
        exec(compile(source, function["file"], "exec"), namespace)
        return namespace[function["qualname"].split(".")[1]]
    exec(compile(source, function["file"], "exec"), vars(module))
    return vars(module)[function["qualname"]]


def install(function, qualname, module, stub):
    """Put the student's function where the stub was: its class, or every module that holds the stub."""
    if "." in qualname:
        owner, name = qualname.split(".")
        setattr(getattr(module, owner), name, function)
        return
    for other in [m for name, m in sys.modules.items() if name.startswith("tinytransformer")]:
        for name, value in list(vars(other).items()):
            if value is stub:
                setattr(other, name, function)


def answer(call, sources):
    """{"grads": outline} of what call() returned, or {"raised"|"not written": message, "where": line}."""
    from .op_grading import NOT_WRITTEN, BackwardFailed
    try:
        return {"value": call()}
    except BackwardFailed as failed:               # the tape's replay, run by tape_grading.run_trial
        kind = "not written" if failed.status == NOT_WRITTEN else "raised"
        return {kind: failed.problem.removeprefix("raised ")[:500], "where": failed.where[:300]}
    except NotImplementedError as error:
        return {"not written": str(error) or "NotImplementedError", "where": where(error, sources)}
    except BaseException as error:                 # SystemExit and KeyboardInterrupt too: the op fails, no more
        return {"raised": f"{type(error).__name__}: {error}"[:500], "where": where(error, sources)}


def answer_each(calls, sources):
    """The answers of the calls in order, up to the first that does not return."""
    answers = []
    for call in calls:
        answers.append(answer(call, sources))
        if "value" not in answers[-1]:
            break
    return answers


def where(error, sources):
    """'tinytransformer/ops/softmax.py:30: return (out @ dout,)': the student's line it raised on."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename in sources]
    if not frames:
        return ""
    frame = frames[-1]
    text = sources[frame.filename].get(frame.lineno, "").strip()
    return f"{frame.filename}:{frame.lineno}: {text}"[:300]


def limit(memory, cpu_seconds):
    """This process's limits, before any student code: memory, CPU, no file written, no process started,
    few files open, no core dump; and death when the grader dies (Linux)."""
    for name, value in (("RLIMIT_AS", memory), ("RLIMIT_CPU", cpu_seconds), ("RLIMIT_FSIZE", 0),
                        ("RLIMIT_NPROC", 1), ("RLIMIT_NOFILE", 64), ("RLIMIT_CORE", 0)):
        resource.setrlimit(getattr(resource, name), (value, value))
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, 9)                         # PR_SET_PDEATHSIG: SIGKILL when the parent dies
        if os.getppid() == 1 and os.getpid() != 2:            # the parent died before: not in a sandbox's own PIDs
            os._exit(1)


def sender():
    """send(name, data): a message on the real stdout; the student's prints (fd 1 and 2) go to /dev/null."""
    answers, write = os.dup(1), os.write          # held here: a student's code may replace this module's names
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)

    def send(name, data):
        message = f"{name} {len(data)}\n".encode() + data
        while message:
            message = message[write(answers, message):]
    return send


def npz(outline, arrays):
    """The bytes of an .npz holding outline and arrays (wire.save into memory)."""
    from tinytransformer.course import wire
    buffer = io.BytesIO()
    wire.save(buffer, outline, arrays)
    return buffer.getvalue()


def main(tree, numpy_home, inputs_folder):
    """Run one job: limit this process, define the student's functions, call them, send what they returned."""
    spec = json.loads(sys.stdin.buffer.read())
    limit(spec["memory"], spec["cpu"])
    send = sender()
    import importlib
    import sysconfig
    from tinytransformer.course import tape_grading, wire
    from tinytransformer import tensor

    inputs = {op: wire.load(os.path.join(inputs_folder, f"{op}.npz")) for op in spec["ops"]}
    modules = {name: importlib.import_module(name) for name in spec["modules"]}
    readable = [os.path.realpath(p) for p in (tree, numpy_home, sysconfig.get_paths()["stdlib"],
                                               sysconfig.get_paths()["platstdlib"])]
    sys.addaudithook(guard(readable, [os.path.realpath(p) for p in spec["forbidden"]]))
    send("ready", b"")

    sources = {}                                    # {file: {line number: the student's line}}
    for f in spec["functions"].values():
        sources.setdefault(f["file"], {}).update(enumerate(f["source"].splitlines(), start=f["line"]))
    stubs = {op: getattr(modules[f["module"]], f["qualname"], None) for op, f in spec["functions"].items()}
    defined = {op: answer(lambda: define(function, modules), sources) for op, function in spec["functions"].items()}
    for op, function in spec["functions"].items():       # all first: attention's backward calls softmax's
        if "value" in defined[op]:
            install(defined[op]["value"], function["qualname"], modules[function["module"]], stubs[op])
    for op in spec["ops"]:
        function, (outline, arrays) = spec["functions"][op], inputs[op]
        if "value" not in defined[op]:
            answers = [defined[op]]
        elif op == "tape":
            calls = [lambda t=t: tape_grading.run_trial(tape_grading.TapeTrial(
                t["case"], "", dict(zip(t["names"], wire.decode(t["arrays"], arrays))), {}, 0.0), tensor.Tape.backward)
                for t in outline]
            answers = answer_each(calls, sources)
        else:
            backward = getattr(modules[function["module"]], function["qualname"])
            calls = [lambda pair=wire.decode(item, arrays): (backward(*pair), *pair) for item in outline]
            answers = answer_each(calls, sources)
        written = {}
        outlines = [dict(a, value=wire.encode(a["value"], written)) if "value" in a else a for a in answers]
        send(op, npz(outlines, written))


if __name__ == "__main__":
    tree, numpy_home, inputs_folder = sys.argv[1:4]
    sys.path[:0] = [tree, numpy_home]
    from tinytransformer.course.child import main as run
    run(tree, numpy_home, inputs_folder)
