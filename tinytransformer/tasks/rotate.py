"""rotate for the encoder-decoder Transformer: the source rotated left by one (its first symbol moves to the end)."""
import dataclasses

import numpy as np

from ..vocabulary import PAD
from .sequences import SequenceTask


def rotate_target(src, lengths):
    """rotate's target: each row's symbols from the second on, then its first, PAD where the source has PAD, (B, T)."""
    T = src.shape[1]
    positions = np.arange(T)                                                 # (T,)
    # position t of the rotated row reads position (t + 1) mod length of the source
    source_index = (positions[None, :] + 1) % lengths[:, None]              # (B, T)
    return np.where(src != PAD, np.take_along_axis(src, source_index, axis=1), PAD)


@dataclasses.dataclass
class RotateTask(SequenceTask):
    """rotate for the encoder-decoder Transformer: the source rotated left by one; evaluated by greedy decoding."""

    name = "rotate"
    target = staticmethod(rotate_target)
