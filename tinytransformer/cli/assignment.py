"""`python -m tinytransformer assignment DIR`: write a student edition, its backward passes blank, and beside it
the week's points (DIR.points.json, which `grade` reads) and, with --autograder, the Gradescope zip."""
import json
import os
import shutil
import stat
import sys
import zipfile
from pathlib import Path

from .common import BadInput, Stopped, signals_stop_at_once, tell
from ..course.autograder import AutograderError, build_autograder
from ..course.edition import build_edition, check_target, op_files, tracked_files, with_kin
from ..course.grader import PROJECT, TAPE
from ..files import OutputError, atomic_write, check_outputs, kind_of


def add_parser(commands):
    """Add the assignment command (write a student edition) to the command line's commands."""
    assignment = commands.add_parser(
        "assignment", help="write a student edition: the backward passes blank, the grader to check them",
        description="Copy the project's files (those git tracks) into DIR (new or empty) as a student edition: "
                    "every op's backward pass in tinytransformer/ops/ (or those of --ops) replaced by a stub that "
                    "says what to return, the notebooks without their solutions, a README for students. Beside "
                    "DIR, DIR.points.json records the ops to grade (grade reads it). Install the edition with "
                    "pip install -e DIR; students check their work with python -m tinytransformer check.")
    assignment.add_argument("dir", metavar="DIR", help="where to write the edition: a new or empty folder")
    assignment.add_argument("--ops", metavar="NAME[,NAME]", help="blank only these ops (default: every op)")
    assignment.add_argument("--hide", metavar="NAME[,NAME]",
                            help="later weeks' ops: blank their backward passes too, as not this week's work "
                                 "(default: the library's own, so that everything trains)")
    assignment.add_argument("--tape", action="store_true",
                            help="harder: blank Tape.backward too, the tape's replay")
    assignment.add_argument("--autograder", action="store_true",
                            help="also write DIR-autograder.zip for Gradescope: setup.sh installs this library "
                                 "from a wheel in the zip, run_autograder grades the submission with it")
    assignment.add_argument("--files", metavar="LIST",
                            help="copy the project files LIST names (one path a line, relative to the project) "
                                 "instead of those git tracks: for a project that is not a git checkout")
    assignment.add_argument("--force", action="store_true",
                            help="replace an existing DIR.points.json, or a DIR-autograder.zip that "
                                 "assignment did not write")
    assignment.set_defaults(run=run)


def names(text):
    """'a, b,' -> ['a', 'b']."""
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def run(args):
    """Check every path, build the edition, then write its points file and autograder; one line for any failure,
    and then nothing of this run is left (an EditionError or a BadInput is the command line's one line)."""
    check_dir_name(args.dir)
    target = check_target(args.dir)
    outputs = {"the points file": target.with_name(f"{target.name}.points.json"),
               "--autograder": target.with_name(f"{target.name}-autograder.zip") if args.autograder else None}
    check_names(args.dir, outputs)
    check_paths(outputs, args.force)
    files = read_list(args.files) if args.files else None
    ops = None if args.ops is None else names(args.ops)
    if args.hide and ops is None:
        raise BadInput("--hide names later weeks' ops, to blank beside this week's --ops: give --ops too")
    hide = [name for name in names(args.hide) if name not in ops]       # an op named in both is this week's
    before = {name: signature(path) for name, path in outputs.items() if path is not None}
    try:
        with signals_stop_at_once():              # Ctrl-C, SIGTERM, SIGHUP: Stopped, then nothing of this run is left
            stubs, week, points = write_edition(args, target, outputs, ops, hide, files)
    except Stopped as stop:
        with signals_stop_at_once(ignore=True):   # the clean-up runs whole
            shutil.rmtree(target, ignore_errors=True)
            for name, was in before.items():     # the points file and the zip, if this run wrote them
                if signature(outputs[name]) != was:
                    outputs[name].unlink(missing_ok=True)
            tell(f"python -m tinytransformer assignment: interrupted ({stop}); nothing was written "
                 f"(the edition {target} was removed)")
        return 130
    print(f"wrote a student edition to {args.dir}: {len(week)} function{'s' * (len(week) != 1)} to write")
    for function, place in week:
        print(f"  {function:<24} {place}")
    if len(week) < len(stubs):
        print(f"  and blank as later weeks' work: {', '.join(f for f, _ in stubs if (f, _) not in week)}")
    print(f"wrote {outputs['the points file']}: grade, run in {target.parent}, grades these ops "
          f"({', '.join(points)}; 1 point each)")
    print(f"next: pip install -e {args.dir}; in it, python -m tinytransformer check grades the student's work")
    if args.autograder:
        print(f"wrote the Gradescope autograder {outputs['--autograder']} ({len(points)} ops, 1 point each): upload "
              "it as the assignment's autograder; students upload the handin.zip that `python -m tinytransformer "
              "handin` writes in their edition")
    return 0


