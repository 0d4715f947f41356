"""What every command shares: one line for a user's mistake, never a usage dump or a traceback."""
import argparse
import contextlib
import os
import signal
import sys
import threading


MAX_LINE = 1000        # characters in a one-line error: a 300 KB value is shown by its two ends


class BadInput(Exception):
    """A value on the command line that cannot work: one line for the user, no traceback."""


def shortened(text, limit=MAX_LINE):
    """text, or its two ends with how much was left out between them if it is longer than limit."""
    if len(text) <= limit:
        return text
    return f"{text[:limit // 2]} ... ({len(text) - limit:,} characters left out) ... {text[-(limit // 2):]}"


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake on the command line is one line (and a pointer to --help), not the usage."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def seed(text):
    """argparse type of --seed: an integer >= 0 (what np.random.default_rng takes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def say(text):
    """Print text on standard output now (flushed). Standard output on a full disk or a device that refuses it
    is BadInput; a closed pipe (`| head -1`) raises BrokenPipeError, which __main__ ends quietly."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        raise
    except OSError as error:
        from ..files import reason
        raise BadInput(f"standard output cannot be written: {reason(error)}") from None


def tell(text):
    """Print text on standard error, if it can be written: a closed or full stderr (`2>&-`, `2>/dev/full`, a
    reader gone) loses the line, never the work whose result it reports."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def open_closed_streams():
    """Point a standard stream the command was started without (`>&-`, `2>&-`) at /dev/null: its lines are lost,
    not the work, and no file the command opens takes the stream's descriptor (where a child's output would land)."""
    for descriptor, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(descriptor)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != descriptor:
                os.dup2(opened, descriptor)
                os.close(opened)
        if getattr(sys, name) is None:
            setattr(sys, name, open(descriptor, mode, closefd=False))


class Stopped(Exception):
    """A stop signal came (its name is the message): the work under way stops at once and undoes itself."""


@contextlib.contextmanager
def signals_stop_at_once(ignore=False):
    """While open: Ctrl-C, SIGTERM and SIGHUP raise Stopped("SIGTERM") wherever the work is, for it to remove what
    it half made (a student edition); with ignore, they are ignored (the removal itself runs whole). Outside the
    main thread signals are left alone."""
    def stop(number, frame):
        raise Stopped(signal.Signals(number).name)
    numbers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, signal.SIG_IGN if ignore else stop) for number in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
