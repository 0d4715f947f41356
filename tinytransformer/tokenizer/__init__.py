"""Tokenizers: text to token ids and back, by characters or by byte-level BPE.

    from tinytransformer.tokenizer import BPE, CharTokenizer

    tok = BPE.train(text, vocab_size=512)          # or CharTokenizer.train(text)
    ids = tok.encode("any text at all")            # list of int, each < tok.vocab_size
    tok.decode(ids)                                # the text again
    tok.save("tok.json"); tok = BPE.load("tok.json")

Both share one interface (base.py): encode, decode, vocab_size, vocab (one
bytes per id), special_tokens, save and load. The files, in reading order:
char.py (characters), bpe.py (BPE and its two helpers), split.py (GPT-2's
pre-split and why), incremental.py (training and encoding fast), base.py.
Standard library only.
"""
from .bpe import BPE, learn_merges_naive, merge, pair_counts
from .char import CharTokenizer
from .incremental import learn_merges
from .split import SPLIT_PATTERN

__all__ = ["BPE", "CharTokenizer", "SPLIT_PATTERN", "learn_merges", "learn_merges_naive", "merge", "pair_counts"]
