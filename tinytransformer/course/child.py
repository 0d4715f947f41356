"""The process one submission's backward passes run in (started by isolation.py in the sandbox, never imported by the library).

    python -I -S child.py TREE NUMPY_HOME INPUTS < job (JSON)    > answers (messages)

It runs from TREE, a copy of the instructor's package whose backward passes
are all stubs (no reference solution is in this process), limits its own
memory, CPU time, files and processes, reads the trials' (dout, cache) pairs
from INPUTS, and imports the student's files (the job on stdin: the texts of
the package's .py files, but the grader's own) as Python imports them, each in
place of TREE's module of that name: the files holding the functions to write
and those TREE had imported at once, any other (a helper module of the
student's own) when one of them imports it. It calls, for each op, the object the
module's name holds once the file has run (Tape.backward: the student's Tape
class's), on the caches the instructor's forward made; the tape's replay runs
on the student's own tensor.py. A file that raises while it runs does not
import (so does one that runs over IMPORT_SECONDS): its ops answer Python's
line for it, and the files that import it get TREE's module instead, so
their ops are still graded; a file TREE has not raises in the file that
imports it, as in Python. For each op it writes
a message to its stdout: a line 'OP LENGTH', then an .npz of what each call
returned or what it raised, the first answer saying where the graded code
starts ("graded": file:co_firstlineno) (the student's own prints go to /dev/null). The
instructor's process judges those answers; nothing here decides a grade, so
nothing the student's code does here can change one. The sandbox is the wall;
an audit hook is a second layer: it keeps the student's code from opening
files outside TREE, NumPy and the standard library, and from starting
processes, sending signals or loading libraries.
"""
import ctypes
import importlib.abc
import importlib.util
import io
import json
import os
import resource
import signal
import sys
import traceback

FORBIDDEN_EVENTS = ("subprocess.", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.system", "os.kill",
                    "os.killpg", "signal.", "ctypes.", "socket.", "shutil.", "os.startfile", "pty.", "webbrowser.")
IMPORT_SECONDS = 5.0        # a file of the package runs in milliseconds when imported
TEXT = 2000                 # characters of any text sent: a message, an exception's, a line of code
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


