"""WordPiece, BERT's tokenizer: each step on its own, then the whole against the `tokenizers` library on a few
thousand mixed strings with the same vocabulary."""
import numpy as np
import pytest

from tinytransformer.tokenizer import WordPiece
from tinytransformer.tokenizer.wordpiece import cleaned, without_accents, words

from mixed_text import mixed_strings

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "una", "##ff", "##ffa", "##ble", "##able", "the",
         "cafe", "hello", ",", "!", "'", "don", "t", "##s", "cat", "σ", "ς", "東", "京", "x", "##x", "a", "b", "##b",
         "1", "##2"]


@pytest.fixture
def tok():
    return WordPiece(VOCAB)


def test_a_word_is_cut_into_its_longest_pieces(tok):
    assert [VOCAB[i] for i in tok.encode("unaffable", special=False)] == ["una", "##ffa", "##ble"]
    assert tok.encode("cats") == [2, 20, 19, 3]                              # [CLS] cat ##s [SEP]


def test_a_word_that_cannot_be_cut_all_the_way_is_one_unk(tok):
    assert tok.encode("catz cat", special=False) == [1, 20]
    assert tok.encode("x" * 100, special=False) == [25] + [26] * 99
    assert tok.encode("x" * 101, special=False) == [1]                      # longer than max_word: [UNK]


def test_punctuation_is_a_word_of_its_own_and_spaces_of_every_kind_split(tok):
    assert words("don't,hello!! a\u3000b") == ["don", "'", "t", ",", "hello", "!", "!", "a", "b"]
    assert [VOCAB[i] for i in tok.encode("Don't,\u00a0HELLO!", special=False)] == ["don", "'", "t", ",", "hello", "!"]


def test_accents_are_stripped_and_case_lowered_in_an_uncased_vocabulary(tok):
    assert without_accents("Café naïve") == "Cafe naive"
    assert tok.encode("CAFÉ", special=False) == [12]
    assert tok.encode("Σ", special=False) == [21]                            # σ even at a word's end, as BERT
    cased = WordPiece(VOCAB, lowercase=False)
    assert cased.encode("cafe Cafe", special=False) == [12, 1]


def test_ideographs_are_words_and_control_characters_go(tok):
    assert tok.encode("東京", special=False) == [23, 24]
    assert cleaned("a\x00b\u200bc\x07\td\ufffd") == "abc d"


def test_decode_glues_continuations_and_leaves_out_special_tokens(tok):
    assert tok.decode(tok.encode("unaffable cats!")) == "unaffable cats !"
    assert tok.decode([2, 20, 3], include_special=True) == "[CLS] cat [SEP]"
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([len(VOCAB)])


def test_a_vocabulary_without_its_special_tokens_is_refused():
    with pytest.raises(ValueError, match="has no '\\[SEP\\]' token"):
        WordPiece([t for t in VOCAB if t != "[SEP]"])
    with pytest.raises(TypeError, match="expected a str"):
        WordPiece(VOCAB).encode(b"bytes")


@pytest.mark.parametrize("lowercase", [True, False])
def test_equal_to_the_tokenizers_library_on_mixed_text(lowercase):
    tokenizers = pytest.importorskip("tokenizers", reason="needs tokenizers (the test extra)")
    rng = np.random.default_rng(1)
    pieces = sorted({"".join(rng.choice(list("abcdeéσ"), rng.integers(1, 4))) for _ in range(300)})
    vocab = VOCAB + [p for p in pieces if p not in VOCAB] + ["##" + p for p in pieces if "##" + p not in VOCAB]
    model = tokenizers.models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]")
    reference = tokenizers.Tokenizer(model)
    reference.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=lowercase)
    reference.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    ours = WordPiece(vocab, lowercase=lowercase)
    for text in mixed_strings(3000, pieces + ["cafe", "the", "Don't"], seed=2):
        assert ours.encode(text, special=False) == reference.encode(text).ids, repr(text)
