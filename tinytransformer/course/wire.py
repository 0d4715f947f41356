"""Arrays, tuples and numbers across a process boundary without pickle: an .npz file and a JSON outline.

    arrays = {}; outline = encode((dout, cache), arrays)      # arrays gets "a0", "a1", ...
    decode(outline, arrays)                                    # -> (dout, cache) again

A value is an ndarray of numbers (stored in the .npz by key), a tuple or list
of at most SEQUENCE values, None, a bool, int, float or short str. Anything
else (an object array, a dict, a class instance, a longer tuple) is written
as {"other": its type's name} ("tuple of 255000 values") and
read back as Other(that name), one plain record: a student's backward that
returns one fails the op's contract by that name, and no class is ever made
from what a child sends.

What the child sends is read as data that may be hostile, with bounds checked
before the bytes they guard are read: the outline at most OUTLINE_BYTES,
every text in it cut to TEXT characters and stripped of control characters,
each array's header read first (numbers only: bool, int, float, complex; at
most 8 axes) and all arrays of a message at most ARRAY_BYTES together, and
an outline at most DEPTH deep with at most ITEMS values. Files are read with
allow_pickle=False, so a file cannot run code.
"""
import json
import zipfile
from typing import NamedTuple

import numpy as np

OUTLINE_BYTES = 2 ** 18        # bytes of an outline: an op's answers, texts included, take a few kB
ARRAY_BYTES = 2 ** 20          # bytes of all the arrays of one message: an op's answers take under 30 kB
TEXT = 2000                    # characters of one text (a message, an exception's text, a line of code)
DEPTH = 8                      # nesting of an outline: (grads, dout, cache), a cache's tuples, a shape
ITEMS = 4096                   # values in one outline
SEQUENCE = 64                  # values in one tuple or list: a cache holds a few, a backward returns one per input
NUMBERS = "biufc"              # the dtype kinds an array may have


class Other(NamedTuple):
    """A value that is not an array, a number, a text, None or a tuple or list: only its type's name crossed."""
    type_name: str


class Unreadable(ValueError):
    """What a message holds is not a value this format allows, or is over one of its bounds."""


def encode(value, arrays):
    """value as a JSON outline; each ndarray in it is put into arrays under a new key ('a0', 'a1', ...)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in NUMBERS:
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"array": key}
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        if len(value) > SEQUENCE:
            return {"other": f"{type(value).__name__} of {len(value)} values"}
        return {type(value).__name__: [encode(item, arrays) for item in value]}
    if isinstance(value, np.generic) and value.dtype.kind in NUMBERS:
        return value.item()
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value[:TEXT]
    return {"other": type(value).__name__[:60]}


def decode(outline, arrays):
    """The value an outline from encode stands for, its ndarrays taken from arrays; Unreadable if it is not one."""
    budget = [ITEMS]

    def value(item, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > DEPTH:
            raise Unreadable(f"an outline over {ITEMS} values or {DEPTH} deep")
        if item is None or isinstance(item, (bool, int, float, str)):
            return item
        if isinstance(item, dict) and len(item) == 1:
            (kind, inner), = item.items()
            if kind == "array" and isinstance(inner, str) and inner in arrays:
                return arrays[inner]
            if kind in ("tuple", "list") and isinstance(inner, list):
                items = [value(x, depth + 1) for x in inner]
                return tuple(items) if kind == "tuple" else items
            if kind == "other" and isinstance(inner, str):
                return Other(printable(inner, 60))
        raise Unreadable("a value this format does not hold")
    return value(outline, 0)


def printable(text, limit=TEXT):
    """text cut to limit characters, each control character (newlines, escapes, bidi marks) a space."""
    return "".join(c if c.isprintable() else " " for c in str(text)[:limit])


def texts_cleaned(outline):
    """The outline with every text in it (keys too) printable and at most TEXT characters."""
    if isinstance(outline, str):
        return printable(outline)
    if isinstance(outline, list):
        return [texts_cleaned(item) for item in outline]
    if isinstance(outline, dict):
        return {printable(key, 60): texts_cleaned(item) for key, item in outline.items()}
    return outline


def save(target, outline, arrays):
    """One .npz (to a path or a binary file): the arrays by key, and the outline as a JSON string under "outline"."""
    if not hasattr(target, "write"):
        with open(target, "wb") as f:
            return save(f, outline, arrays)
    np.savez(target, outline=np.array(json.dumps(outline)), **arrays)


def load(path):
    """(outline, arrays) of what save wrote (a path or a binary file), every bound checked before what it guards
    is read; Unreadable if one is crossed. No pickle."""
    with zipfile.ZipFile(path) as archive:
        names = [info.filename for info in archive.infolist()]
        if len(names) > ITEMS or "outline.npy" not in names or any(not name.endswith(".npy") for name in names):
            raise Unreadable("not an outline and arrays")
        outline = member(archive, "outline.npy", "U", OUTLINE_BYTES)
        total, arrays = 0, {}
        for name in names:
            if name != "outline.npy":
                array = member(archive, name, NUMBERS, ARRAY_BYTES - total)
                total += array.nbytes
                arrays[name.removesuffix(".npy")] = array
    if outline.ndim != 0:
        raise Unreadable("an outline that is not one text")
    return texts_cleaned(json.loads(str(outline))), arrays


def member(archive, name, kinds, most):
    """The array in one member of the archive, its header read first: refused (Unreadable) unless its dtype's
    kind is in kinds, it has at most 8 axes and it holds at most `most` bytes."""
    with archive.open(name) as f:
        version = np.lib.format.read_magic(f)
        if version not in READERS:
            raise Unreadable(f"an array format {version}")
        shape, _, dtype = READERS[version](f)
        size = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if dtype.kind not in kinds or dtype.hasobject or dtype.names or len(shape) > 8 or size > most:
            raise Unreadable(f"an array of {dtype} {shape}: answers are numbers, at most {most} bytes")
    with archive.open(name) as f:
        return np.lib.format.read_array(f, allow_pickle=False)


READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
