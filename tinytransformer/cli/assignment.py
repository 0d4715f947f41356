"""`python -m tinytransformer assignment DIR`: write a student edition, its backward passes blank."""
from ..course.edition import build_edition


def add_parser(commands):
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
    assignment.set_defaults(run=run)


def run(args):
    """Build the edition; an EditionError (a folder in use, an unknown op) is the command line's one line."""
    ops = None if args.ops is None else [name.strip() for name in args.ops.split(",") if name.strip()]
    stubs = build_edition(args.dir, ops=ops, tape=args.tape)
    print(f"wrote a student edition to {args.dir}: {len(stubs)} function{'s' * (len(stubs) != 1)} to write")
    for function, place in stubs:
        print(f"  {function:<24} {place}")
    print(f"next: pip install -e {args.dir}; in it, python -m tinytransformer gradcheck grades the student's work")
    return 0