class Submission(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The student's files, imported as Python imports them: each module's text compiled under its edition path
    and run as that module, its name bound in sys.modules and on its package. A file that raises while it runs
    does not import: its error is kept (`failed`) and the module stays the stub tree's, so the files that import
    it, and their ops, are still graded; a file the tree has not (a helper of the student's own) raises in the
    file importing it. A package's submodules that the submission has not are the tree's (its __path__)."""

    def __init__(self, files, tree):
        # ops/basic/__init__.py and ops/basic.py both name tinytransformer.ops.basic: Python imports the package
        ordered = sorted(files.items(), key=lambda item: item[0].endswith("/__init__.py"))
        self.texts = {module_name(path): (path, as_imported(text)) for path, text in ordered}
        self.tree = tree
        self.failed, self.stubs, self.running = {}, {}, []

    def find_spec(self, name, path=None, target=None):
        if name not in self.texts:
            return None
        file = self.texts[name][0]
        spec = importlib.util.spec_from_loader(name, self, origin=file, is_package=file.endswith("/__init__.py"))
        if spec.submodule_search_locations is not None:
            spec.submodule_search_locations.append(os.path.join(self.tree, os.path.dirname(file)))
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        path, text = self.texts[module.__name__]
        module.__file__ = path
        outermost = not self.running                # a file imported by another runs within that one's time
        self.running.append(path)
        try:
            if outermost:
                signal.signal(signal.SIGALRM, too_long)
                signal.setitimer(signal.ITIMER_REAL, IMPORT_SECONDS)
            exec(compile(text, path, "exec", dont_inherit=True), vars(module))
        except BaseException as error:              # SystemExit too: the file does not import, no more
            self.failed[module.__name__] = (f"does not import: {described(error)}", error)
            if module.__name__ not in self.stubs:
                raise                               # the file importing it raises, as in Python
            sys.modules[module.__name__] = self.stubs[module.__name__]    # the import system returns this one
        finally:
            self.running.pop()
            if outermost:
                signal.setitimer(signal.ITIMER_REAL, 0)

    def import_all(self, wanted):
        """Import the submission's files in place of the stub tree's modules: the `wanted` modules and those the
        tree had imported (the others when imported)."""
        for name in wanted:
            importlib.import_module(name)
        replaced = sorted(name for name in self.texts if name in sys.modules)
        for name in replaced:
            self.stubs[name] = sys.modules.pop(name)
        for name in replaced:
            package, _, child = name.rpartition(".")
            if package in sys.modules:                  # `from . import softmax` must import it anew
                vars(sys.modules[package]).pop(child, None)
        sys.meta_path.insert(0, self)
        for name in replaced:
            importlib.import_module(name)
        for name, stub in self.stubs.items():       # the package's own names for the stubs' functions: the student's
            module = sys.modules[name]
            for other in [m for key, m in list(sys.modules.items()) if key.startswith("tinytransformer")]:
                for key, value in list(vars(other).items()):
                    if other is not module and value is vars(stub).get(key) and key in vars(module) \
                            and getattr(value, "__module__", None) == name:     # a function the stub defines
                        setattr(other, key, vars(module)[key])


class TookTooLong(BaseException):
    """A file ran longer than IMPORT_SECONDS while imported (a BaseException: an `except Exception` lets it pass)."""


def too_long(number, frame):
    """The SIGALRM handler while a file is imported: it has run too long."""
    raise TookTooLong(f"the file ran over {IMPORT_SECONDS:g} s while imported")


def graded_at(function):
    """'tinytransformer/ops/basic.py:195': where the graded object's code starts (its first decorator's line, as
    co_firstlineno says), for the feedback to show the def Python runs; '' for an object without code."""
    try:
        code = function.__code__
        return capped(f"{code.co_filename}:{code.co_firstlineno}")
    except BaseException:                       # no __code__, or one that raises
        return ""


def module_name(path):
    """'tinytransformer.ops.basic' for tinytransformer/ops/basic.py, 'tinytransformer.ops' for its __init__.py."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def as_imported(text):
    """text with its line ends as Python reads a file it imports: \\r\\n and \\r become \\n."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def bound(module, qualname):
    """The object module's name (or Class.method) holds once the module has run; None if there is none."""
    value = module
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return value


def answer(call, sources):
    """{"value": what call() returned}, or {"raised"|"not written": message, "where": line}, every text capped."""
    from .op_grading import NOT_WRITTEN, BackwardFailed
    try:
        return {"value": call()}
    except BackwardFailed as failed:               # the tape's replay, run by tape_grading.run_trial
        kind = "not written" if failed.status == NOT_WRITTEN else "raised"
        return {kind: capped(failed.problem.removeprefix("raised ")), "where": capped(failed.where)}
    except NotImplementedError as error:
        return {"not written": capped(str(error) or "NotImplementedError"), "where": where(error, sources)}
    except BaseException as error:                 # SystemExit and KeyboardInterrupt too: the op fails, no more
        return {"raised": capped(described(error)), "where": where(error, sources)}


def described(error):
    """'ValueError: boom': an exception's type and text, as a traceback's last line says it (a text that cannot
    be made, its __str__ raising, is said so)."""
    try:
        return f"{type(error).__name__}: {error}"
    except BaseException:
        return f"{type(error).__name__} (its text could not be read)"


def capped(text):
    """text cut to TEXT characters (the parent cuts again: this is only not to send what it would drop)."""
    return str(text)[:TEXT]


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
    lines = sources[frame.filename]
    text = lines[frame.lineno - 1].strip() if 0 < frame.lineno <= len(lines) else ""
    return capped(f"{frame.filename}:{frame.lineno}: {text}")


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
    """Run one job: limit this process, import the student's files, call what they bind, send what it returned."""
    spec = json.loads(sys.stdin.buffer.read())
    limit(spec["memory"], spec["cpu"])
    send = sender()
    import sysconfig
    from tinytransformer.course import tape_grading, wire
    import tinytransformer.ops  # noqa: F401  (the stub tree's, imported before any of the student's code)

    inputs = {op: wire.load(os.path.join(inputs_folder, f"{op}.npz")) for op in spec["ops"]}
    readable = [os.path.realpath(p) for p in (tree, numpy_home, sysconfig.get_paths()["stdlib"],
                                               sysconfig.get_paths()["platstdlib"])]
    sys.addaudithook(guard(readable, [os.path.realpath(p) for p in spec["forbidden"]]))
    send("ready", b"")

    submission = Submission(spec["files"], tree)
    submission.import_all(sorted({function["module"] for function in spec["functions"].values()}))
    sources = {path: text.split("\n") for path, text in submission.texts.values()}     # the tokenizer's lines
    for op in spec["ops"]:
        function, (outline, arrays) = spec["functions"][op], inputs[op]
        module = sys.modules[function["module"]]
        found = answer(lambda: bound(module, function["qualname"]), sources)   # a __getattr__ may raise
        backward = found.get("value")
        if function["module"] in submission.failed:
            problem, error = submission.failed[function["module"]]
            answers = [{"raised": capped(problem), "where": where(error, sources)}]
        elif "value" not in found:
            answers = [found]
        elif not callable(backward):
            answers = [{"not written": f"{function['file']} binds no function {function['qualname']} once it has run"}]
        elif op == "tape":
            calls = [lambda t=t: tape_grading.run_trial(tape_grading.TapeTrial(
                t["case"], "", dict(zip(t["names"], wire.decode(t["arrays"], arrays))), {}, 0.0), backward, module)
                for t in outline]
            answers = answer_each(calls, sources)
        else:
            calls = [lambda pair=wire.decode(item, arrays): (backward(*pair), *pair) for item in outline]
            answers = answer_each(calls, sources)
        answers[0]["graded"] = "" if function["module"] in submission.failed else graded_at(backward)
        written = {}
        outlines = [dict(a, value=wire.encode(a["value"], written)) if "value" in a else a for a in answers]
        send(op, npz(outlines, written))


if __name__ == "__main__":
    tree, numpy_home, inputs_folder = sys.argv[1:4]
    sys.path[:0] = [tree, numpy_home]
    from tinytransformer.course.child import main as run
    run(tree, numpy_home, inputs_folder)
