"""What every tokenizer shares: the checks on its input, special tokens, decoding, the saved file.

A tokenizer's vocabulary is a list of byte strings, one per id (`vocab[i]`);
decoding joins them and reads the bytes as UTF-8. Special tokens (such as
"<|endoftext|>") take the last ids. They are explicit: encoding text never
produces one unless the call names it, and decoding shows one only if asked
(`include_special=True`):

    tok.encode("first<|endoftext|>second", allowed_special={"<|endoftext|>"})   # or "all"
    tok.encode("first") + [tok.special_tokens["<|endoftext|>"]] + tok.encode("second")     # the same ids

Without allowed_special a special token's name is ordinary text, encoded as its
bytes are (tiktoken's encode raises an error instead, unless told
disallowed_special=(); its encode_ordinary does as this default does): text
from users can then never inject a document boundary. encode_iterable encodes
a file of any size lazily, a stretch of lines at a time, with the same ids.

The saved file is readable JSON: a header line per field, then the subclass's
own lines (the characters, or one merge per line), never pickle; saved_file.py
reads one as untrusted.
"""
import collections
import json
import numbers

import numpy as np

from ..files import atomic_write, check_outputs
from .saved_file import FILE_FORMAT, FILE_VERSION, check_regular_file, is_tokenizer_file, read_json, short
from .split import KNOWN_PATTERNS, last_line_cut, special_pattern, split_special


STRETCH = 8192       # characters encode_iterable gathers before it looks for a cut (one call of encode per stretch)


