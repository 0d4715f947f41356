"""tasks/cloze.py: classify's cloze readout, the masked-LM head asked for y's first symbol."""
import numpy as np

from tinytransformer import functional as F
from tinytransformer.tasks import cloze, masked_lm
from tinytransformer.vocabulary import MASK, PAD

from helpers import analytic_gradients, assert_a_wrong_gradient_is_caught, assert_gradients_along_random_directions, \
    tiny_bert


def test_the_cloze_readout_reads_the_masked_lm_head_at_the_first_symbol_of_y():
    model = tiny_bert()                                              # no [CLS] head: the cloze readout needs none
    ids, _ = masked_lm.make_sequences(5, 4, 4, rng=4, k_min=2)      # halves of 2 to 4, padded
    logits = cloze.cloze_logits(model, ids).data                 # (5, 2)
    for row, got in zip(ids, logits):
        k = np.count_nonzero(row[1:] != PAD) // 2
        asked = row.copy()
        asked[1 + k] = MASK                                          # y's first symbol hidden
        at_y = model(asked[None]).data[0, 1 + k]                     # (V,) the masked-LM logits there
        np.testing.assert_allclose(got, [at_y[row[1]], at_y[row[k]]], rtol=1e-12)   # x's first, x's last


def test_the_cloze_readout_gradient_along_random_directions():
    model = tiny_bert()
    ids, labels = masked_lm.make_sequences(4, 4, 4, rng=6, k_min=3)
    loss_of = lambda m: F.cross_entropy(cloze.cloze_logits(m, ids), labels)   # noqa: E731
    grads = analytic_gradients(model, loss_of)
    assert_gradients_along_random_directions(model, loss_of, grads)
    assert_a_wrong_gradient_is_caught(model, loss_of, "embed.table")
