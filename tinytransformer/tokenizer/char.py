"""Characters as tokens: the vocabulary is every distinct character of the training text.

Nothing to learn but the alphabet, and every word can be spelled, but the
sequences are as long as the text, and a character the training text never
had (an emoji, another script) has no id at all: encoding it is an error.
Byte-level BPE (bpe.py) has neither problem.
"""
from .base import Tokenizer, check_special_tokens, check_unicode
from .saved_file import check_vocab_size
from .split import special_pattern, split_special


class CharTokenizer(Tokenizer):
    """Ids 0 .. len(alphabet) - 1 are the characters in code-point order; special tokens follow."""

    def __init__(self, alphabet, special_tokens=()):
        if not isinstance(alphabet, str) or not alphabet:
            raise ValueError(f"CharTokenizer: the alphabet must be a non-empty str, got {alphabet!r}")
        if len(set(alphabet)) != len(alphabet) or list(alphabet) != sorted(alphabet):
            raise ValueError("CharTokenizer: the alphabet must hold distinct characters in code-point order")
        super().__init__((c.encode("utf-8") for c in alphabet), special_tokens)
        self.alphabet = alphabet
        self.index = {c: i for i, c in enumerate(alphabet)}

    @classmethod
    def train(cls, text, special_tokens=()):
        """The tokenizer of text's distinct characters (plus special_tokens after them). The characters of
        a special token's name in text are not learned, as BPE learns no merge from them."""
        if not isinstance(text, str):
            raise TypeError(f"CharTokenizer.train: expected a str, got {type(text).__name__}")
        specials = special_pattern(check_special_tokens(special_tokens, "CharTokenizer.train"))
        ordinary = "".join(split_special(text, specials)[::2])
        if not ordinary:
            raise ValueError("CharTokenizer.train: the text is empty" + (" but for its special tokens" if text else "")
                             + ", so there is no character to learn")
        check_unicode(ordinary, "CharTokenizer.train")
        return cls("".join(sorted(set(ordinary))), special_tokens)

    def encode_ordinary(self, text):
        """text (str) -> token ids, without special tokens (their names are text like any other)."""
        try:
            return [self.index[c] for c in text]
        except KeyError:
            unseen = sorted(set(text) - set(self.index))
            raise ValueError(f"CharTokenizer.encode: {len(unseen)} character(s) not in the vocabulary: "
                             f"{''.join(unseen[:20])!r}" + (" ..." if len(unseen) > 20 else "")) from None

    def file_fields(self):
        return {}

    def file_body(self):
        return "characters", list(self.alphabet)

    @classmethod
    def from_file(cls, saved):
        characters = saved["characters"]
        if not isinstance(characters, list) or not all(isinstance(c, str) and len(c) == 1 for c in characters):
            raise ValueError("characters must be a list of one-character strings")
        check_vocab_size(len(characters) + len(saved["special_tokens"]))
        return cls("".join(characters), saved["special_tokens"])
