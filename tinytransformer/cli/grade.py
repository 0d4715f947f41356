"""`python -m tinytransformer grade SUBMISSION...`: grade a class's backward passes with this installed library."""
import csv
import functools
import io
import json
import math
import os
import re
import secrets
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .common import BadInput, seed
from ..course.autograder import gradescope_results
from ..course.grader import op_names
from ..course.isolation import GradingRun
from ..course.reading import BadSubmission, open_regular
from ..course.sandbox import NoSandbox, Sandbox, choose
from ..course.submission import Graded, OpResult, grade_submission
from ..course.tape_grading import TAPE
from ..course.wire import printable
from ..files import OutputError, check_outputs as check, json_keys, write_output


def add_parser(commands):
    """Add the grade command (grade students' editions, each in a process of its own) to the commands."""
    grade = commands.add_parser(
        "grade", help="grade students' editions (folders or .zip files): their backward passes, isolated",
        description="Grade each SUBMISSION (a student edition: a folder or a .zip of one) with this installed "
                    "tinytransformer: its forward passes, finite differences, cases and pass rule. Only the "
                    "backward passes (and Tape.backward with --tape) are taken from a submission; they run in "
                    "a sandbox (bubblewrap), with a time and a memory limit, and hand back only arrays. The cases "
                    "are drawn from a fresh secret seed, printed first. One line per submission; a submission "
                    "that cannot be read or run gets its line and the rest go on.")
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="an edition folder or a .zip of one")
    grade.add_argument("--json", metavar="FILE", help="write every submission's score and ops as JSON")
    grade.add_argument("--csv", metavar="FILE", help="write one row per submission, one column per op")
    grade.add_argument("--gradescope", metavar="FILE",
                       help="write Gradescope's results.json for the one SUBMISSION (the autograder's run_autograder)")
    grade.add_argument("--timeout", type=float, default=10.0, metavar="S",
                       help="seconds an op may take before it is a timeout (default 10)")
    grade.add_argument("--seed", type=seed, metavar="N",
                       help="draw the grading cases from seed N (default: a fresh secret seed, printed and in --json)")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="run the students' code without a sandbox (a warning, and \"sandbox\": \"none\" in --json): "
                            "only where none can start, for code you trust")
    grade.add_argument("--points", metavar="FILE",
                       help='a JSON file {"op": points, ...}: the ops graded and their weights (default: the '
                            "one NAME.points.json in this folder that assignment wrote, else every op, 1 point each)")
    grade.add_argument("--tape", action="store_true", help="grade Tape.backward too (a --tape edition)")
    grade.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                       help="submissions graded at once (default: the number of CPUs)")
    grade.add_argument("--force", action="store_true",
                       help="replace an existing --json, --csv or --gradescope file that grade did not write")
    grade.set_defaults(run=run)


def default_points(args):
    """--points, or the one *.points.json in this folder (assignment writes DIR.points.json beside DIR); a line
    saying which ops are graded and why. Several such files and no --points: refused, naming them."""
    if args.points is not None:
        return args.points, f"grading the ops of {args.points}"
    found = sorted(str(path) for path in Path().glob("*.points.json") if path.is_file())
    if len(found) > 1:
        raise BadInput(f"this folder holds several points files ({', '.join(found)}): "
                       "name the week's with --points FILE")
    if found:
        return found[0], f"grading the ops of {found[0]} (this folder's points file; --points to choose another)"
    return None, "grading every op, 1 point each (no --points, and no *.points.json in this folder)"


