"""tasks/text.py: the two texts, their split into a training and a held-out part, both tokenizers,
and the held-out loss per character that compares them."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.tasks import make_task, text
from tinytransformer.tokenizer import BPE
from tinytransformer.vocabulary import N_SPECIAL

TINY = dict(d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0, dtype="float64")


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
    assert corpus.alphabet == "".join(sorted(set(corpus.text)))
    assert corpus.vocab_size == N_SPECIAL + len(corpus.alphabet)
    with pytest.raises(ValueError, match="not in the vocabulary: 'é'"):
        corpus.encode("\u00e9")


def test_python_docs_is_the_language_reference_of_this_python():
    docs = text.load_text("python-docs")
    from pydoc_data.topics import topics
    assert docs == text.load_text("python-docs") and len(docs) > 400_000
    assert docs.startswith(topics[min(topics)])                       # the topics in sorted order
    with pytest.raises(ValueError, match=r"load_text: name must be one of \('story', 'python-docs'\), got 'poems'"):
        text.load_text("poems")


def test_bpe_is_learned_from_the_training_part_only():
    story = text.load_text()
    corpus = text.TextCorpus(story, tokenizer="bpe", bpe_size=300)
    cut = int(round(len(story) * 0.9))
    assert corpus.tokenizer.merges == BPE.train(story[:cut], 300).merges
    assert corpus.decode(corpus.train_ids) == story[:cut] and corpus.decode(corpus.held_out_ids) == story[cut:]
    assert corpus.vocab_size == N_SPECIAL + 300 and corpus.train_ids.min() >= N_SPECIAL
    assert len(corpus.train_ids) < 0.7 * cut                          # a BPE token can hold several characters
    assert text.TextCorpus(story, tokenizer="bpe").tokenizer.vocab_size == text.BPE_SIZE


def test_characters_count_where_a_character_starts():
    corpus = text.TextCorpus("aé" * 50, tokenizer="bpe", bpe_size=256)     # no merges: one id per byte
    ids = corpus.encode("aéé")
    assert len(ids) == 5 and corpus.characters(ids) == 3
    assert corpus.characters(ids[:2]) == 2 and corpus.characters(ids[2:3]) == 0    # "a" + the first byte of "é"
    chars = text.CharCorpus("aé" * 50)
    assert chars.characters(chars.encode("aéé")) == 3


@pytest.mark.parametrize("tokenizer, bpe_size", [("char", None), ("bpe", 300)])
def test_held_out_loss_per_character(tokenizer, bpe_size):
    task = make_task("text", seq_len=16, tokenizer=tokenizer, bpe_size=bpe_size)
    model = tt.nn.GPT(task.config(**TINY), rng=0)
    per_token = task.evaluate(model)
    # by hand: -ln p of every held-out target, summed, over the characters the targets spell
    ids, targets = task.held_out
    logp = F.log_softmax(model(ids)).data                                       # (n, 16, V)
    total = -np.take_along_axis(logp, targets[..., None], axis=-1).sum()
    characters = len(task.corpus.decode(targets.ravel()))                      # the story is ASCII
    assert task.nats_per_character(per_token) == pytest.approx(total / characters, rel=1e-12)
    measures = task.held_out_measures(per_token)
    assert measures["characters_per_token"] == pytest.approx(characters / targets.size, rel=1e-12)
    assert measures["held_out_nats_per_character"] == task.nats_per_character(per_token)
    if tokenizer == "char":
        assert task.nats_per_character(per_token) == pytest.approx(per_token, rel=1e-12)
    else:
        assert task.characters_per_token > 1.5                # 44 merges: common short words


def test_text_task_options_and_their_errors():
    task = make_task("text", tokenizer="bpe", bpe_size=280)
    assert task.corpus.vocab_size == N_SPECIAL + 280 and task.config().vocab_size == N_SPECIAL + 280
    assert "BPE of 280 tokens" in task.describe() and "the story" in task.describe()
    with pytest.raises(ValueError, match="bpe_size is for tokenizer='bpe'"):
        make_task("text", tokenizer="char", bpe_size=300)
    with pytest.raises(ValueError, match="bpe_size must be at least 256"):
        make_task("text", tokenizer="bpe", bpe_size=200)
    with pytest.raises(ValueError, match=r"tokenizer must be one of \('char', 'bpe'\), got 'words'"):
        make_task("text", tokenizer="words")
    with pytest.raises(ValueError, match="text: text_name must be one of"):
        make_task("text", text_name="poems")
    with pytest.raises(ValueError, match="give either a corpus or text_name, tokenizer and bpe_size"):
        make_task("text", corpus=text.CharCorpus(), tokenizer="bpe")


def test_text_task_shows_and_plots_bpe_tokens():
    task = make_task("text", seq_len=16, tokenizer="bpe", bpe_size=300)
    model = tt.nn.GPT(task.config(**TINY), rng=0)
    lines = task.show(model, n=1)
    assert lines[0].startswith("generated after ") and len(lines[1]) > 100     # about 200 characters
    (ids,), keys, queries = task.plot_example()
    assert keys == queries and "".join(keys) == task.corpus.decode(ids[0])      # one name per token


def test_the_modern_block_has_gpt2s_feed_forward_weights_and_none_of_its_biases_or_position_table():
    gpt2, modern = (make_task("text", block=block) for block in ("gpt2", "modern"))
    assert (gpt2.config().positions, gpt2.config().norm, gpt2.config().activation) == ("learned", "layer", "gelu")
    c = modern.config()
    assert (c.positions, c.norm, c.activation, c.bias, c.norm_first, c.d_ff) == ("rope", "rms", "swiglu", False,
                                                                                 True, 85)
    assert modern.config(d_ff=128).d_ff == 128                              # --d-ff sets SwiGLU's own width
    sizes = {}
    for task in (gpt2, modern):
        model = task.new_model(task.config(), np.random.default_rng(0))
        sizes[task.block] = {name: p.data.size for name, p in model.named_parameters()}
    feed_forward = {block: sum(n for name, n in named.items() if "feed_forward" in name and name.endswith(".W"))
                    for block, named in sizes.items()}
    assert feed_forward == {"gpt2": 2 * 2 * 64 * 128, "modern": 2 * 3 * 64 * 85}   # 32,768 and 32,640
    # gpt2 has besides: biases (4 * 64 + 128 + 64 a layer), betas (2 * 64 a layer and 64), the (32, 64) position
    # table, and 128 feed-forward weights more: 2 * 448 + 320 + 2,048 + 128 = 3,392 of 72,064
    assert (sum(sizes["gpt2"].values()), sum(sizes["modern"].values())) == (72_064, 68_672)
    with pytest.raises(ValueError, match=r"text: block must be one of \('gpt2', 'modern'\), got 'llama'"):
        make_task("text", block="llama")
