"""Tokenizers: text to token ids and back, by characters or by byte-level BPE.

    char.py          CharTokenizer: one id per character of the training text
    bpe.py           BPE: byte-level byte-pair encoding; pair_counts and merge, the whole algorithm
    split.py         GPT-2's pre-split of text into words and numbers, and why
    incremental.py   BPE fast: count the pairs once, then update only what each merge touches
    base.py          what both share: the checks, special tokens, encode and decode, saving
    saved_file.py    reading a saved file as untrusted: every bound checked before the work it costs
    wordpiece.py     WordPiece, BERT's tokenizer: each word cut into the longest pieces of a vocabulary

    tok = BPE.train(text, vocab_size=512)          # or CharTokenizer.train(text)
    ids = tok.encode("any text at all")            # list of int, each < tok.vocab_size
    tok.decode(ids)                                # the text again
    tok.save("tok.json"); tok = BPE.load("tok.json")

    tok = BPE.train(text, 512, special_tokens=["<|endoftext|>"])    # documents between separators
    tok.encode("one<|endoftext|>two", allowed_special="all")        # the separator's id between them
    ids = tok.encode_iterable(open("big.txt"))                      # lazily, a stretch of lines at a time

Both have one interface: encode, encode_iterable, decode, vocab_size, vocab
(one bytes per id), special_tokens, token_text, save and load. The standard
library does it all; NumPy only lets decode take an array of ids.
"""
from .bpe import BPE, learn_merges_naive, merge, pair_counts
from .char import CharTokenizer
from .incremental import learn_merges
from .split import SPLIT_PATTERN
from .wordpiece import WordPiece

__all__ = ["BPE", "CharTokenizer", "SPLIT_PATTERN", "learn_merges", "learn_merges_naive", "merge", "pair_counts",
           "WordPiece"]
