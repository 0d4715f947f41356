"""`python -m tinytransformer grade SUBMISSION...`: grade a class's backward passes with this installed library."""
import csv
import io
import json
import os
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor

from .common import BadInput, seed
from ..course.autograder import gradescope_results
from ..course.grader import op_names
from ..course.isolation import Batch
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
    grade.add_argument("--seed", type=seed, default=0, metavar="N",
                       help="draw the grading cases from seed N (default 0)")
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
    try:
        with open(path) as f:
            points = json.load(f)
    except (OSError, ValueError) as error:
        raise BadInput(f"--points {path}: expected a JSON file of {{op: points}}, "
                       f"could not read it ({error})") from None
    if not isinstance(points, dict) or not points:
        raise BadInput(f"--points {path}: expected a JSON object {{op: points}}, got {type(points).__name__}")
    unknown = [op for op in points if op not in known]
    bad = [op for op, value in points.items() if not isinstance(value, (int, float)) or value < 0]
    if unknown or bad:
        raise BadInput(f"--points {path}: " + (f"no op named {', '.join(unknown)} (the ops are {', '.join(known)})"
                                               if unknown else f"points must be numbers >= 0 ({', '.join(bad)})"))
    return {op: float(value) for op, value in points.items()}


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
    args.points, note = default_points(args)
    points = read_points(args.points, args.tape)
    if args.gradescope and len(args.submissions) != 1:
        raise BadInput(f"--gradescope writes one submission's results; got {len(args.submissions)} submissions")
    check_outputs(args)
    if args.timeout <= 0 or args.jobs < 1:
        raise BadInput(f"--timeout must be > 0 and --jobs >= 1, got {args.timeout:g} and {args.jobs}")
    print(f"{note}: {', '.join(points)}")
    with Batch(points, seed=args.seed) as batch, ThreadPoolExecutor(args.jobs) as pool:
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
              for op, r in g.ops.items() if r.status != "pass"]
    return f"{g.path}: {g.score:g}/{g.max_score:g}" + "".join(others)


def as_json(g):
    """One graded submission as a JSON object: path, score, max_score, its problem if any, each op's result."""
    return {"path": g.path, "score": g.score, "max_score": g.max_score, **({"problem": g.problem} if g.problem else {}),
            "ops": {op: r._asdict() for op, r in g.ops.items()}}


def as_csv(graded, ops):
    """The graded submissions as CSV text, one row each: path, score, max_score, then each op's status."""
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["path", "score", "max_score"] + ops)
    for g in graded:
        writer.writerow([g.path, f"{g.score:g}", f"{g.max_score:g}"] + [g.ops[op].status for op in ops])
    return text.getvalue()


def write_atomically(path, text):
    """Write text to path through a temporary file beside it: a reader never sees half a file."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))
