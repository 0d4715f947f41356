"""classify's cloze readout: BERT's masked-LM head, asked to fill y's first symbol, answers copy or reverse.

y's first symbol is hidden by [MASK]: x's first symbol there means a copy, x's
last a reverse. Pretraining taught the head exactly this, so the readout needs
no new weights (bert_tasks.py's ClassifyTask; the other readout, "cls", is a
new head on [CLS], as BERT fine-tunes).
"""
import numpy as np

from .. import functional as F
from ..vocabulary import MASK
from .masked_lm import half_lengths


def cloze_logits(model, ids):
    """classify's cloze readout: ids (B, T) corpus sequences -> logits (B, 2) of copy and reverse.

    y's first symbol is replaced by [MASK] and the masked-LM head is asked what belongs there: its
    logit of x's first symbol is the logit of "copy", of x's last symbol that of "reverse".
    """
    B, T = ids.shape
    rows = np.arange(B)
    k = half_lengths(ids)                                                    # (B,) each row's half length
    asked = ids.copy()
    asked[rows, 1 + k] = MASK                                                # y starts at 1 + k
    x = model.encode(asked)                                                  # (B, T, d_model)
    # Both picks are products with one-hot arrays, as BERT.first_position: the tape has no indexing op.
    at = np.zeros((B, 1, T), dtype=x.dtype)                                  # (B, 1, T) one-hot of the asked position
    at[rows, 0, 1 + k] = 1.0
    # backward: dx = at^T @ dout, so only position 1 + k of each row gets a gradient
    logits = model.logits(F.matmul(at, x))                                   # (B, 1, d_model) -> (B, 1, V)
    candidates = np.zeros((B, logits.shape[-1], 2), dtype=x.dtype)           # (B, V, 2) one-hot columns
    candidates[rows, ids[:, 1], 0] = 1.0                                     # x's first symbol: a copy
    candidates[rows, ids[rows, k], 1] = 1.0                                  # x's last symbol: a reverse
    # backward: dlogits = dout @ candidates^T, so only the two candidate symbols' logits get one
    return F.reshape(F.matmul(logits, candidates), (B, 2))                  # (B, 1, 2) -> (B, 2)