class Tokenizer:
    """The shared half of CharTokenizer and BPE; a subclass gives vocab, encode_ordinary and the file's body."""

    def __init__(self, vocab, special_tokens):
        """vocab: one bytes per ordinary id; special_tokens: their names, given the next ids in order."""
        names = check_special_tokens(special_tokens, type(self).__name__)
        self.vocab = list(vocab)
        self.special_tokens = {name: len(self.vocab) + i for i, name in enumerate(names)}
        self.vocab += [name.encode("utf-8") for name in names]

    @property
    def vocab_size(self):
        return len(self.vocab)

    @property
    def n_ordinary(self):
        """The ids below this are ordinary tokens; the special tokens come after."""
        return len(self.vocab) - len(self.special_tokens)

    def encode(self, text, allowed_special=()):
        """text (str) -> list of token ids.

        allowed_special: the special tokens the text may name, a set of names or "all"; where the text
        spells one, it becomes that token's id (the longest where two start at one place). Any other
        special token's name is ordinary text, so by default no special id comes out.
        """
        who = f"{type(self).__name__}.encode"
        if not isinstance(text, str):
            hint = " (decode bytes to str first, e.g. data.decode('utf-8'))" if isinstance(text, bytes) else ""
            raise TypeError(f"{who}: expected a str, got {type(text).__name__}{hint}")
        check_unicode(text, who)
        return self.encode_pieces(text, special_pattern(self.allowed_names(allowed_special, who)))

    def encode_iterable(self, lines, allowed_special=()):
        """The ids of "".join(lines), equal to encode's, produced one at a time: lines is any iterable of
        str, such as a file opened in text mode, and is read a stretch at a time, so memory stays bounded.

        The text is cut only before a line end that a non-space character follows (split.last_line_cut
        proves the pieces encode as the whole), once STRETCH characters are gathered: memory holds that, or
        the longest run of lines that all begin with a space, a tab or a line end, plus a line. An allowed
        special token must not hold a line end.
        """
        who = f"{type(self).__name__}.encode_iterable"
        names = self.allowed_names(allowed_special, who)
        spanning = [name for name in names if "\n" in name]
        if spanning:
            raise ValueError(f"{who}: the special token {short(spanning[0])} holds a line end, and the text is cut "
                             "at line ends; use encode on the whole text")
        if isinstance(lines, (str, bytes)) or not hasattr(lines, "__iter__"):
            raise TypeError(f"{who}: expected an iterable of str lines (an open text file), got "
                            f"{type(lines).__name__}" + ("; for one str use encode" if isinstance(lines, str) else ""))
        return self.lazy_ids(iter(lines), special_pattern(names), who)

    def lazy_ids(self, lines, specials, who):
        """encode_iterable's generator: gather lines to STRETCH characters, encode what comes before the
        last safe cut, keep the rest (searched already: the next search starts where this one ended)."""
        pending, searched = "", 0
        for number, line in enumerate(lines, 1):
            if not isinstance(line, str):
                raise TypeError(f"{who}: line {number} is {type(line).__name__}, not str (open the file in text mode)")
            check_unicode(line, f"{who}: line {number}")
            pending += line
            if len(pending) < STRETCH:
                continue
            cut = last_line_cut(pending, searched - 1, specials)          # - 1: a line end the line just completed
            if cut:
                yield from self.encode_pieces(pending[:cut], specials)
                pending = pending[cut:]
            searched = len(pending)
        yield from self.encode_pieces(pending, specials)

    def encode_pieces(self, text, specials):
        """text -> ids, each special token that specials (split.special_pattern, or None) finds as its id."""
        ids = []
        for place, piece in enumerate(split_special(text, specials)):
            if place % 2:
                ids.append(self.special_tokens[piece])
            elif piece:
                ids += self.encode_ordinary(piece)
        return ids

    def allowed_names(self, allowed_special, who):
        """allowed_special ("all", or a collection of special tokens' names) as a list of names."""
        if isinstance(allowed_special, str):
            if allowed_special != "all":
                raise TypeError(f"{who}: allowed_special must be 'all' or a set of names, got the str "
                                f"{short(allowed_special)}; write {{{short(allowed_special)}}}")
            return list(self.special_tokens)
        if not hasattr(allowed_special, "__iter__"):
            raise TypeError(f"{who}: allowed_special must be 'all' or a set of names, got "
                            f"{type(allowed_special).__name__}")
        names = list(allowed_special)
        unknown = [name for name in names if not isinstance(name, str) or name not in self.special_tokens]
        if unknown:
            raise ValueError(f"{who}: allowed_special names {short(unknown[0])}, which is not a special token of "
                             f"this tokenizer (its special tokens: {short(list(self.special_tokens))})")
        return names

    def token_text(self, i):
        """Token i's bytes as text to read; bytes that are not whole UTF-8 characters shown as \\xNN."""
        return self.vocab[i].decode("utf-8", errors="backslashreplace")

    def decode(self, ids, include_special=False):
        """Token ids -> str. Special tokens are left out unless include_special.

        Byte-level ids can cut a character in two (a model may generate any ids):
        bytes that are not valid UTF-8 become U+FFFD, the replacement character.
        """
        ids = as_id_list(ids, self.vocab_size, f"{type(self).__name__}.decode")
        kept = ids if include_special else [i for i in ids if i < self.n_ordinary]
        return b"".join(self.vocab[i] for i in kept).decode("utf-8", errors="replace")

    def save(self, path, force=False):
        """Write the tokenizer to path as readable JSON (load it with the class's load).

        Written atomically (a temporary file beside path, then renamed). An existing file is replaced only
        if it is a tokenizer file, or with force=True.
        """
        header = {"format": FILE_FORMAT, "version": FILE_VERSION, "type": type(self).__name__,
                  **self.file_fields(), "special_tokens": list(self.special_tokens)}
        lines = [f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in header.items()]
        body_key, body = self.file_body()
        rows = ",\n".join(f"  {json.dumps(row, ensure_ascii=False)}" for row in body)
        text = "{\n" + ",\n".join(lines) + f',\n {json.dumps(body_key)}: [\n' + rows + "\n ]\n}\n"
        check_regular_file(path, f"{type(self).__name__}.save")
        check_outputs({f"{type(self).__name__}.save": path}, force=force,
                      is_ours={f"{type(self).__name__}.save": is_tokenizer_file})
        atomic_write(path, lambda f: f.write(text.encode("utf-8")))

    @classmethod
    def load(cls, path, trust_pattern=False):
        """The tokenizer saved at path; a file that is damaged or of another kind is a ValueError.

        A pre-split pattern is a regular expression, and a regular expression can take time exponential in
        its input ("(a+)+$"); a file's pattern must be one of split.KNOWN_PATTERNS unless trust_pattern.
        """
        who = f"{cls.__name__}.load"
        saved = read_json(path, who)
        if not isinstance(saved, dict) or saved.get("format") != FILE_FORMAT:
            raise ValueError(f"{who}: {path} is not a tinytransformer tokenizer file")
        if saved.get("version") != FILE_VERSION:
            raise ValueError(f"{who}: {path} has file version {short(saved.get('version'))}; "
                             f"this tinytransformer reads version {FILE_VERSION}")
        if saved.get("type") != cls.__name__:
            kind = saved.get("type")
            hint = f"; load it with {kind}.load" if kind in ("BPE", "CharTokenizer") else ""
            raise ValueError(f"{who}: {path} holds a {short(kind)} tokenizer, not a {cls.__name__}{hint}")
        if not trust_pattern and saved.get("pattern") not in KNOWN_PATTERNS:
            raise ValueError(f"{who}: {path} has its own pre-split pattern; expected GPT-2's or none. A pattern "
                             "is a regular expression that can take hours on a short text; pass "
                             "trust_pattern=True if you trust the file")
        try:
            check_special_tokens(saved["special_tokens"], cls.__name__)
            return cls.from_file(saved)
        except (KeyError, TypeError, ValueError) as error:
            detail = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            raise ValueError(f"{who}: {path} is damaged: {detail}") from None

    def __repr__(self):
        special = f", special_tokens={list(self.special_tokens)}" if self.special_tokens else ""
        return f"{type(self).__name__}(vocab_size={self.vocab_size}{special})"


