"""Byte-level byte-pair encoding (BPE), as GPT-2: learn merges of frequent pairs, then encode with them.

Ids 0..255 are the 256 byte values, so any text is first its UTF-8 bytes and
nothing is ever out of the vocabulary: a character never seen in training
(an emoji, another script) is spelled in its bytes. Training repeats one step:
find the most frequent adjacent pair of ids and merge it into a new id (256,
257, ...), until the vocabulary has vocab_size ids. Ties go to the smaller
pair: (a, b) before (c, d) if a < c, or a == c and b < d; the same text gives
the same merges. Encoding applies the merges in the order they were learned.

The two helpers below, pair_counts and merge, are the whole algorithm, and
learn_merges_naive is BPE written with them alone: it recounts every pair after
every merge. BPE.train learns the same merges with incremental.learn_merges,
which counts once and then updates only what each merge touches.
"""
from collections import Counter

from .base import Tokenizer, check_special_tokens, check_unicode
from .incremental import N_BYTES, apply_merges, learn_merges
from .saved_file import check_vocab_size, short
from .split import SPLIT_PATTERN, compile_pattern, special_pattern, split_special, split_text

CACHE_LIMIT = 100_000       # chunks whose ids encode() remembers; then it starts again


def pair_counts(ids, counts=None, weight=1):
    """{(a, b): occurrences} of adjacent pairs in ids, each counted weight times, added into counts."""
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids, pair, new_id):
    """ids with every occurrence of pair replaced by new_id, scanning left to right ([a, a, a] -> [aa, a])."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def learn_merges_naive(chunks, weights, n_merges):
    """The same merges as incremental.learn_merges, recounting every pair after every merge (slow)."""
    chunks, merges = [list(chunk) for chunk in chunks], []
    for new_id in range(N_BYTES, N_BYTES + n_merges):
        counts = {}
        for chunk, weight in zip(chunks, weights):
            pair_counts(chunk, counts, weight)
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))          # the most frequent; ties: the smaller pair
        chunks = [merge(chunk, pair, new_id) for chunk in chunks]
        merges.append(pair)
    return merges


def check_merge(index, pair, n_ids):
    """pair as (a, b): two int ids made before merge index, that is below n_ids."""
    a, b = pair if isinstance(pair, (tuple, list)) and len(pair) == 2 else (None, None)
    if not (isinstance(a, int) and isinstance(b, int)) or isinstance(a, bool) or isinstance(b, bool):
        raise ValueError(f"BPE: merge {index} must be a pair of int ids, got {short(pair)}")
    if not (0 <= a < n_ids and 0 <= b < n_ids):
        raise ValueError(f"BPE: merge {index} {[a, b]} names an id not made before it (ids so far: 0..{n_ids - 1})")
    return a, b


def chunk_counts(text, pattern, specials=None):
    """{chunk as UTF-8 bytes: occurrences} of text pre-split by a compiled pattern (None: one chunk).

    specials (split.special_pattern): the text is first cut at each special token, which is left out: a
    document separator such as "<|endoftext|>" joins no merge, neither across it nor inside it.
    """
    ordinary = split_special(text, specials)[::2]
    return Counter(chunk.encode("utf-8") for piece in ordinary for chunk in split_text(piece, pattern))


class BPE(Tokenizer):
    """A byte-level BPE tokenizer: 256 byte ids, then one id per merge, then the special tokens.

        tok = BPE.train(text, vocab_size=512)        # 256 bytes + 256 merges
        ids = tok.encode("Hello, world")             # list of int
        tok.decode(ids) == "Hello, world"
        tok.save("tok.json"); BPE.load("tok.json")

    pattern: the pre-split regular expression (split.SPLIT_PATTERN, GPT-2's
    rule), or None to learn merges over the raw text, across spaces and
    punctuation.
    """

    def __init__(self, merges, pattern=SPLIT_PATTERN, special_tokens=()):
        """merges: the learned pairs in order; merge i makes id 256 + i from two earlier ids."""
        vocab = [bytes([i]) for i in range(N_BYTES)]
        self.merges = {}                                           # (a, b) -> new id
        for pair in merges:
            a, b = check_merge(len(self.merges), pair, len(vocab))
            if (a, b) in self.merges:
                raise ValueError(f"BPE: merge {len(self.merges)} {[a, b]} repeats merge "
                                 f"{self.merges[a, b] - N_BYTES}")
            self.merges[a, b] = len(vocab)
            vocab.append(vocab[a] + vocab[b])
        super().__init__(vocab, special_tokens)
        self.pattern, self.compiled = pattern, compile_pattern(pattern, "BPE")
        self.cache = {}                                            # chunk bytes -> ids: repeated words encode once

    @classmethod
    def train(cls, text, vocab_size, pattern=SPLIT_PATTERN, special_tokens=()):
        """Learn vocab_size - 256 - len(special_tokens) merges from text (str).

        special_tokens (such as ["<|endoftext|>"], between documents) take the last ids, after the merges.
        The text is cut at each of them first, and no merge is learned across or inside one.
        """
        if not isinstance(text, str):
            raise TypeError(f"BPE.train: expected a str, got {type(text).__name__}")
        if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
            raise TypeError(f"BPE.train: vocab_size must be an int, got {vocab_size!r}")
        n_special = len(check_special_tokens(special_tokens, "BPE.train"))
        if vocab_size < N_BYTES + n_special:
            raise ValueError("BPE.train: vocab_size must be at least 256 (the byte values)"
                             + (f" + {n_special} special tokens" if n_special else "") + f", got {vocab_size}")
        check_unicode(text, "BPE.train")
        counts = chunk_counts(text, compile_pattern(pattern, "BPE.train"), special_pattern(special_tokens))
        n_merges = vocab_size - N_BYTES - n_special
        merges = learn_merges(list(counts), list(counts.values()), n_merges)
        if len(merges) < n_merges:
            raise ValueError(f"BPE.train: after {len(merges)} merges no pair of tokens is left to merge "
                             f"(every chunk of the text is one token), so this text allows vocab_size at "
                             f"most {N_BYTES + len(merges) + n_special}; got {vocab_size}")
        return cls(merges, pattern, special_tokens)

    def encode_iterable(self, lines, allowed_special=()):
        """As Tokenizer.encode_iterable. Its cuts at line ends are proven for GPT-2's pre-split only."""
        if self.pattern != SPLIT_PATTERN:
            kind = "no pre-split: the whole text is one chunk" if self.pattern is None else "its own pre-split"
            raise ValueError(f"BPE.encode_iterable: this tokenizer has {kind}, so cutting the text at line ends "
                             "could change its tokens; expected GPT-2's pre-split (use encode on the whole text)")
        return super().encode_iterable(lines, allowed_special)

    def encode_ordinary(self, text):
        """text (str) -> token ids, without special tokens (their names are text like any other)."""
        chunks = [chunk.encode("utf-8") for chunk in split_text(text, self.compiled)]
        new = [chunk for chunk in dict.fromkeys(chunks) if chunk not in self.cache]
        self.cache.update(zip(new, apply_merges(new, self.merges)))
        ids = [i for chunk in chunks for i in self.cache[chunk]]
        if len(self.cache) > CACHE_LIMIT:
            self.cache.clear()
        return ids

    def file_fields(self):
        return {"pattern": self.pattern}

    def file_body(self):
        """One line per merge: the two ids and, to read, the new token's text."""
        return "merges", [[a, b, self.token_text(new_id)] for (a, b), new_id in self.merges.items()]

    @classmethod
    def from_file(cls, saved):
        """The tokenizer a loaded file describes; every row checked before any token's bytes are built.

        A crafted file can chain merges that each join the last token with itself, [256, 256], [257, 257],
        ...: the 60th token would be 2**60 bytes. Each row spells its token's text, and a token's text is
        never shorter in UTF-8 than the token (an invalid byte is written \\xNN), so a row whose token would
        be longer than its text is refused, from the lengths alone: what is built is at most the file's size.
        """
        rows = saved["merges"]
        if not isinstance(rows, list) or not all(isinstance(row, list) and len(row) == 3
                                                 and isinstance(row[2], str) for row in rows):
            raise ValueError("merges must be a list of [a, b, text] rows")
        check_vocab_size(N_BYTES + len(rows) + len(saved["special_tokens"]))
        lengths = [1] * N_BYTES                                    # each token's length in bytes
        for index, row in enumerate(rows):
            (a, b), text = check_merge(index, row[:2], len(lengths)), row[2]
            lengths.append(lengths[a] + lengths[b])
            if lengths[-1] > len(text.encode("utf-8", "surrogatepass")):
                raise ValueError(f"merge {index} {[a, b]} would make a token of {lengths[-1]} bytes, more than "
                                 f"its text {short(text)} in the file spells")
        tokenizer = cls([row[:2] for row in rows], saved["pattern"], saved["special_tokens"])
        for (pair, new_id), row in zip(tokenizer.merges.items(), rows):
            if tokenizer.token_text(new_id) != row[2]:
                raise ValueError(f"merge {new_id - N_BYTES} {list(pair)} makes {short(tokenizer.token_text(new_id))}, "
                                 f"but the file says {short(row[2])}")
        return tokenizer

    def __repr__(self):
        split = "no pre-split" if self.pattern is None else \
            "GPT-2 pre-split" if self.pattern == SPLIT_PATTERN else "own pre-split"
        special = f", special_tokens={list(self.special_tokens)}" if self.special_tokens else ""
        return f"BPE(vocab_size={self.vocab_size}, {len(self.merges)} merges, {split}{special})"
