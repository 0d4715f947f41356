"""Save a model (Transformer, GPT, BERT or the vision encoder) to one .npz file and load it back.

The file holds one array per named parameter ("embed.table",
"encoder.0.self_attn.W_q.W", ...), under the key "config" the
model's config (its family's: nn/config.py) as a JSON string, under "model" the class's name, and
under "step" the training step it was saved at (if the trainer said).
It is read with allow_pickle=False, so
loading a file can never run code. Anything that does not fit — no file, a
damaged file, a missing, extra or mis-shaped parameter, a config that does
not describe the parameters — is a clear error, never a half-loaded model.
The file is not trusted: every entry's zip record and .npy header are read
and checked (an .npy array, not encrypted, no Python objects, the size its
header claims, all of them against memory) before any array is read; the
model its config (a short flat JSON object) describes is built with a random
generator that draws no more numbers than the file holds, and its parameters'
names and shapes are compared with the headers, so a file claiming 10^11
tokens, 10^6 layers or an array of 5e9 elements (a zip bomb) costs nothing to
refuse. Every failure is one ValueError naming the file.
"""
import contextlib
import dataclasses
import json
import math
import numbers
import os
import tokenize
import typing
import zipfile
import zlib

import numpy as np

from .files import atomic_write, check_output, kind_of
from .memory import check_fits
from .nn import MODELS

CONFIG_KEY, MODEL_KEY, STEP_KEY = "config", "model", "step"
# what reading a damaged entry of a zip archive can raise
READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)
MAX_CONFIG_CHARACTERS = 10_000     # a config is one flat JSON object of a few hundred characters
# save_checkpoint stores entries uncompressed, and trained weights compress by a few percent: an entry that
# inflates over MAX_INFLATION times (past MIN_COMPRESSED bytes: a small bias of zeros may) is a zip bomb
MAX_INFLATION, MIN_COMPRESSED = 100, 2**14


def save_checkpoint(model, path, step=None, force=False):
    """Write every parameter of model and its config (and step, the training step, if given) to path (.npz).

    The file is written beside path under a temporary name and then renamed
    over it, so a crash or a full disk never leaves a half-written checkpoint. An existing
    file is only replaced if it is itself a checkpoint (checked again just before the rename), or with
    force. path must be a regular file or none (files.check_output). Weights holding NaN or infinite
    values are refused (load_checkpoint would refuse them too).
    """
    if type(model) not in MODELS.values():
        raise TypeError(f"save_checkpoint: model must be one of {list(MODELS)}, got {type(model).__name__}")
    if step is not None and (not isinstance(step, numbers.Integral) or isinstance(step, (bool, np.bool_))
                             or step < 0):
        raise ValueError(f"save_checkpoint: step must be None or an integer >= 0, got {step!r}")
    check_output("save_checkpoint", path, None)
    if os.path.exists(path) and not force and not is_checkpoint(path):
        raise FileExistsError(f"save_checkpoint: {path} exists and is not a tinytransformer checkpoint; "
                              "refusing to overwrite it (force=True replaces it)")
    arrays = {name: p.data for name, p in model.named_parameters()}
    broken = [name for name, array in arrays.items() if not np.all(np.isfinite(array))]
    if broken:
        raise ValueError(f"save_checkpoint: parameter {broken[0]} holds NaN or infinite values; "
                         "expected finite weights (did training diverge?)")
    arrays[CONFIG_KEY] = np.array(json.dumps(dataclasses.asdict(model.config)))   # a unicode scalar array
    arrays[MODEL_KEY] = np.array(type(model).__name__)
    if step is not None:
        arrays[STEP_KEY] = np.array(int(step))
    atomic_write(path, lambda f: np.savez(f, **arrays), may_replace=None if force else is_checkpoint)


def checkpoint_step(path):
    """The training step the checkpoint at path was saved at, or None if it does not say."""
    with open_archive(path) as (archive, entries):
        if STEP_KEY not in entries:
            return None
        step = read_small(archive, entries, STEP_KEY, path)
    if step.dtype.kind not in "iu" or step < 0:
        raise ValueError(f"checkpoint_step: {path} is damaged: its step is {step.dtype} {step.item()!r}; "
                         "expected an integer >= 0")
    return int(step)


def is_checkpoint(path):
    """True if path is a regular file, an .npz archive with a config entry (its parameters are not read)."""
    try:
        with open_archive(path) as (_, entries):
            return CONFIG_KEY in entries
    except (ValueError, OSError):
        return False