MAX_SPECIAL_TOKENS = 1024       # Llama 3 reserves 256; encode searches for every name at every character
MAX_SPECIAL_LENGTH = 256        # characters in a special token's name


def check_special_tokens(names, who):
    """names as a list of at most MAX_SPECIAL_TOKENS distinct non-empty str of at most MAX_SPECIAL_LENGTH
    characters (checked in time linear in their number)."""
    if isinstance(names, str):
        raise TypeError(f"{who}: special_tokens must be a list of str, got the str {short(names)}; "
                        f"write [{short(names)}]")
    if not isinstance(names, (list, tuple)):
        raise TypeError(f"{who}: special_tokens must be a list of str, got {type(names).__name__}")
    names = list(names)
    if len(names) > MAX_SPECIAL_TOKENS:
        raise ValueError(f"{who}: expected at most {MAX_SPECIAL_TOKENS} special tokens, got {len(names)}")
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"{who}: each special token must be a non-empty str, got {short(name)}")
        if len(name) > MAX_SPECIAL_LENGTH:
            raise ValueError(f"{who}: a special token's name is at most {MAX_SPECIAL_LENGTH} characters, got one "
                             f"of {len(name)}: {short(name)}")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{who}: special token {short(name)} holds a lone surrogate, which is not a "
                             "character") from None
    repeated = sorted(name for name, count in collections.Counter(names).items() if count > 1)
    if repeated:
        raise ValueError(f"{who}: special tokens must be distinct; {short(repeated)} repeated")
    return names


def check_unicode(text, who):
    """text must be encodable as UTF-8: a lone surrogate (from a bad decode) is not a character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{who}: the text holds a lone surrogate {text[error.start]!r} at position "
                         f"{error.start}, which is not a Unicode character") from None


def as_id_list(ids, vocab_size, who):
    """ids (a list, tuple or 1-D integer array) as a list of int, each in [0, vocab_size)."""
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            raise TypeError(f"{who}: ids must be a 1-D integer array, got shape {ids.shape} dtype {ids.dtype}")
        ids = ids.tolist()
    elif isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise TypeError(f"{who}: ids must be a list of int, got {type(ids).__name__}")
    ids = list(ids)
    for i in ids:
        if not isinstance(i, numbers.Integral) or isinstance(i, (bool, np.bool_)):
            raise TypeError(f"{who}: ids must be int, got {i!r} ({type(i).__name__})")
        if not 0 <= i < vocab_size:
            raise ValueError(f"{who}: id {i} is outside the vocabulary [0, {vocab_size})")
    return [int(i) for i in ids]
