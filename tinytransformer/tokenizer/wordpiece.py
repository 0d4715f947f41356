"""WordPiece, BERT's tokenizer: words cut into the longest pieces of a fixed vocabulary, "##" marking a piece
that continues a word.

BPE builds a word up from its bytes by merges; WordPiece (Schuster and Nakajima
2012, as BERT uses it) cuts a word down from its start: take the longest piece
of the vocabulary the word begins with, then the longest "##" piece the rest
begins with, and so on ("unaffable" -> "una", "##ffa", "##ble"). A word that
cannot be cut all the way is one [UNK]: unlike byte-level BPE, WordPiece has
words it cannot spell. Before that, the text is cleaned and cut into words:

    1. clean: control characters removed, every kind of space made " "
    2. Chinese, Japanese and Korean ideographs set apart, each a word of its own
    3. uncased vocabularies: accents stripped (é = e + a combining accent, the accent dropped), lower case
    4. words: cut at spaces, and every punctuation character a word of its own ("don't" -> don ' t)
    5. each word into pieces, longest first; a word of more than max_word characters is [UNK]

    tok = WordPiece(vocab)                 # vocab: one str per id, as a BERT's vocabulary lists them
    tok.encode("Hello, world!")            # [CLS] hello , world ! [SEP] as ids
    tok.decode(ids)                        # "hello, world!": the pieces joined, special tokens left out

The steps are those of BERT's original tokenizer and of the `tokenizers` library's BertNormalizer,
BertPreTokenizer and WordPiece, which the tests compare with on thousands of strings. One difference: a
special token's name in the text ("[MASK]") is text here, cut like any other, never the special token.
"""
import unicodedata

from .base import as_id_list
from .saved_file import check_vocab_size, short

# CJK ideographs: the blocks BERT sets apart, each character a word of its own
IDEOGRAPHS = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
              (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
ASCII_PUNCTUATION = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")   # punctuation to BERT, though $ + < are symbols


def is_ideograph(character):
    """True for a CJK ideograph, which BERT's tokenizer splits off as a word of its own."""
    return any(low <= ord(character) <= high for low, high in IDEOGRAPHS)


def is_punctuation(character):
    """BERT's punctuation: ASCII's, and every character of a Unicode punctuation category (P...)."""
    return character in ASCII_PUNCTUATION or unicodedata.category(character).startswith("P")


def cleaned(text):
    """Control and format characters (category C..., but tab and line ends) and U+FFFD (the mark of a bad
    byte) removed; any space made " "."""
    kept = (c for c in text if c in "\t\n\r" or not (unicodedata.category(c).startswith("C") or c == "\ufffd"))
    return "".join(" " if c.isspace() else c for c in kept)


def without_accents(text):
    """Each character decomposed (NFD: é -> e + U+0301) and the non-spacing marks (category Mn) dropped."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def words(text):
    """Text cut at whitespace, each punctuation character a word of its own."""
    out = []
    for chunk in text.split():
        start = 0
        for i, character in enumerate(chunk):
            if is_punctuation(character):
                out += [chunk[start:i], character] if i > start else [character]
                start = i + 1
        if start < len(chunk):
            out.append(chunk[start:])
    return out


class WordPiece:
    """BERT's tokenizer over a vocabulary (one str per id): clean, split, cut each word into its longest pieces.

    lowercase: the vocabulary is uncased (lower case, and accents stripped unless strip_accents says
    otherwise; None: as lowercase). unk, cls, sep, pad: the special tokens' names, which must be in vocab.
    """

    def __init__(self, vocab, lowercase=True, strip_accents=None, unk="[UNK]", cls="[CLS]", sep="[SEP]",
                 pad="[PAD]", prefix="##", max_word=100):
        check_vocab_size(len(vocab))
        if not all(isinstance(piece, str) and piece for piece in vocab):
            raise ValueError("WordPiece: every token of the vocabulary must be a non-empty str")
        self.vocab = list(vocab)
        self.ids = {piece: i for i, piece in reversed(list(enumerate(self.vocab)))}     # the first id of a piece
        missing = [name for name in (unk, cls, sep, pad) if name not in self.ids]
        if missing:
            raise ValueError(f"WordPiece: the vocabulary has no {short(missing[0])} token")
        self.lowercase = lowercase
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.prefix, self.max_word = prefix, max_word
        self.unk_id, self.cls_id, self.sep_id, self.pad_id = (self.ids[name] for name in (unk, cls, sep, pad))
        self.special_ids = {self.unk_id, self.cls_id, self.sep_id, self.pad_id}

    @property
    def vocab_size(self):
        return len(self.vocab)

    def normalised(self, text):
        """Steps 1 to 3: cleaned, ideographs set apart, (accents stripped,) (lower case)."""
        text = "".join(f" {c} " if is_ideograph(c) else c for c in cleaned(text))
        if self.strip_accents:
            text = without_accents(text)
        # character by character, as BERT: "Σ" is "σ" even at a word's end (str.lower would write "ς" there)
        return "".join(c.lower() for c in text) if self.lowercase else text

    def pieces(self, word):
        """A word's ids, longest piece first at each place; [UNK] alone if it cannot be cut all the way."""
        if len(word) > self.max_word:
            return [self.unk_id]
        out, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                if piece in self.ids:
                    out.append(self.ids[piece])
                    start = end
                    break
            else:
                return [self.unk_id]                     # no piece of the vocabulary starts here
        return out

    def encode(self, text, special=True):
        """text (str) -> ids: [CLS], each word's pieces, [SEP] (special=False: the pieces alone)."""
        if not isinstance(text, str):
            raise TypeError(f"WordPiece.encode: expected a str, got {type(text).__name__}")
        ids = [i for word in words(self.normalised(text)) for i in self.pieces(word)]
        return [self.cls_id, *ids, self.sep_id] if special else ids

    def decode(self, ids, include_special=False):
        """ids -> text: the pieces, a "##" piece glued to the one before, the rest apart by a space."""
        ids = as_id_list(ids, self.vocab_size, "WordPiece.decode")
        text = ""
        for i in ids:
            if i in self.special_ids and not include_special:
                continue
            piece = self.vocab[i]
            if piece.startswith(self.prefix) and text:
                text += piece[len(self.prefix):]                  # a continuation: glued to the piece before
            else:
                text += (" " if text else "") + piece
        return text

    def __repr__(self):
        case = "uncased" if self.lowercase else "cased"
        return f"WordPiece(vocab_size={self.vocab_size}, {case})"