def load_checkpoint(path):
    """Read a file written by save_checkpoint -> the model it holds, of its class, in eval mode (dropout off).

    Call model.train() to continue training it. The file is not trusted: every entry's header is read
    and checked (name, dtype, shape, size against memory and against the config) before any array is.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load_checkpoint: expected a path (str), got {type(path).__name__}")
    if not os.path.lexists(path) or not os.fspath(path):
        raise FileNotFoundError(f"load_checkpoint: no checkpoint file at {path}")
    with open_archive(path) as (archive, entries):
        missing_keys = [key for key in (CONFIG_KEY, MODEL_KEY) if key not in entries]
        if missing_keys:
            raise ValueError(f"load_checkpoint: {path} has no {missing_keys[0]!r} entry; "
                             "it is not a tinytransformer checkpoint")
        model_class = read_model_class(read_small(archive, entries, MODEL_KEY, path), path)
        config = read_config(read_small(archive, entries, CONFIG_KEY, path), model_class.config_class, path)
        headers = {name: entry for name, entry in entries.items()
                   if name not in (CONFIG_KEY, MODEL_KEY, STEP_KEY)}
        model = build_within(model_class, config, {name: entry.shape for name, entry in headers.items()}, path)
        expected = dict(model.named_parameters())
        missing = [name for name in expected if name not in headers]
        extra = [name for name in headers if name not in expected]
        if missing or extra:
            raise ValueError(f"load_checkpoint: {path} does not match its config: "
                             f"missing parameters {missing}, unexpected entries {extra}")
        for name, p in expected.items():
            entry = headers[name]
            if entry.shape != p.shape or entry.dtype != p.dtype:
                raise ValueError(f"load_checkpoint: {path}: parameter {name} is {entry.dtype} {entry.shape} "
                                 f"but the config needs {p.dtype} {p.shape}")
        arrays = {name: read_entry(archive, entries, name, path) for name in expected}
    for name, saved in arrays.items():
        if not np.all(np.isfinite(saved)):
            raise ValueError(f"load_checkpoint: {path}: parameter {name} holds NaN or infinite values")
    for name, p in expected.items():
        p.data = arrays[name]
    return model.eval()


class Entry(typing.NamedTuple):
    """One array of an .npz archive, as its header describes it (nothing of the array itself read)."""
    info: zipfile.ZipInfo
    dtype: np.dtype
    shape: tuple


@contextlib.contextmanager
def open_archive(path):
    """Open the .npz archive at path and read every entry's header, trusting nothing: yields (the ZipFile,
    {name: Entry}). Each failure is a ValueError of one line naming the file.

    An .npz file is a zip archive of .npy files; a truncated one has lost the zip's directory at its end,
    so it is not recognised as a zip at all. Each entry must be an .npy file, not encrypted, stored or
    deflated, its header one NumPy writes (no Python objects, which only a pickle reads), and the size
    the header claims must be the size the zip directory gives it; all of them together must fit in memory.
    """
    if os.path.exists(path) and not os.path.isfile(path):       # stat only: a FIFO is never opened
        raise ValueError(f"load_checkpoint: {path} is not a regular file: it is {kind_of(os.stat(path).st_mode)}")
    try:
        archive = zipfile.ZipFile(path)
    except PermissionError:
        raise ValueError(f"load_checkpoint: {path}: permission denied (this user may not read it)") from None
    except FileNotFoundError:
        raise FileNotFoundError(f"load_checkpoint: no checkpoint file at {path}") from None
    except READ_ERRORS:
        raise ValueError(f"load_checkpoint: {path} is not an .npz checkpoint: not a zip archive "
                         "(damaged, truncated, or another kind of file)") from None
    with archive:
        entries = {info.filename.removesuffix(".npy"): read_header(archive, info, path) for info in archive.infolist()}
        check_fits(sum(entry.info.file_size for entry in entries.values()), "its arrays", f"load_checkpoint: {path}")
        yield archive, entries


def read_header(archive, info, path):
    """The Entry of one member of the archive, from its zip directory record and its .npy header."""
    damaged = f"load_checkpoint: {path} is damaged: entry {info.filename!r}"
    if not info.filename.endswith(".npy"):
        raise ValueError(f"{damaged} is not an .npy array")
    if info.flag_bits & 0x1:
        raise ValueError(f"{damaged} is encrypted; a checkpoint never is")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ValueError(f"{damaged} is compressed by method {info.compress_type}; expected stored or deflated")
    if info.file_size > MAX_INFLATION * max(info.compress_size, MIN_COMPRESSED):      # weights hardly compress
        raise ValueError(f"{damaged} inflates from {info.compress_size:,} to {info.file_size:,} bytes; "
                         f"weights never compress {MAX_INFLATION} times (a zip bomb?)")
    read = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    try:
        with archive.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version not in read:
                raise ValueError(f"it has .npy version {version}; expected 1.0 or 2.0")
            shape, _, dtype = read[version](f)
            header_bytes = f.tell()
    except (*READ_ERRORS, SyntaxError, tokenize.TokenError) as error:     # NumPy parses the header's text
        raise ValueError(f"{damaged} has no readable .npy header ({type(error).__name__}: {error})") from None
    if dtype.hasobject:
        raise ValueError(f"{damaged} holds Python objects, which only a pickle can read; allow_pickle is off")
    elements = math.prod(shape)
    if header_bytes + elements * dtype.itemsize != info.file_size:
        raise ValueError(f"{damaged}: its header claims {elements:,} elements of {dtype} but it holds "
                         f"{info.file_size - header_bytes:,} bytes")
    return Entry(info, dtype, tuple(shape))


def read_entry(archive, entries, name, path):
    """The array of one entry whose header open_archive checked."""
    try:
        with archive.open(entries[name].info) as f:
            return np.lib.format.read_array(f, allow_pickle=False)
    except READ_ERRORS as error:
        raise ValueError(f"load_checkpoint: {path} is damaged: {type(error).__name__}: {error}") from None


def read_small(archive, entries, name, path):
    """The array of one of the entries that are not parameters (config, model, step): a single value of
    a few hundred bytes, its size checked before it is read."""
    entry = entries[name]
    if entry.shape != () or entry.info.file_size > 4 * MAX_CONFIG_CHARACTERS + 1024:
        raise ValueError(f"load_checkpoint: {path} is damaged: entry {name!r} is {entry.dtype} {entry.shape} of "
                         f"{entry.info.file_size:,} bytes; expected one short value")
    return read_entry(archive, entries, name, path)


def read_config(entry, config_class, path):
    """The JSON string saved under "config" -> a config_class, the model family's config (it checks its
    own values).

    A config is one flat object of a few hundred characters: a longer text, or one nested too deep for
    Python's parser, is refused as invalid."""
    text = str(entry)
    try:
        if entry.dtype.kind != "U" or len(text) > MAX_CONFIG_CHARACTERS:
            raise ValueError(f"expected a JSON text of at most {MAX_CONFIG_CHARACTERS:,} characters, "
                             f"got {entry.dtype} of {len(text):,} characters")
        fields = json.loads(text)
        if not isinstance(fields, dict):
            raise ValueError(f"expected a JSON object, got {type(fields).__name__}")
        return config_class(**fields)
    except RecursionError:
        raise ValueError(f"load_checkpoint: {path} has an invalid config (nested too deep)") from None
    except (json.JSONDecodeError, TypeError, ValueError) as error:
        raise ValueError(f"load_checkpoint: {path} has an invalid config ({error})") from None


