"""`python -m tinytransformer assignment DIR`: write a student edition, its backward passes blank."""
from pathlib import Path

from .common import BadInput
from ..course.autograder import AutograderError, build_autograder
from ..course.edition import build_edition
from ..course.grader import TAPE


def add_parser(commands):
    """Add the assignment command (write a student edition) to the command line's commands."""
    assignment = commands.add_parser(
        "assignment", help="write a student edition: the backward passes blank, the grader to check them",
        description="Copy the project into DIR (new or empty) as a student edition: every op's backward pass "
                    "in tinytransformer/ops/ (or those of --ops) replaced by a stub that says what to return, "
                    "the notebooks without their solutions, a README for students. Install it with "
                    "pip install -e DIR; students check their work with python -m tinytransformer gradcheck.")
    assignment.add_argument("dir", metavar="DIR", help="where to write the edition: a new or empty folder")
    assignment.add_argument("--ops", metavar="NAME[,NAME]", help="blank only these ops (default: every op)")
    assignment.add_argument("--tape", action="store_true",
                            help="harder: blank Tape.backward too, the tape's replay")
    assignment.add_argument("--autograder", action="store_true",
                            help="also write DIR-autograder.zip for Gradescope: setup.sh installs this library "
                                 "from a wheel in the zip, run_autograder grades the submission with it")
    assignment.set_defaults(run=run)


def run(args):
    """Build the edition; an EditionError (a folder in use, an unknown op) is the command line's one line."""
    ops = None if args.ops is None else [name.strip() for name in args.ops.split(",") if name.strip()]
    stubs = build_edition(args.dir, ops=ops, tape=args.tape)
    print(f"wrote a student edition to {args.dir}: {len(stubs)} function{'s' * (len(stubs) != 1)} to write")
    for function, place in stubs:
        print(f"  {function:<24} {place}")
    print(f"next: pip install -e {args.dir}; in it, python -m tinytransformer gradcheck grades the student's work")
    if args.autograder:
        target = Path(args.dir).resolve()
        graded = [f.removesuffix("_backward") for f, _ in stubs if f.endswith("_backward")] + [TAPE] * args.tape
        try:
            written = build_autograder(target.with_name(f"{target.name}-autograder.zip"), dict.fromkeys(graded, 1))
        except AutograderError as error:
            raise BadInput(str(error)) from None
        print(f"wrote the Gradescope autograder {written} ({len(graded)} ops, 1 point each): upload it as the "
              "assignment's autograder; students upload their edition as a .zip")
    return 0
