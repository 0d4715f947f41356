"""A saved tokenizer file, read as untrusted: anyone may have written it, so every bound is checked before the
work it would cost, and every failure is one ValueError line naming the file.

    read_json(path, who)          a regular file (a FIFO would wait forever), at most MAX_FILE_BYTES (checked
                                  before reading); before parsing, shape_problem: at most MAX_NESTING deep,
                                  and no more strings and values than MAX_VOCAB_SIZE ids need
    check_vocab_size(n_ids)       at most MAX_VOCAB_SIZE ids (checked before any is built)
    check_regular_file(path, who) saving: an existing path must be a regular file, never a FIFO or a device

The subclasses check the rest (bpe.BPE.from_file: each merge names earlier ids only, and no token is longer
than the text its row spells, so what is built is at most the size of the file).
"""
import json
import os
import reprlib
import stat

from ..files import OutputError, kind_of

FILE_FORMAT = "tinytransformer tokenizer"
FILE_VERSION = 1

MAX_FILE_BYTES = 8 * 2**20       # GPT-2's 50,000 merges take 1.2 MB in this format
MAX_NESTING = 3                  # {"merges": [[a, b, text], ...]} is three brackets deep; 200,000 would crash json
MAX_VOCAB_SIZE = 2**18           # ids a file may define (the largest published vocabularies hold about 256,000)


def check_vocab_size(n_ids):
    """A file's tokenizer may define at most MAX_VOCAB_SIZE ids (checked before they are built)."""
    if n_ids > MAX_VOCAB_SIZE:
        raise ValueError(f"it defines {n_ids} ids; a tokenizer has at most {MAX_VOCAB_SIZE}")


def short(value):
    """repr(value), cut to a few dozen characters: an error message stays one short line whatever a file holds."""
    return SHORT.repr(value)


SHORT = reprlib.Repr()
SHORT.maxstring, SHORT.maxother, SHORT.maxlist, SHORT.maxlevel = 40, 40, 4, 2

MARKS = b"[{]},:"                                               # brackets, and what separates two values
NOT_A_MARK = bytes(b for b in range(256) if b not in MARKS)
AS_PARENTHESES = bytes.maketrans(b"[{]}", b"(())")


def read_json(path, who):
    """The JSON in the file at path: a regular file, at most MAX_FILE_BYTES (checked before reading), UTF-8, of
    the shape shape_problem allows (checked before parsing). Any failure is one ValueError line naming path;
    FileNotFoundError if there is no file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)     # a FIFO opens at once, without a writer
    except FileNotFoundError:
        raise FileNotFoundError(f"{who}: no tokenizer file at {path}") from None
    except OSError as error:
        raise ValueError(f"{who}: {path} cannot be read ({error.strerror})") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f"{who}: {path} is {kind_of(status.st_mode)}, not a tokenizer file")
        if status.st_size <= MAX_FILE_BYTES:
            with os.fdopen(descriptor, "rb", closefd=False) as f:
                data = f.read(status.st_size + 1)
                if len(data) > status.st_size:                     # it grew meanwhile: read on, to the limit
                    data += f.read(MAX_FILE_BYTES + 1 - len(data))
    except OSError as error:
        raise ValueError(f"{who}: {path} cannot be read ({error.strerror})") from None
    finally:
        os.close(descriptor)
    size = status.st_size if status.st_size > MAX_FILE_BYTES else len(data)
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{who}: {path} holds {size} bytes; a tokenizer file is at most {MAX_FILE_BYTES} "
                         f"({MAX_FILE_BYTES >> 20} MiB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{who}: {path} is not a readable tokenizer file ({error})") from None
    problem = shape_problem(text)
    if problem:
        raise ValueError(f"{who}: {path} {problem}")
    try:
        return json.loads(text)
    except ValueError as error:                  # JSONDecodeError, or a number of 5,000 digits
        raise ValueError(f"{who}: {path} is not a readable tokenizer file ({error})") from None


def shape_problem(text):
    """Why the JSON text cannot be a tokenizer file, found before parsing it; None if it may be one.

    json.loads recurses once per bracket (a file nested 200,000 deep crashes it) and builds an object per
    value (a file of "[],[],..." makes millions). A tokenizer file nests MAX_NESTING deep, and per id holds
    one string and four values ([a, b, text]: a list, two ids, a string). Each step below runs in C over the
    whole text, at about the speed of a copy.
    """
    # 1. escapes out of the way (an escaped backslash, then an escaped quote), so every quote left opens or
    #    closes a string, and what lies between the strings is the rest of the file
    plain = text.replace("\\\\", "__").replace('\\"', "__")
    n_strings = (plain.count('"') + 1) // 2
    if n_strings > MAX_VOCAB_SIZE + 64:
        return f"holds {n_strings} strings; a tokenizer file holds one per id, at most {MAX_VOCAB_SIZE} ids"
    marks = "".join(plain.split('"')[::2]).encode("utf-8").translate(None, NOT_A_MARK)
    # 2. every value but the first of a list or object follows a comma or a colon: these and the opening
    #    brackets bound the values ("[a, b, text]," has four)
    n_marks = len(marks) - marks.count(b"]") - marks.count(b"}")
    if n_marks > 4 * MAX_VOCAB_SIZE + 64:
        return (f"holds {n_marks} opening brackets, commas and colons; a tokenizer file holds four per id, "
                f"at most {MAX_VOCAB_SIZE} ids")
    # 3. the depth: each pass deletes the innermost pairs "()", so after MAX_NESTING passes a pair left
    #    ("()") was nested deeper; a "(" left unpaired is a bracket never closed, each one level deeper
    brackets = marks.translate(AS_PARENTHESES, b",:")
    for _ in range(MAX_NESTING):
        brackets = brackets.replace(b"()", b"")
    if b"()" in brackets or brackets.count(b"(") > MAX_NESTING:
        return f"nests brackets more than {MAX_NESTING} deep; a tokenizer file nests {MAX_NESTING} deep"
    return None


def check_regular_file(path, who):
    """An existing path to save to must be a regular file (or a link to one): writing to a FIFO waits for a
    reader forever, and a device is not a file. A folder is left to files.check_outputs to name."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, TypeError, ValueError):
        return                                   # nothing there (or no path at all): check_outputs says which
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise OutputError(f"{who}: {path} is {kind_of(mode)}, not a regular file; a tokenizer is saved "
                          "only to a regular file")


def is_tokenizer_file(path):
    """True if path holds a tokenizer file (so saving over it loses nothing the user made)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(len(FILE_FORMAT) + 20).startswith(f'{{\n "format": "{FILE_FORMAT}"')
    except (OSError, UnicodeDecodeError):
        return False
