"""A published model's byte-level BPE (GPT-2's kind, as a GGUF file stores it) run by the library's own BPE.

The file lists its tokens as text and its merges as pairs of tokens ("Ġ t"), in
the order they were learned. Its tokens spell bytes in GPT-2's printable
alphabet: each of the 256 bytes is one character, the printable ones as
themselves and the others moved above 255 (the space is "Ġ", the line end
"Ċ"), so that every token is readable text. Its ids are its own: the special
tokens may come first and the 256 bytes in any order.

The library's BPE numbers its tokens its own way (the 256 bytes, then one id
per merge, then the special tokens), so the file's tokenizer is the library's
BPE with a table from the library's ids to the file's. Two merges of the file
may spell one token ("a bc" and "ab c"): the library makes an id for each, both
mapped to the file's one id, and a later merge of that token is learned for each
of its spellings, at the same place in the order. A byte that no token of the
file spells (SmolLM2 lacks 21: control characters and bytes UTF-8 never uses)
is left out of the ids, as the `tokenizers` library leaves it out.

The pre-split is the file's: GPT-2's rule, or SmolLM's (each digit alone first).
GPT-2 wrote its rule with Unicode classes (\\p{L} letters, \\p{N} numbers) that
Python's `re` lacks, so they are spelled out here from the Unicode database, and
so is \\s, which in `re` takes four control characters more than Unicode's spaces.
"""
import functools
import itertools
import re
import unicodedata

import numpy as np

from ..tokenizer import BPE
from ..tokenizer.base import as_id_list
from ..tokenizer.saved_file import short

NORMAL, CONTROL, USER_DEFINED = 1, 3, 4       # GGUF's token types that this reader knows (llama.cpp's numbering)
MAX_EXTRA_MERGES = 10_000                     # merges a file's doubly spelled tokens may add to its own
LAST_PLANES = 0x40000                         # the code points unicode_class looks at
LEFT_OUT = -1                                 # the file's "id" of a byte it has no token for


