"""Command line: `python -m tinytransformer train | translate | check | assignment | grade | generate | embed`,
one module of cli/ each.

In a student edition a backward pass not written yet raises NotImplementedError("write softmax_backward
first: file:line"); a command that runs into one stops with that line, not a traceback (exit status 1).
Standard output closed by its reader (`| head -1`) ends a command quietly (exit status 141), after the
files it writes: each command writes its files before it prints its results.
"""
import os
import sys

from .cli import assignment, check, embed, generate, grade, handin, train, translate
from .cli.common import BadInput, Parser, open_closed_streams, shortened
from .course.edition import EditionError
from .files import FULL_DISK, reason
from .tools.speed_settings import use_speed_settings

PROG = "python -m tinytransformer"
COMMANDS = (train, translate, check, assignment, grade, handin, generate, embed)   # each: add_parser(commands) sets its run


def main(argv=None):
    """Run the command that argv (default: sys.argv[1:]) names; return the exit status (2: bad input; 130:
    Ctrl-C before the command finished, one line: training keeps its model, see train.StopSignals)."""
    open_closed_streams()                       # started with `>&-`: lines lost, never the work
    argv = sys.argv[1:] if argv is None else argv
    try:
        return run(argv)
    except KeyboardInterrupt:                   # while parsing, building the task or the model: nothing written yet
        named = [word for word in argv[:1] if word in {command.__name__.rsplit(".", 1)[-1] for command in COMMANDS}]
        print(f"{' '.join([PROG, *named])}: interrupted (Ctrl-C) before it finished", file=sys.stderr)
        return 130


def run(argv):
    """Parse argv and run its command -> the exit status."""
    parser = Parser(prog=PROG,
                    description="A Transformer in NumPy, with hand-derived backward passes: the encoder-decoder "
                                "(Transformer), the decoder-only GPT and the encoder-only BERT. At start-up the "
                                "command line calls tt.use_speed_settings(): one OpenBLAS thread (unless "
                                "OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set) and glibc keeping freed memory "
                                "for reuse. Importing the library sets neither.")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    args = parser.parse_args(argv)
    user_chose_threads = any(name in os.environ for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))
    use_speed_settings(blas_threads=None if user_chose_threads else 1)
    try:
        status = args.run(args)
        sys.stdout.flush()                      # what is still buffered: a closed pipe is found here, not at exit
        return status
    except (BadInput, EditionError) as error:
        print(f"{parser.prog} {args.command}: {shortened(str(error))}", file=sys.stderr)
        return 2
    except NotImplementedError as error:        # a student edition: a backward pass still to write
        print(f"{parser.prog} {args.command}: {shortened(str(error))}", file=sys.stderr)
        return 1
    except BrokenPipeError:                     # `... | head -1` closed standard output: stop quietly, as Unix tools do
        quiet_stdout()
        return 141                              # 128 + SIGPIPE, what a shell reports for such a tool
    except OSError as error:                    # a full disk under standard output (> /dev/full) or a file not
        if error.errno not in FULL_DISK:        # written through files.py: one line
            raise
        quiet_stdout()
        print(f"{parser.prog} {args.command}: {reason(error)}", file=sys.stderr)
        return 2


def quiet_stdout():
    """Point standard output at /dev/null, so that Python's last flush at exit does not fail on a closed pipe."""
    try:
        descriptor = os.open(os.devnull, os.O_WRONLY)
        os.dup2(descriptor, sys.stdout.fileno())
        os.close(descriptor)
    except (OSError, ValueError, AttributeError):     # not a real file (captured by a test): nothing to quiet
        pass


if __name__ == "__main__":
    sys.exit(main())
