"""tasks/text.py: the shipped text and its split into a training and a held-out part."""
import numpy as np
import pytest

from tinytransformer.tasks import text


def test_the_text_ships_with_the_package_and_splits_without_overlap():
    corpus = text.CharCorpus()
    assert len(corpus.text) == 6110 and corpus.text.startswith("The Lighthouse Keeper's Year")
    assert corpus.decode(corpus.encode("the lamp")) == "the lamp"
    n = len(corpus.train_ids) + len(corpus.held_out_ids)
    assert n == len(corpus.text) and len(corpus.held_out_ids) == round(0.1 * n)
    assert corpus.decode(corpus.held_out_ids) == corpus.text[len(corpus.train_ids):]   # the end of the text
    batch = corpus.training_batch(8, 32, np.random.default_rng(0))
    np.testing.assert_array_equal(batch.ids[:, 1:], batch.targets[:, :-1])  # targets: the next character
    held = corpus.held_out_batch(32)
    assert held.ids.shape == ((len(corpus.held_out_ids) - 1) // 32, 32)
    assert corpus.decode(held.ids[0]) == corpus.text[len(corpus.train_ids):][:32]
    with pytest.raises(ValueError, match="not in the text's alphabet"):
        corpus.encode("\u00e9")
