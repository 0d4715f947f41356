"""Tokenizers: text to token ids and back, by characters or by byte-level BPE.

    char.py          CharTokenizer: one id per character of the training text
    bpe.py           BPE: byte-level byte-pair encoding; pair_counts and merge, the whole algorithm
    split.py         GPT-2's pre-split of text into words and numbers, and why
    incremental.py   BPE fast: count the pairs once, then update only what each merge touches
    base.py          what both share: the checks, special tokens, decode, the saved file

    tok = BPE.train(text, vocab_size=512)          # or CharTokenizer.train(text)
    ids = tok.encode("any text at all")            # list of int, each < tok.vocab_size
    tok.decode(ids)                                # the text again
    tok.save("tok.json"); tok = BPE.load("tok.json")

Both have one interface: encode, decode, vocab_size, vocab (one bytes per
id), special_tokens, token_text, save and load. The standard library does
it all; NumPy only lets decode take an array of ids.
"""
from .bpe import BPE, learn_merges_naive, merge, pair_counts
from .char import CharTokenizer
from .incremental import learn_merges
from .split import SPLIT_PATTERN

__all__ = ["BPE", "CharTokenizer", "SPLIT_PATTERN", "learn_merges", "learn_merges_naive", "merge", "pair_counts"]