def read_points(path, tape):
    """{op: points}: from the --points file, or 1 for every op (and the tape with --tape)."""
    known = op_names()
    if path is None:
        return {op: 1.0 for op in known if op != TAPE or tape}
    expected = f"--points {path}: expected a JSON file of {{op: points}}"
    try:
        with open_regular(path, f"--points {path}") as f:
            text = f.read(POINTS_LIMIT + 1)
        if len(text) > POINTS_LIMIT:
            raise ValueError(f"it is over {POINTS_LIMIT // 1024} KiB")
        points = json.loads(text, parse_constant=refuse_constant)
    except BadSubmission as error:
        raise BadInput(str(error)) from None
    except (OSError, ValueError, RecursionError) as error:
        raise BadInput(f"{expected}, could not read it ({error})") from None
    if not isinstance(points, dict) or not points:
        raise BadInput(f"--points {path}: expected a JSON object {{op: points}}, got {type(points).__name__}")
    unknown = [op for op in points if op not in known]
    if unknown:
        raise BadInput(f"--points {path}: no op named {', '.join(unknown)} (the ops are {', '.join(known)})")
    values = {op: points_value(value) for op, value in points.items()}
    bad = [f"{op}: {json.dumps(points[op])}" for op, value in values.items() if value is None]
    if bad:
        raise BadInput(f"--points {path}: points must be finite numbers >= 0 ({', '.join(bad)})")
    if not math.isfinite(sum(values.values())):
        raise BadInput(f"--points {path}: the points add up to {sum(values.values())}: give a finite total")
    return values


POINTS_LIMIT = 2 ** 20          # bytes of a --points file: one line per op is a few hundred


def refuse_constant(name):
    """json's hook for NaN, Infinity and -Infinity, which are not JSON: refused."""
    raise ValueError(f"{name} is not a number JSON allows")


def points_value(value):
    """value as a float if it is a finite number >= 0 (not true or false); None if not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        value = float(value)
    except OverflowError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


OUTPUT_EXTENSIONS = {"--json": (".json",), "--csv": (".csv",), "--gradescope": (".json",)}


def check_grade_outputs(args):
    """Every file grade will write must be writable before any submission is graded (files.check_outputs): a
    folder that exists, the right extension, not a submission or the --points file, and never a file grade did
    not write (a class roster named grades.csv) unless --force."""
    outputs = {flag: getattr(args, flag[2:]) for flag in OUTPUT_EXTENSIONS}
    inputs = {"--points": args.points, **{f"SUBMISSION {path}": path for path in args.submissions}}
    try:
        check(outputs, OUTPUT_EXTENSIONS, inputs=inputs, force=args.force, is_ours=IS_OURS)
    except OutputError as error:
        raise BadInput(str(error)) from None


def is_class_json(path):
    """True if path holds the JSON grade --json writes."""
    return json_keys(path) == {"submissions"}


def is_gradescope_json(path):
    """True if path holds a Gradescope results file (grade --gradescope writes one)."""
    return {"score", "tests"} <= json_keys(path)


def is_class_csv(path):
    """True if path holds the CSV grade --csv writes (its header begins student,path,score,max_score; before the
    student column, path,score,max_score)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().startswith(("student,path,score,max_score", "path,score,max_score"))
    except (OSError, UnicodeDecodeError):
        return False


IS_OURS = {"--json": is_class_json, "--csv": is_class_csv, "--gradescope": is_gradescope_json}


