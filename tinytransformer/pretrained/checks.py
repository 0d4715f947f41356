"""What every reader of a published model's files shares: the file as untrusted, one ValueError line naming it.

    file = UntrustedFile(path, who)          # it exists, and is a regular file (or a folder, where allowed)
    file.fail("has no 'x' setting")          # ValueError: "who: path has no 'x' setting"
    file.guarded(read, "is not a GGUF file") # any error of a reader of the format becomes that one line
    file.value(name, got, int, 1, 1024)      # a setting of the right kind within bounds, else one line
    check_shapes(file, expected, shapes)     # every tensor present, none extra, each of the shape expected
    load_parameters(file, model, arrays)     # finite numbers of each parameter's shape, in its dtype
"""
import math
import numbers
import os
import stat

import numpy as np

from ..files import kind_of
from ..tokenizer.saved_file import short


class UntrustedFile:
    """A path to read as untrusted: every failure is one ValueError naming it."""

    def __init__(self, path, who, folder=False):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"{who}: expected a path (str), got {type(path).__name__}")
        self.path, self.who = os.fspath(path), who
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            raise FileNotFoundError(f"{who}: no file at {self.path}") from None
        except OSError as error:
            self.fail(f"cannot be read ({error.strerror})")
        if not stat.S_ISREG(mode) and not (folder and stat.S_ISDIR(mode)):
            self.fail(f"is {kind_of(mode)}, not a {'file or folder' if folder else 'file'} of a model")

    def fail(self, problem):
        raise ValueError(f"{self.who}: {self.path} {problem}") from None

    def guarded(self, read, problem, exact=False):
        """read() -> its result; any error it raises becomes problem (with the error's own words) on one line.
        exact: only a ValueError, which reads as the reason (a config or tokenizer refusing a value)."""
        try:
            return read()
        except ValueError as error:
            self.fail(f"{problem}: {one_line(error)}")
        except ImportError:                         # the optional extra is missing: not the file's fault
            raise
        except Exception as error:                  # a reader of a damaged file can fail in any way
            if exact:
                raise
            self.fail(f"{problem} ({type(error).__name__}: {one_line(error)})")

    def value(self, name, got, kind, low=None, high=None):
        """got as kind (int: an integer in [low, high]; float: a finite real in (low, high)), else one line."""
        if kind is int:
            ok = isinstance(got, numbers.Integral) and not isinstance(got, bool) and \
                (low is None or got >= low) and (high is None or got <= high)
            bounds = f"an integer in [{low}, {high}]"
        else:
            ok = isinstance(got, numbers.Real) and not isinstance(got, bool) and math.isfinite(got) and \
                (low is None or got > low) and (high is None or got < high)
            bounds = f"a finite number in ({low}, {high})"
        if not ok:
            self.fail(f"has {name} = {short(got)}; expected {bounds}")
        return kind(got)


def one_line(error):
    """An error's message on one line, cut to a few hundred characters."""
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:297] + "..."


def check_shapes(file, expected, shapes):
    """expected {name: shape} (what the config needs), shapes {name: shape} (what the file holds): the same
    names and shapes, else one line naming the first difference."""
    missing = [name for name in expected if name not in shapes]
    if missing:
        file.fail(f"has no tensor {missing[0]!r}" + (f" (and {len(missing) - 1} more missing)" if len(missing) > 1
                                                      else ""))
    extra = [name for name in shapes if name not in expected]
    if extra:
        file.fail(f"holds a tensor {short(extra[0])} this model does not have")
    for name, shape in expected.items():
        if tuple(shapes[name]) != tuple(shape):
            file.fail(f"has {name} of shape {tuple(shapes[name])}; its settings need {tuple(shape)}")


def load_parameters(file, model, arrays):
    """Put arrays {parameter name: array} into model, each checked: every parameter given, of its shape,
    finite; stored contiguous in the model's dtype."""
    for name, p in model.named_parameters():
        if name not in arrays:
            file.fail(f"gives no weights for {name}")
        array = arrays[name]
        if array.shape != p.shape:
            file.fail(f"gives {name} of shape {array.shape}; the model needs {p.shape}")
        if not np.all(np.isfinite(array)):
            file.fail(f"holds NaN or infinite values in {name}")
        p.data = np.ascontiguousarray(array, dtype=p.dtype)
