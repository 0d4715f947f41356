"""What every command shares: one line for a user's mistake, never a usage dump or a traceback."""
import argparse


class BadInput(Exception):
    """A value on the command line that cannot work: one line for the user, no traceback."""


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