def write_edition(args, target, outputs, ops, hide, files):
    """Build the edition, then write its points file and autograder -> (stubs, this week's stubs, points); any
    failure removes what this run wrote (BadInput)."""
    stubs = build_edition(target, ops=ops, tape=args.tape, hide=hide, files=files)
    found = op_files()
    later = set(with_kin(hide, found)) - set(with_kin(ops or found, found))   # a hidden op's kin is hidden too
    week = [(function, place) for function, place in stubs if function.removesuffix("_backward") not in later]
    points = dict.fromkeys([f.removesuffix("_backward") for f, _ in week if f.endswith("_backward")]
                           + [TAPE] * args.tape, 1)
    try:
        check_paths(outputs, args.force)                    # again: a file that appeared meanwhile is kept
        write_points(outputs["the points file"], points)
        if args.autograder:
            build_autograder(outputs["--autograder"], points,
                             files=tracked_files(PROJECT) if files is None else files)
    except (OSError, AutograderError, BadInput) as error:
        shutil.rmtree(target, ignore_errors=True)           # the edition this run wrote a moment ago
        if outputs["the points file"].exists() and points_in(outputs["the points file"]) == points:
            outputs["the points file"].unlink()
        why = f"{error.strerror}: {error.filename}" if isinstance(error, OSError) and error.strerror else error
        raise BadInput(f"could not write the points file or the autograder ({why}); nothing was written") from None
    return stubs, week, points


def signature(path):
    """What tells a file apart from the one at path before this run (None: no file)."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns

def check_dir_name(dir_text):
    """DIR's own name must fit the folder's names with the longest one written beside it (".DIR.xxxxxxxx.building",
    DIR-autograder.zip) and hold no line end or other control character (a name a listing would show as two)."""
    name = os.path.basename(os.path.normpath(os.fspath(dir_text)))
    if any(ord(character) < 32 or ord(character) == 127 for character in os.fspath(dir_text)):
        raise BadInput(f"DIR {ascii(os.fspath(dir_text))}: the name holds a line end or another control character; "
                       "choose one without (nothing was written)")
    try:
        longest = os.pathconf(os.path.dirname(os.path.abspath(os.fspath(dir_text))) or ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        longest = 255
    room = longest - len(".building") - 10                  # the temporary twin: a dot, DIR, 8 random characters
    if len(name.encode("utf-8", "surrogateescape")) > room:
        raise BadInput(f"DIR: a name of {len(name)} characters is too long here; at most {room} leave room for "
                       "the files written beside it (nothing was written)")


def check_names(dir_text, outputs):
    """Every name this run prints must show in the terminal's encoding: refused before any work if not."""
    encoding = sys.stdout.encoding or "utf-8"
    for name in [os.fspath(dir_text)] + [str(path) for path in outputs.values() if path is not None]:
        try:
            name.encode(encoding)
        except UnicodeEncodeError:
            raise BadInput(f"DIR {ascii(os.fspath(dir_text))}: the name cannot be shown in this terminal's encoding "
                           f"({encoding}); choose a name in it (nothing was written)") from None


def check_paths(outputs, force):
    """The points file and the autograder zip: writable names, never a file of the user's without --force (an
    autograder zip assignment wrote is replaced)."""
    try:
        check_outputs({flag: path for flag, path in outputs.items()}, {"--autograder": (".zip",)},
                      is_ours={"--autograder": is_autograder_zip}, force=force)
    except OutputError as error:
        raise BadInput(f"{error}; nothing was written") from None


def is_autograder_zip(path):
    """True if path holds an autograder zip that assignment wrote (its setup.sh and run_autograder)."""
    try:
        with zipfile.ZipFile(path) as z:
            return {"setup.sh", "run_autograder", "points.json"} <= set(z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def write_points(path, points):
    """Write the week's {op: points} to path, atomically: the file grade --points reads."""
    atomic_write(path, lambda f: f.write((json.dumps(points, indent=1) + "\n").encode()))


def points_in(path):
    """The JSON in path, or None if it cannot be read."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def read_list(path):
    """The file names LIST holds, one a line (blank lines and # comments skipped)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):     # a FIFO or a device would be read forever
            raise BadInput(f"--files {path}: expected a text file of paths, one a line, got "
                           f"{kind_of(os.stat(path).st_mode)}")
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"--files {path}: expected a text file of paths, one a line, could not read it ({error})") \
            from None
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
