"""sort: the encoder-decoder reads a sequence of symbols and writes them in ascending order."""
import dataclasses

import numpy as np

from ..vocabulary import PAD
from .sequences import SequenceTask


@dataclasses.dataclass
class SortTask(SequenceTask):
    """sort for the encoder-decoder Transformer: the source's symbols, smallest first."""

    name = "sort"

    @staticmethod
    def target(src, lengths):
        last = np.where(src == PAD, np.iinfo(src.dtype).max, src)    # (B, T) PAD sorts after every symbol
        return np.where(src == PAD, PAD, np.sort(last, axis=1))       # (B, T) PAD stays where src has it