class DrawBudget(np.random.Generator):
    """np.random.default_rng(0), except that it draws at most `budget` numbers in all for the weights
    (uniform, standard_normal: what the layers draw theirs with) and raises DrawBudget.Spent before a draw
    that would pass it, so before the array is allocated."""

    class Spent(Exception):
        pass

    def __init__(self, budget):
        super().__init__(np.random.PCG64(0))          # the stream of default_rng(0)
        self.left = budget

    def spend(self, size):
        self.left -= math.prod((size,) if isinstance(size, int) else size)
        if self.left < 0:
            raise DrawBudget.Spent

    def uniform(self, low=0.0, high=1.0, size=None):
        """Generator.uniform, once the budget allows size numbers."""
        self.spend(size)
        return super().uniform(low, high, size)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        """Generator.standard_normal, once the budget allows size numbers."""
        self.spend(size)
        return super().standard_normal(size, dtype, out)


def build_within(model_class, config, shapes, path):
    """The model config describes (weights as rng=0 draws them), built without drawing more numbers than
    the file holds (shapes: {name: shape} from its headers): a config that describes a larger model stops
    before its first weight matrix past that, in one line. Its position table must fit in memory too."""
    held = sum(math.prod(shape) for shape in shapes.values())
    check_fits(8 * (held + config.max_len * config.d_model), "the model its config describes",
               f"load_checkpoint: {path}")
    try:
        return model_class(config, rng=DrawBudget(held))
    except DrawBudget.Spent:
        raise ValueError(f"load_checkpoint: {path} does not match its config: the model it describes has "
                         f"more parameters than the file's {held:,}") from None


def read_model_class(entry, path):
    """The name saved under "model" -> the class."""
    name = str(entry)
    if name in MODELS and entry.dtype != np.array(name).dtype:     # NumPy drops trailing NULs: "Transformer\0"
        raise ValueError(f"load_checkpoint: {path} is damaged: its model name {name!r} is followed by NUL "
                         "characters")
    if name not in MODELS:
        raise ValueError(f"load_checkpoint: {path} holds a model of unknown class {name!r}; "
                         f"this version knows {list(MODELS)}")
    return MODELS[name]