def run(args):
    """Grade every submission, print a line for each, write the --json, --csv and --gradescope files; return 0."""
    args.points, note = default_points(args)
    points = read_points(args.points, args.tape)
    if args.gradescope and len(args.submissions) != 1:
        raise BadInput(f"--gradescope writes one submission's results; got {len(args.submissions)} submissions")
    check_grade_outputs(args)
    if not 0 < args.timeout <= MAX_TIMEOUT or args.jobs < 1:
        raise BadInput(f"--timeout must be a number of seconds > 0 and <= {MAX_TIMEOUT} and --jobs >= 1, "
                       f"got {args.timeout:g} and {args.jobs}")
    try:
        box = Sandbox("none") if args.no_sandbox else choose()
    except NoSandbox as error:
        raise BadInput(str(error)) from None
    drawn = secrets.randbelow(2 ** 63) if args.seed is None else args.seed
    print(f"grading {len(args.submissions)} submission{'s' * (len(args.submissions) != 1)}: cases drawn with "
          f"seed {drawn} (--seed {drawn} draws them again), sandbox: {box.describe()}" +
          ("; WARNING: no sandbox, the students' code runs with your rights" if box.kind == "none" else ""))
    print(f"{note}: {', '.join(points)}", flush=True)
    jobs = 1 if box.kind == "user" else args.jobs          # one uid for every submission: one at a time
    try:
        with stopped_by_signals(), ThreadPoolExecutor(jobs) as pool, GradingRun(points, drawn, box) as run:
            graded = list(pool.map(lambda path: grade_one(path, run, points, args.timeout), args.submissions))
    except KeyboardInterrupt as stop:
        print(f"grade: stopped ({stop or 'Ctrl-C'}): nothing written, the temporary tree removed", file=sys.stderr)
        return 130
    for g in graded:
        print(line(g))
    if args.json:
        write_result("--json", args.json, json.dumps({"seed": drawn, "sandbox": box.kind,
                                                      "submissions": [as_json(g) for g in graded]}, indent=1) + "\n",
                     args.force)
    if args.csv:
        write_result("--csv", args.csv, as_csv(graded, list(points)), args.force)
    if args.gradescope:
        write_result("--gradescope", args.gradescope,
                     json.dumps(gradescope_results(graded[0], points, drawn), indent=1) + "\n", args.force)
    return 0


MAX_TIMEOUT = 3600.0                  # seconds: an op slower than an hour is no backward pass


def grade_one(path, run, points, timeout):
    """grade_submission, with anything it raises that submission's problem, in a line: the class goes on. Every
    text of the result made printable and bounded (sanitized) before a printout, JSON, CSV or Gradescope sees it."""
    try:
        return sanitized(grade_submission(path, run, points, timeout))
    except Exception as error:               # RecursionError, MemoryError, a bug met only by this submission
        problem = f"the grader failed on it ({type(error).__name__}: {str(error)[:200]})"
        return sanitized(Graded(str(path), 0.0, float(sum(points.values())),
                                {op: OpResult("error", None, problem) for op in points}, problem))


TEXT_LIMIT = 4000                     # characters of one text of a result: a diagnosis, a review, a problem


def sanitized(g):
    """g with its path, problem and every op's diagnosis and review in one line each, without control characters
    (a newline or an ANSI escape in a zip member's name or a student's exception forges no line), each at most
    TEXT_LIMIT characters."""
    ops = {op: r._replace(diagnosis=printable(r.diagnosis, TEXT_LIMIT), review=printable(r.review, TEXT_LIMIT))
           for op, r in g.ops.items()}
    return g._replace(path=printable(g.path, TEXT_LIMIT), problem=printable(g.problem, TEXT_LIMIT), ops=ops)


class stopped_by_signals:
    """SIGTERM (and SIGHUP) raise KeyboardInterrupt as Ctrl-C does, so the grading run's processes are killed and
    its temporary tree removed on the way out; the handlers are put back after."""

    def __enter__(self):
        self.before = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}

    def __exit__(self, *exc):
        for s, handler in self.before.items():
            signal.signal(s, handler)


def interrupt(number, frame):
    """A signal handler: stop as Ctrl-C would."""
    raise KeyboardInterrupt(signal.Signals(number).name)


def line(g):
    """'alice.zip: 24/26; fail: softmax (...); not written: gelu': one submission, in a line and a few more."""
    if g.problem:
        return f"{g.path}: not graded: {g.problem}"
    others = [f"\n  {op}: {r.status}" + (f": {r.diagnosis}" if r.diagnosis else "")
              + (f"\n    for review: {r.review}" if r.review else "")
              for op, r in g.ops.items() if r.status != "pass" or r.diagnosis or r.review]
    return f"{g.path}: {g.score:g}/{g.max_score:g}" + "".join(others)


