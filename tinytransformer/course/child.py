"""The process one submission's backward passes run in (started by isolation.py, never imported by the library).

    python -I -S child.py JOB TREE NUMPY_HOME

It runs from TREE, a copy of the instructor's package whose backward passes
are all stubs (no reference solution is in this process), limits its own
memory and CPU time, reads the trials' (dout, cache) pairs, defines the
student's functions (JOB/job.json: their sources only) in the modules of
TREE, and calls them. For each op it writes JOB/out/OP.npz: what each call
returned, or what it raised. The instructor's process judges those answers;
nothing here decides a grade, so nothing the student's code does here can
change one. An audit hook keeps the student's code from opening files
outside TREE, NumPy, the standard library and JOB/out, and from starting
processes, sending signals or loading libraries.
"""
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


def guard(readable, writable, forbidden):
    """The audit hook: reads only under `readable`, never under `forbidden`; writes only under `writable`."""
    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int):
                return
            path = os.path.realpath(os.fsdecode(path))
            writing = (mode is not None and any(c in mode for c in "wax+")) or \
                (mode is None and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
            if within(path, writable) or (not writing and any(within(path, r) for r in readable)
                                          and not any(within(path, f) for f in forbidden)):
                return
            raise PermissionError(f"a backward pass may not open {path} here")
        if event.startswith(FORBIDDEN_EVENTS):
            raise PermissionError(f"a backward pass may not do {event} here")
        if event in FILE_EVENTS:
            paths = [os.path.realpath(os.fsdecode(a)) for a in args if isinstance(a, (str, bytes))]
            if not paths or not all(within(p, writable) for p in paths):
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


def main(job, tree, numpy_home, memory, cpu_seconds):
    """Run one job: limit memory and CPU time, define the student's functions, call them, write what they returned."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_FSIZE, (2 ** 26, 2 ** 26))
    import importlib
    import sysconfig
    from tinytransformer.course import tape_grading, wire
    from tinytransformer import tensor

    with open(os.path.join(job, "job.json")) as f:
        spec = json.load(f)
    inputs = {op: wire.load(os.path.join(spec["inputs"], f"{op}.npz")) for op in spec["ops"]}
    modules = {name: importlib.import_module(name) for name in spec["modules"]}
    out = os.path.realpath(os.path.join(job, "out"))
    readable = [os.path.realpath(p) for p in (tree, numpy_home, sysconfig.get_paths()["stdlib"],
                                               sysconfig.get_paths()["platstdlib"])]
    sys.addaudithook(guard(readable, out, [os.path.realpath(p) for p in spec["forbidden"]]))

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
        wire.save(os.path.join(out, f"{op}.part"), outlines, written)
        os.replace(os.path.join(out, f"{op}.part"), os.path.join(out, f"{op}.npz"))


if __name__ == "__main__":
    job, tree, numpy_home, memory, cpu_seconds = sys.argv[1:6]
    sys.path[:0] = [tree, numpy_home]
    from tinytransformer.course.child import main as run
    run(job, tree, numpy_home, int(memory), int(cpu_seconds))
