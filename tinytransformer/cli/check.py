"""`python -m tinytransformer check`: every op's backward pass graded against finite differences."""
import argparse

from ..course.grader import grade, op_names, passed, report
from ..gradcheck import PASS_ERROR
from .common import seed


def add_parser(commands):
    """Add the check command (grade every op's backward pass) to the command line's commands."""
    check = commands.add_parser(
        "check", help="grade every op's backward pass against finite differences",
        description="Grade every op's backward pass (and the tape's replay) against central differences "
                    f"in float64: one line per op and input, pass when the relative error is at most "
                    f"{PASS_ERROR:.0e}, a diagnosis for a FAIL where the mistake is recognised. Exit status 0 "
                    "only when every graded op passes.")
    check.add_argument("--ops", metavar="NAME[,NAME]", type=known_ops, default=None, action="extend",
                       help=f"grade only these ({', '.join(op_names())}); may be given more than once")
    check.add_argument("--seed", type=seed, default=0, help="seed of the random inputs and upstream gradients")
    check.set_defaults(run=run)


def known_ops(text):
    """--ops's value: a list of op names, each one the grader knows."""
    names = [name.strip() for name in text.split(",") if name.strip()]     # "linear," is "linear"
    if not names:
        raise argparse.ArgumentTypeError(f"expected op names, got {text!r}; the ops are: {', '.join(op_names())}")
    unknown = [name for name in names if name not in op_names()]
    if unknown:
        raise argparse.ArgumentTypeError(f"no op named {', '.join(unknown)}; the ops are: {', '.join(op_names())}")
    return names


def run(args):
    """Grade the ops asked for and print the report; return 0 when every op passes, else 1."""
    grades = grade(list(dict.fromkeys(args.ops)) if args.ops else None, seed=args.seed)     # each op once
    print("\n".join(report(grades)))
    return 0 if passed(grades) else 1