def as_json(g):
    """One graded submission as a JSON object: path, score, max_score, its problem if any, each op's result."""
    return {"path": g.path, "score": g.score, "max_score": g.max_score, **({"problem": g.problem} if g.problem else {}),
            "ops": {op: r._asdict() for op, r in g.ops.items()}}


def as_csv(graded, ops):
    """The graded submissions as CSV text, one row each: the student (what a gradebook matches on: students()),
    path, score, max_score, each op's status, then two columns of text: review (each flagged op, why) and
    diagnosis (each distinct problem once, with the ops it concerns, or why the submission was not graded). One
    column each, not one per op: a row stays a screen wide, and a filter on review finds the ones to read."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["student", "path", "score", "max_score"] + ops + ["review", "diagnosis"])
    names = students([g.path for g in graded])
    for g in graded:
        review = "; ".join(f"{op}: {g.ops[op].review}" for op in ops if g.ops[op].review)
        writer.writerow([names[g.path], g.path, f"{g.score:g}", f"{g.max_score:g}"]
                        + [g.ops[op].status for op in ops] + [review, g.problem or diagnoses(g, ops)])
    return text.getvalue()


def students(paths):
    """{path: the student}: from a Gradescope export's submission_metadata.yml beside a submission_ID folder, the
    first submitter's email (else SID, else name); otherwise the folder's name or the zip's, without .zip."""
    found = {}
    for path in paths:
        where = Path(path)
        exported = gradescope_export(str(where.parent / "submission_metadata.yml"))
        found[path] = exported.get(where.name) or (where.stem if where.suffix.lower() == ".zip" else where.name)
    return found


@functools.cache
def gradescope_export(path):
    """{'submission_ID': email, SID or name} read from a Gradescope export's submission_metadata.yml ({} if none):
    its lines only, no YAML library (a key line 'submission_ID:', then ':email:', ':sid:', ':name:' lines)."""
    try:
        with open_regular(path, path) as f:
            lines = f.read(POINTS_LIMIT * 8).decode("utf-8", errors="replace").splitlines()
    except BadSubmission:
        return {}
    found, key, fields = {}, None, {}
    for line in lines + ["end:"]:
        if line and not line[0].isspace() and line.rstrip().endswith(":"):
            if key and fields:
                found[key] = next(fields[k] for k in (":email:", ":sid:", ":name:") if k in fields)
            key, fields = line.rstrip()[:-1].strip("'\""), {}
            continue
        words = line.strip().lstrip("- ").split(" ", 1)
        if key and len(words) == 2 and words[0] in (":email:", ":sid:", ":name:") and words[0] not in fields:
            fields[words[0]] = words[1].strip().strip("'\"")
    return found


def diagnoses(g, ops):
    """'not written: gelu, silu; add, sub: <diagnosis>': each distinct diagnosis once, after the ops it concerns
    (ops whose diagnoses differ only in the case they name share one, without the cases); the ops not written
    yet in one list."""
    unwritten = [op for op in ops if g.ops[op].status == "not written"]
    by_text = {}
    for op in ops:
        if g.ops[op].diagnosis and op not in unwritten:
            by_text.setdefault(CASE.sub("", g.ops[op].diagnosis), []).append(op)
    return "; ".join(([f"not written: {', '.join(unwritten)}"] if unwritten else [])
                     + [f"{names[0]}: {g.ops[names[0]].diagnosis}" if len(names) == 1 else f"{', '.join(names)}: {text}"
                        for text, names in by_text.items()])


CASE = re.compile(r" \[[^\[\]]*\]")             # ' [x (2, 3, 5), axis=1]': the case a diagnosis names


def write_result(flag, path, text, force):
    """Write text to path through a temporary file beside it (a reader never sees half a file), checked again
    now (files.write_output): a file someone put at path while grading ran is kept, unless grade wrote it or
    --force; then one line, and nothing written."""
    try:
        write_output(flag, path, lambda f: f.write(text.encode("utf-8")), is_ours=IS_OURS[flag], force=force)
    except OutputError as error:
        raise BadInput(str(error)) from None
