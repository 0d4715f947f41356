"""Options with a command-line flag: each written once, beside the field it sets.

A task's data options are the fields of its dataclass; a field the command line
may set is declared with option(), which gives its default, its flag and its help:

    digits: int = option(2, "--digits", "digits of each number")

The training loop's settings (task.py's TrainSettings) are declared the same way,
and the model's sizes in MODEL_OPTIONS below (fields of nn/config.py's ModelConfig).
`python -m tinytransformer train` builds its options from these (cli/train.py):
the flag's type is the field's type (a bool is a switch), its default the task's own.

One flag, one meaning: tasks may share a flag (copy and mlm both have
--symbols), and then every task that declares it must give it the same field
name and the same type (n_symbols: int); the command line refuses to start
otherwise (a TypeError naming the flag and both fields). A new option that means
something else takes a new flag. The help may differ: `train --help` shows
each task's.
"""
import dataclasses
import typing
from typing import NamedTuple

from ..nn import ModelConfig

# The model's sizes the command line sets: a field every family shares (ModelConfig) -> (flag, help)
MODEL_OPTIONS = {
    "d_model": ("--d-model", "width of every token vector"),
    "n_heads": ("--heads", "attention heads (n_heads)"),
    "n_layers": ("--layers", "layers (the encoder-decoder: encoder layers, and as many decoder layers)"),
    "d_ff": ("--d-ff", "hidden width of the feed-forward sublayers"),
    "dropout": ("--dropout", "dropout probability"),
}


def option(default, flag, help, *, choices=None, metavar=None):
    """A dataclass field with its default, and the command line's flag for it and its help."""
    return dataclasses.field(default=default, metadata={"flag": flag, "help": help, "choices": choices,
                                                        "metavar": metavar})


class Flag(NamedTuple):
    """One option of the command line: the flag, the field it sets, and how argparse reads it."""
    flag: str             # "--seq-len"
    field: str            # "seq_len"
    help: str
    type: type            # int, float, str or bool (a switch)
    choices: tuple | None
    metavar: str | None


def value_type(annotation):
    """The type a field's value is read as: int | None -> int."""
    kinds = [kind for kind in typing.get_args(annotation) or (annotation,) if kind is not type(None)]
    return kinds[0]


def flags_of(cls):
    """The Flags declared with option() on the fields of the dataclass cls, in field order."""
    types = typing.get_type_hints(cls)                   # the annotations, even where written as strings
    return [Flag(field.metadata["flag"], field.name, field.metadata["help"], value_type(types[field.name]),
                 field.metadata["choices"], field.metadata["metavar"])
            for field in dataclasses.fields(cls) if "flag" in field.metadata]


def model_flags():
    """The Flags of MODEL_OPTIONS, typed by ModelConfig's fields."""
    types = typing.get_type_hints(ModelConfig)
    return [Flag(flag, name, help, value_type(types[name]), None, None) for name, (flag, help) in MODEL_OPTIONS.items()]
