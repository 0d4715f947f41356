"""`python -m tinytransformer grade SUBMISSION...`: grade a class's backward passes with this installed library."""
import csv
import io
import json
import math
import os
from concurrent.futures import ThreadPoolExecutor

from .common import BadInput
from ..course.autograder import gradescope_results
from ..course.grader import op_names
from ..course.isolation import Batch
from ..course.reading import BadSubmission, open_regular
from ..course.submission import grade_submission
from ..course.tape_grading import TAPE
from ..files import OutputError, atomic_write, check_outputs as check, json_keys


def add_parser(commands):
    """Add the grade command (grade students' editions, each in a process of its own) to the commands."""
    grade = commands.add_parser(
        "grade", help="grade students' editions (folders or .zip files): their backward passes, isolated",
        description="Grade each SUBMISSION (a student edition: a folder or a .zip of one) with this installed "
                    "tinytransformer: its forward passes, finite differences, cases and pass rule. Only the "
                    "backward passes (and Tape.backward with --tape) are taken from a submission; they run in "
                    "a process of their own, with a time and a memory limit, and hand back only arrays. One line "
                    "per submission; a submission that cannot be read gets its line and the rest go on.")
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="an edition folder or a .zip of one")
    grade.add_argument("--json", metavar="FILE", help="write every submission's score and ops as JSON")
    grade.add_argument("--csv", metavar="FILE", help="write one row per submission, one column per op")
    grade.add_argument("--gradescope", metavar="FILE",
                       help="write Gradescope's results.json for the one SUBMISSION (the autograder's run_autograder)")
    grade.add_argument("--timeout", type=float, default=10.0, metavar="S",
                       help="seconds an op may take before it is a timeout (default 10)")
    grade.add_argument("--points", metavar="FILE",
                       help='a JSON file {"op": points, ...}: the ops graded and their weights '
                            "(default: every op, 1 point each)")
    grade.add_argument("--tape", action="store_true", help="grade Tape.backward too (a --tape edition)")
    grade.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                       help="submissions graded at once (default: the number of CPUs)")
    grade.add_argument("--force", action="store_true",
                       help="replace an existing --json, --csv or --gradescope file that grade did not write")
    grade.set_defaults(run=run)


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


def check_outputs(args):
    """Every file grade will write must be writable before any submission is graded (files.check_outputs): a
    folder that exists, the right extension, not a submission or the --points file, and never a file grade did
    not write (a class roster named grades.csv) unless --force."""
    outputs = {flag: getattr(args, flag[2:]) for flag in OUTPUT_EXTENSIONS}
    inputs = {"--points": args.points, **{f"SUBMISSION {path}": path for path in args.submissions}}
    try:
        check(outputs, OUTPUT_EXTENSIONS, inputs=inputs, force=args.force,
              is_ours={"--json": is_class_json, "--csv": is_class_csv, "--gradescope": is_gradescope_json})
    except OutputError as error:
        raise BadInput(str(error)) from None


def is_class_json(path):
    """True if path holds the JSON grade --json writes."""
    return json_keys(path) == {"submissions"}


def is_gradescope_json(path):
    """True if path holds a Gradescope results file (grade --gradescope writes one)."""
    return {"score", "tests"} <= json_keys(path)


def is_class_csv(path):
    """True if path holds the CSV grade --csv writes (its header begins path,score,max_score)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().startswith("path,score,max_score")
    except (OSError, UnicodeDecodeError):
        return False


def run(args):
    """Grade every submission, print a line for each, write the --json, --csv and --gradescope files; return 0."""
    points = read_points(args.points, args.tape)
    if args.gradescope and len(args.submissions) != 1:
        raise BadInput(f"--gradescope writes one submission's results; got {len(args.submissions)} submissions")
    check_outputs(args)
    if args.timeout <= 0 or args.jobs < 1:
        raise BadInput(f"--timeout must be > 0 and --jobs >= 1, got {args.timeout:g} and {args.jobs}")
    with Batch(points) as batch, ThreadPoolExecutor(args.jobs) as pool:
        graded = list(pool.map(lambda path: grade_submission(path, batch, points, args.timeout), args.submissions))
    for g in graded:
        print(line(g))
    if args.json:
        write_atomically(args.json, json.dumps({"submissions": [as_json(g) for g in graded]}, indent=1) + "\n")
    if args.csv:
        write_atomically(args.csv, as_csv(graded, list(points)))
    if args.gradescope:
        write_atomically(args.gradescope, json.dumps(gradescope_results(graded[0], points), indent=1) + "\n")
    return 0


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
    """The graded submissions as CSV text, one row each: path, score, max_score, each op's status, then two
    columns of text: review (each flagged op, why) and diagnosis (each op's, or why it was not graded). One
    column each, not one per op: a row stays a screen wide, and a filter on review finds the ones to read."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["path", "score", "max_score"] + ops + ["review", "diagnosis"])
    for g in graded:
        review = "; ".join(f"{op}: {g.ops[op].review}" for op in ops if g.ops[op].review)
        diagnosis = g.problem or "; ".join(f"{op}: {g.ops[op].diagnosis}" for op in ops if g.ops[op].diagnosis)
        writer.writerow([g.path, f"{g.score:g}", f"{g.max_score:g}"] + [g.ops[op].status for op in ops]
                        + [review, diagnosis])
    return text.getvalue()


def write_atomically(path, text):
    """Write text to path through a temporary file beside it: a reader never sees half a file."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))