def gpt2_characters():
    """{byte: its character in GPT-2's printable alphabet}: printable Latin-1 bytes as themselves, the others
    (control characters, the space, ...) as the characters 256, 257, ... in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    moved = [b for b in range(256) if b not in printable]
    return {**{b: chr(b) for b in printable}, **{b: chr(256 + i) for i, b in enumerate(moved)}}


BYTE_OF_CHARACTER = {character: byte for byte, character in gpt2_characters().items()}


@functools.cache
def unicode_class(major):
    """A regular-expression class of every character whose Unicode category starts with major ("L": letters,
    "N": numbers), as ranges: what \\p{L} and \\p{N} match in regex engines that have them."""
    # no letter or number lies past the first four planes (U+40000 on: unassigned, tags, private use)
    inside = [unicodedata.category(chr(c))[0] == major for c in range(LAST_PLANES)] + [False]
    ranges, start = [], None
    for c, is_in in enumerate(inside):
        if is_in and start is None:
            start = c
        elif not is_in and start is not None:
            ranges.append(re.escape(chr(start)) + ("" if c - 1 == start else "-" + re.escape(chr(c - 1))))
            start = None
    return "".join(ranges)


@functools.cache
def pre_split_pattern(name):
    """The pre-split of a tokenizer file by its name (GGUF's tokenizer.ggml.pre), in `re`'s verbose syntax.

    gpt2: GPT-2's rule. smollm: each number character is a chunk of its own first, then GPT-2's rule on what
    lies between; written as one pattern, a run of spaces before a digit ends there (as the end of a piece).
    """
    L, N, S = unicode_class("L"), unicode_class("N"), WHITE_SPACE
    number, spaces = (rf"\ ?[{N}]+", rf"[{S}]+(?![^{S}])") if name == "gpt2" else (rf"[{N}]", rf"[{S}]+(?![^{S}{N}])")
    return "|".join([r"'s|'t|'re|'ve|'m|'ll|'d", rf"\ ?[{L}]+", number, rf"\ ?[^{S}{L}{N}]+", spaces, rf"[{S}]+"])


# Unicode's White_Space: \s of the regex engines the files were made with (Python's \s also takes \x1c-\x1f)
WHITE_SPACE = r"\t\n\x0b\x0c\r\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
PRE_SPLITS = ("gpt2", "smollm")              # the pre-splits this reader knows by name


class FileBPE:
    """A tokenizer file's byte-level BPE, in the file's own ids.

        tok.encode("Hello")                        # the file's ids
        tok.encode("<|im_start|>user", allowed_special="all")
        tok.decode(ids)                            # special tokens left out unless include_special=True
        tok.special_tokens["<|im_end|>"]           # the file's id of a special token

    tokens: each id's text in GPT-2's alphabet (special tokens as their names); token_types: GGUF's type per
    id; merges: "left right" strings in the order learned; pre_split: a name of PRE_SPLITS.
    """

    def __init__(self, tokens, token_types, merges, pre_split):
        if pre_split not in PRE_SPLITS:
            raise ValueError(f"the tokenizer's pre-split is {short(pre_split)}; this reader knows {list(PRE_SPLITS)}")
        if len(token_types) != len(tokens):
            raise ValueError(f"it lists {len(tokens)} tokens but {len(token_types)} token types")
        special = [i for i, kind in enumerate(token_types) if kind in (CONTROL, USER_DEFINED)]
        unknown = [i for i, kind in enumerate(token_types) if kind not in (NORMAL, CONTROL, USER_DEFINED)]
        if unknown:
            raise ValueError(f"token {unknown[0]} has type {token_types[unknown[0]]}; expected normal (1), "
                             "control (3) or user-defined (4)")
        special_ids = set(special)
        file_id = {}                                                    # a token's bytes -> the file's id
        for i, text in enumerate(tokens):
            if i not in special_ids:
                file_id.setdefault(spelled_bytes(text, i), i)
        spellings = {bytes([b]): [b] for b in range(256)}               # bytes -> the library's ids for them
        library_merges, to_file = [], [file_id.get(bytes([b]), LEFT_OUT) for b in range(256)]
        for index, merge in enumerate(merges):
            parts = merge.split(" ") if isinstance(merge, str) else []
            if len(parts) != 2:
                raise ValueError(f"merge {index} must be two tokens apart by a space, got {short(merge)}")
            left, right = (spelled_bytes(part, f"of merge {index}") for part in parts)
            if left not in spellings or right not in spellings or left + right not in file_id:
                raise ValueError(f"merge {index} {short(merge)} joins tokens no earlier merge made, or makes a "
                                 "token the vocabulary does not hold")
            for pair in itertools.product(spellings[left], spellings[right]):
                spellings.setdefault(left + right, []).append(256 + len(library_merges))
                library_merges.append(pair)
                to_file.append(file_id[left + right])
            if len(library_merges) > len(merges) + MAX_EXTRA_MERGES:
                raise ValueError(f"the merges spell tokens in more than {MAX_EXTRA_MERGES} extra ways")
        names = [tokens[i] for i in special]
        self.bpe = BPE(library_merges, pre_split_pattern(pre_split), special_tokens=names)
        self.to_file = np.array(to_file + special, dtype=np.int64)     # the library's id -> the file's
        self.from_file = np.zeros(len(tokens), dtype=np.int64)          # the file's id -> a library id
        kept = np.flatnonzero(self.to_file != LEFT_OUT)[::-1]
        self.from_file[self.to_file[kept]] = kept                       # any spelling: they are the same bytes
        unreachable = sorted(set(range(len(tokens))) - set(self.to_file.tolist()))
        if unreachable:
            raise ValueError(f"token {unreachable[0]} ({short(tokens[unreachable[0]])}) is neither a byte, nor "
                             "made by a merge, nor special")
        self.special_tokens = {tokens[i]: i for i in special}
        self.vocab_size = len(tokens)
        self.pre_split = pre_split

    def encode(self, text, allowed_special=()):
        """text (str) -> the file's ids; special tokens only where allowed_special ("all" or names) lets them.
        A byte the vocabulary has no token for is left out."""
        ids = self.to_file[self.bpe.encode(text, allowed_special)]
        return ids[ids != LEFT_OUT].tolist()

    def decode(self, ids, include_special=False):
        """The file's ids -> str (bytes that are not whole UTF-8 characters become U+FFFD)."""
        ids = as_id_list(ids, self.vocab_size, "FileBPE.decode")
        return self.bpe.decode(self.from_file[ids].tolist() if ids else [], include_special)

    def chat_prompt(self, user_text):
        """The text that opens the assistant's answer to one user turn, in the file's chat template: ChatML's
        markers (<|im_start|>role, a line end, the message, <|im_end|>, a line end), with the system message
        the template adds when none is given. Encode it with allowed_special="all".

        The template itself is a Jinja program (code, from a file): it is searched for its markers and its
        system message, never run."""
        template = getattr(self, "chat_template", "")
        if "<|im_start|>" not in template or not {"<|im_start|>", "<|im_end|>"} <= set(self.special_tokens):
            raise ValueError("this model's chat template is not ChatML (<|im_start|> ... <|im_end|>)")
        system = re.search(r"<\|im_start\|>system\n(.*?)<\|im_end\|>", template, re.DOTALL)
        turns = [("system", system.group(1))] if system else []
        turns.append(("user", user_text))
        return "".join(f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in turns) + "<|im_start|>assistant\n"

    def __repr__(self):
        return (f"FileBPE(vocab_size={self.vocab_size}, {len(self.bpe.merges)} merges, {self.pre_split} pre-split, "
                f"{len(self.special_tokens)} special tokens)")


def spelled_bytes(text, which):
    """A token's text in GPT-2's alphabet -> its bytes; a character outside the alphabet is a ValueError."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"token {which} must be non-empty text, got {short(text)}")
    try:
        return bytes(BYTE_OF_CHARACTER[character] for character in text)
    except KeyError as error:
        raise ValueError(f"token {which} ({short(text)}) holds {error.args[0]!r}, which is not a character of "
                         "GPT-2's byte alphabet") from None
