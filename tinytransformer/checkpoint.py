"""Save a model (Transformer, GPT or BERT) to one .npz file and load it back.

The file holds one array per named parameter ("embed.table",
"encoder.0.self_attn.W_q.W", ...), under the key "config" the
TransformerConfig as a JSON string, under "model" the class's name, and
under "step" the training step it was saved at (if the trainer said).
Files written before models had a name hold a Transformer; files written
before a config field existed get that field's default; GPT files from before
its stack was called `layers` (it was `decoder`) are read under the new names. It is read with allow_pickle=False, so
loading a file can never run code. Anything that does not fit — no file, a
damaged file, a missing, extra or mis-shaped parameter, a config that does
not describe the parameters — is a clear error, never a half-loaded model.
A config is checked against the parameters in the file before any model is
built, so a file claiming 10^11 tokens or 10^6 layers costs nothing to refuse.
"""
import dataclasses
import json
import os
import zipfile
import zlib

import numpy as np

from .files import atomic_write, check_output
from .memory import check_fits, parameter_floor
from .nn import MODELS, TransformerConfig

CONFIG_KEY, MODEL_KEY, STEP_KEY = "config", "model", "step"
# parameters renamed since a checkpoint could be written: {class: [(old prefix, new prefix)]}
RENAMED = {"GPT": [("decoder.", "layers."), ("decoder_norm.", "final_norm.")]}
# what reading a damaged entry of a zip archive can raise
READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)


def save_checkpoint(model, path, step=None):
    """Write every parameter of model and its config (and step, the training step, if given) to path (.npz).

    The file is written beside path under a temporary name and then renamed
    over it, so a crash never leaves a half-written checkpoint. An existing
    file is only replaced if it is itself a checkpoint. Weights holding NaN or
    infinite values are refused (load_checkpoint would refuse them too).
    """
    if type(model) not in MODELS.values():
        raise TypeError(f"save_checkpoint: model must be one of {list(MODELS)}, got {type(model).__name__}")
    check_output("save_checkpoint", path, None)
    if os.path.exists(path) and not is_checkpoint(path):
        raise FileExistsError(f"save_checkpoint: {path} exists and is not a tinytransformer checkpoint; "
                              "refusing to overwrite it")
    arrays = {name: p.data for name, p in model.named_parameters()}
    broken = [name for name, array in arrays.items() if not np.all(np.isfinite(array))]
    if broken:
        raise ValueError(f"save_checkpoint: parameter {broken[0]} holds NaN or infinite values; "
                         "expected finite weights (did training diverge?)")
    arrays[CONFIG_KEY] = np.array(json.dumps(dataclasses.asdict(model.config)))   # a unicode scalar array
    arrays[MODEL_KEY] = np.array(type(model).__name__)
    if step is not None:
        arrays[STEP_KEY] = np.array(int(step))
    atomic_write(path, lambda f: np.savez(f, **arrays))


def checkpoint_step(path):
    """The training step the checkpoint at path was saved at, or None if it does not say."""
    arrays = read_arrays(path)
    return int(arrays[STEP_KEY]) if STEP_KEY in arrays else None


def is_checkpoint(path):
    """True if path is an .npz archive with a config entry (its parameters are not checked)."""
    try:
        return CONFIG_KEY in read_arrays(path)
    except ValueError:
        return False


def load_checkpoint(path):
    """Read a file written by save_checkpoint -> the model it holds, of its class, in eval mode (dropout off).

    Call model.train() to continue training it.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load_checkpoint: expected a path (str), got {type(path).__name__}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load_checkpoint: no checkpoint file at {path}")
    arrays = read_arrays(path)
    if CONFIG_KEY not in arrays:
        raise ValueError(f"load_checkpoint: {path} has no {CONFIG_KEY!r} entry; "
                         "it is not a tinytransformer checkpoint")
    model_class = read_model_class(arrays.pop(MODEL_KEY, np.array("Transformer")), path)
    arrays.pop(STEP_KEY, None)
    arrays = {renamed(model_class.__name__, name): array for name, array in arrays.items()}
    config = read_config(arrays.pop(CONFIG_KEY), path)
    check_config_fits(config, arrays, path)
    model = model_class(config, rng=0)
    expected = dict(model.named_parameters())
    missing = [name for name in expected if name not in arrays]
    extra = [name for name in arrays if name not in expected]
    if missing or extra:
        raise ValueError(f"load_checkpoint: {path} does not match its config: "
                         f"missing parameters {missing}, unexpected entries {extra}")
    for name, p in expected.items():
        saved = arrays[name]
        if saved.shape != p.shape or saved.dtype != p.dtype:
            raise ValueError(f"load_checkpoint: {path}: parameter {name} is {saved.dtype} {saved.shape} "
                             f"but the config needs {p.dtype} {p.shape}")
        if not np.all(np.isfinite(saved)):
            raise ValueError(f"load_checkpoint: {path}: parameter {name} holds NaN or infinite values")
    for name, p in expected.items():
        p.data = arrays[name]
    return model.eval()


def read_arrays(path):
    """Every entry of the .npz archive at path, read in full: {name: ndarray}.

    An .npz file is a zip archive of .npy files; a truncated one has lost the
    zip's directory at its end, so it is not recognised as a zip at all.
    """
    if not zipfile.is_zipfile(path):
        raise ValueError(f"load_checkpoint: {path} is not an .npz checkpoint: not a zip archive "
                         "(damaged, truncated, or another kind of file)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except READ_ERRORS as error:
        raise ValueError(f"load_checkpoint: {path} is damaged: {type(error).__name__}: {error}") from error


def read_config(entry, path):
    """The JSON string saved under "config" -> a TransformerConfig (which checks its own values)."""
    try:
        fields = json.loads(str(entry))
        return TransformerConfig(**fields)
    except (json.JSONDecodeError, TypeError, ValueError) as error:
        raise ValueError(f"load_checkpoint: {path} has an invalid config ({error})") from error


def check_config_fits(config, arrays, path):
    """Before building the model: the config must not describe more parameters than the file holds, and the
    model it describes (its parameters and position table, in float64) must fit in memory."""
    held, floor = sum(array.size for array in arrays.values()), parameter_floor(config, "embed.table" in arrays)
    if floor > held:
        raise ValueError(f"load_checkpoint: {path} does not match its config: the config describes at least "
                         f"{floor:,} parameters, the file holds {held:,}")
    check_fits(8 * (held + config.max_len * config.d_model), "the model its config describes",
               f"load_checkpoint: {path}")


def renamed(class_name, name):
    """A parameter's name in this version, for a file written when it had an older one (RENAMED)."""
    for old, new in RENAMED.get(class_name, []):
        if name.startswith(old):
            return new + name[len(old):]
    return name


def read_model_class(entry, path):
    """The name saved under "model" -> the class (a file older than the entry: the caller passes "Transformer")."""
    name = str(entry)
    if name not in MODELS:
        raise ValueError(f"load_checkpoint: {path} holds a model of unknown class {name!r}; "
                         f"this version knows {list(MODELS)}")
    return MODELS[name]
