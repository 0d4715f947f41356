"""metrics.py: BLEU and chrF, by hand on small cases and against sacrebleu on many corpora: its defaults, every
smoothing method, the effective order, sentence-level scores and several references."""
import math

import numpy as np
import pytest

from tinytransformer.metrics import SMOOTHING, bleu, chrf, ngrams, sentence_bleu, sentence_chrf, tokenize_13a

HAND_CASES = [      # (hypotheses, references)
    (["der Hund sieht die Katze ."], ["der Hund sieht die Katze ."]),
    (["der Hund sieht die Katze."], ["die Hunde sehen die Katze."]),
    (["die die die die"], ["die Katze"]),
    (["der Hund"], ["der alte Hund sieht die kleine Katze ."]),
    ([""], ["der Hund schläft ."]),
    (["", "der Hund schläft ."], ["die Katze schläft .", "der Hund schläft ."]),
    (["ich weiß , dass der Hund schläft"], ["ich weiß, dass der Hund schläft."]),
    (["zweiundvierzig Katzen"], ["zweiundvierzig Katzen"]),
    (["a b c"], ["a b c"]),                          # too short for 4-grams: BLEU 0
    (["a b c d", "x"], ["a b c d", "y"]),
    (["3.5 Hunde, 1,000 Katzen (alt) & \"jung\""], ["3.5 Hunde , 1,000 Katzen ( alt ) &amp; \"jung\""]),
    (["Öl über Äpfel", "ß"], ["Öl über Äpfel", "ss"]),
    (["  der  Hund  "], ["der Hund"]),
    (["der Hund", "die Katze"], ["", "die Katze"]),       # an empty reference
]


def test_identical_corpus_scores_100_and_nothing_in_common_scores_0():
    same = ["der alte Hund sieht die kleine Katze ."] * 3
    assert bleu(same, same) == pytest.approx(100.0)
    assert chrf(same, same) == pytest.approx(100.0)
    assert bleu(["xyz uvw rst opq"], ["der Hund sieht sie"]) == 0.0
    assert chrf(["qqq"], ["der Hund"]) == 0.0


def test_bleu_by_hand_clipped_precisions_and_brevity_penalty():
    # hypothesis "der Hund der Hund" (4 words) against "der Hund sieht die Katze" (5 words):
    # 1-grams: der x2 clipped to 1, Hund x2 clipped to 1 -> 2/4; 2-grams: "der Hund" x2 clipped to 1,
    # "Hund der" 0 -> 1/3; 3-grams 0/2 -> smoothed 1/(2*2); 4-grams 0/1 -> smoothed 1/(4*1)
    precisions = [2 / 4, 1 / 3, 1 / 4, 1 / 4]
    expected = 100 * math.exp(1 - 5 / 4) * math.exp(sum(map(math.log, precisions)) / 4)
    assert bleu(["der Hund der Hund"], ["der Hund sieht die Katze"]) == pytest.approx(expected, abs=1e-12)


def test_chrf_by_hand_on_one_word():
    # "ab" against "abc": 1-grams P 2/2 R 2/3; 2-grams P 1/1 R 1/2; no 3-gram in the hypothesis
    precision, recall = (1 + 1) / 2, (2 / 3 + 1 / 2) / 2
    expected = 100 * 5 * precision * recall / (4 * precision + recall)
    assert chrf(["ab"], ["abc"]) == pytest.approx(expected, abs=1e-12)


def test_tokenize_13a_splits_punctuation_but_not_numbers():
    assert tokenize_13a("Ich weiß, dass er schläft.") == ["Ich", "weiß", ",", "dass", "er", "schläft", "."]
    assert tokenize_13a("3.5 and 1,000 (x)") == ["3.5", "and", "1,000", "(", "x", ")"]


def test_ngrams_counts():
    assert ngrams("abab", 2) == {("a", "b"): 2, ("b", "a"): 1}
    assert ngrams(["a"], 2) == {}


@pytest.mark.parametrize("metric", [bleu, chrf])
def test_bad_corpora_get_one_clear_line(metric):
    with pytest.raises(ValueError, match="one reference per hypothesis, got 2 hypotheses and 1 references"):
        metric(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="must be a list of strings"):
        metric("der Hund", "der Hund")
    with pytest.raises(TypeError, match="must be a list of strings"):
        metric([["der", "Hund"]], ["der Hund"])
    with pytest.raises(ValueError, match="got 2 hypotheses and 1 references in stream 2"):
        metric(["a", "b"], [["a", "b"], ["a"]])
    with pytest.raises(TypeError, match="reference stream 2 must be a list of strings"):
        metric(["a"], [["a"], [3]])


def test_bad_smoothing_gets_one_clear_line():
    with pytest.raises(ValueError, match="smoothing must be one of exp, floor, add-k, none, got 'expo'"):
        bleu(["a"], ["a"], smoothing="expo")
    with pytest.raises(ValueError, match=r"smooth_value must be a number > 0 \(None: 0.1 for 'floor'\), got -1"):
        bleu(["a"], ["a"], smoothing="floor", smooth_value=-1)
    with pytest.raises(TypeError, match="the hypothesis must be a string"):
        sentence_bleu(["Ja."], ["Ja."])


WORDS = ["der", "die", "das", "Hund", "Katze", "sieht", "nicht", ",", ".", "Hunde", "3.5", "(alt)",
         "dass", "schläft", "zwei-", "Äpfel", "x"]


def random_corpus(rng, n_sentences):
    """Sentences from a small vocabulary (so that n-grams match now and then), some empty or one word,
    some with punctuation and numbers that 13a tokenization splits or keeps."""
    def sentence():
        length = rng.choice([0, 1, 2, 3, 5, 8, 12])
        return " ".join(rng.choice(WORDS, size=length))

    hypotheses = [sentence() for _ in range(n_sentences)]
    references = [sentence() if rng.random() < 0.5 else mutate(h, rng, WORDS) for h in hypotheses]
    return hypotheses, references


def mutate(sentence, rng, words):
    """sentence with a word or two changed, dropped or added: a near miss."""
    tokens = sentence.split()
    for _ in range(rng.integers(1, 3)):
        i = rng.integers(0, len(tokens) + 1)
        action = rng.integers(0, 3)
        if action == 0 or not tokens:
            tokens.insert(i, str(rng.choice(words)))
        elif action == 1:
            tokens.pop(min(i, len(tokens) - 1))
        else:
            tokens[min(i, len(tokens) - 1)] = str(rng.choice(words))
    return " ".join(tokens)


def random_corpora(n):
    rng = np.random.default_rng(0)
    return [random_corpus(rng, int(rng.integers(1, 12))) for _ in range(n)]


@pytest.mark.parametrize("hypotheses,references", HAND_CASES + random_corpora(200))
def test_equal_to_sacrebleu_defaults(hypotheses, references):
    sacrebleu = pytest.importorskip("sacrebleu")
    assert bleu(hypotheses, references) == pytest.approx(
        sacrebleu.corpus_bleu(hypotheses, [references]).score, abs=1e-6)
    assert chrf(hypotheses, references) == pytest.approx(
        sacrebleu.corpus_chrf(hypotheses, [references]).score, abs=1e-6)


def test_the_random_corpora_cover_the_hard_cases():
    """The corpora above include what must be right: empty hypotheses, zero scores, partial and full scores."""
    corpora = random_corpora(200)
    assert any("" in hypotheses for hypotheses, _ in corpora)
    scores = [bleu(h, r) for h, r in corpora]
    assert min(scores) == 0.0 and max(scores) > 50 and any(0 < s < 50 for s in scores)


def test_a_short_sentence_scores_0_at_corpus_level_and_100_as_a_sentence():
    # "Ja." is 2 words (Ja, .): p_1 = 2/2, p_2 = 1/1, and no 3-gram or 4-gram at all. Over 4 orders the
    # geometric mean has a p_n of 0 (no smoothing gives an n-gram that does not exist a value); over the
    # effective order (the 2 orders it has) it is 100.
    assert bleu(["Ja."], ["Ja."]) == 0.0
    assert sentence_bleu("Ja.", ["Ja."]) == pytest.approx(100.0) == sentence_bleu("Ja.", "Ja.")
    assert bleu(["Ja."], ["Ja."], effective_order=True) == pytest.approx(100.0)
    assert sentence_bleu("Ja.", ["Ja."], effective_order=False) == 0.0
    # "Nein" against "Ja.": no match of any order, 0 whatever the smoothing
    assert all(sentence_bleu("Nein", "Ja.", smoothing) == 0.0 for smoothing in SMOOTHING)


def test_each_smoothing_by_hand():
    # "der Hund der Hund" (c = 4) against "der Hund sieht die Katze" (r = 5): matched 2, 1, 0, 0 of 4, 3, 2, 1
    brevity_penalty = math.exp(1 - 5 / 4)

    def expected(precisions):
        return 100 * brevity_penalty * math.exp(sum(map(math.log, precisions)) / 4)

    hypothesis, reference = ["der Hund der Hund"], ["der Hund sieht die Katze"]
    assert bleu(hypothesis, reference, "exp") == pytest.approx(expected([2 / 4, 1 / 3, 1 / (2 * 2), 1 / (4 * 1)]))
    assert bleu(hypothesis, reference, "floor") == pytest.approx(expected([2 / 4, 1 / 3, 0.1 / 2, 0.1 / 1]))
    assert bleu(hypothesis, reference, "floor", 0.5) == pytest.approx(expected([2 / 4, 1 / 3, 0.5 / 2, 0.5 / 1]))
    assert bleu(hypothesis, reference, "add-k") == pytest.approx(expected([2 / 4, 2 / 4, 1 / 3, 1 / 2]))
    assert bleu(hypothesis, reference, "none") == 0.0


def test_several_references_clip_by_the_most_one_holds_and_take_the_closest_length():
    # "die Katze die Katze" against "die Katze schläft" and "die Katze und die Katze":
    # 1-grams: die x2 and Katze x2, the second reference holds each twice -> 4/4; 2-grams: "die Katze" x2
    # (twice in the second) and "Katze die" (in neither) -> 2/3; 3-grams 0/2 -> 1/(2*2); 4-grams 0/1 -> 1/(4*1).
    # Lengths 3 and 5 are equally close to c = 4: the shorter counts, r = 3, no brevity penalty.
    precisions = [4 / 4, 2 / 3, 1 / 4, 1 / 4]
    two = [["die Katze schläft"], ["die Katze und die Katze"]]
    assert bleu(["die Katze die Katze"], two) == pytest.approx(
        100 * math.exp(sum(map(math.log, precisions)) / 4), abs=1e-12)
    # one stream given alone or as a list of one stream: the same
    h, r = random_corpus(np.random.default_rng(1), 8)
    assert bleu(h, r) == bleu(h, [r]) and chrf(h, r) == chrf(h, [r])
    # a second reference can only raise a sentence's counts: BLEU with an exact copy added is 100
    assert bleu(h, [r, h]) == pytest.approx(100.0) and chrf(h, [r, h]) >= chrf(h, r)


def random_streams(rng, n_sentences, n_streams):
    """A corpus and n_streams reference streams: each reference a near miss of its hypothesis or unrelated."""
    hypotheses, first = random_corpus(rng, n_sentences)
    others = [[mutate(h, rng, WORDS) if rng.random() < 0.6 else random_corpus(rng, 1)[0][0] for h in hypotheses]
              for _ in range(n_streams - 1)]
    return hypotheses, [first] + others


SETTINGS = [(smoothing, effective_order) for smoothing in SMOOTHING for effective_order in (False, True)]


def test_corpus_scores_equal_sacrebleu_for_every_smoothing_and_several_references():
    sacrebleu = pytest.importorskip("sacrebleu")
    rng = np.random.default_rng(2)
    differences, scores = [], []
    for case in range(300):
        hypotheses, streams = random_streams(rng, int(rng.integers(1, 8)), int(rng.integers(1, 5)))
        for smoothing, effective_order in SETTINGS:
            ours = bleu(hypotheses, streams, smoothing, effective_order=effective_order)
            theirs = sacrebleu.corpus_bleu(hypotheses, streams, smooth_method=smoothing,
                                           use_effective_order=effective_order).score
            differences.append(abs(ours - theirs))
            scores.append(ours)
        differences.append(abs(chrf(hypotheses, streams) - sacrebleu.corpus_chrf(hypotheses, streams).score))
    assert max(differences) < 1e-9
    assert min(scores) == 0.0 and max(scores) > 90 and sum(0 < s < 90 for s in scores) > len(scores) / 4


def test_sentence_scores_equal_sacrebleu_for_every_smoothing_and_several_references():
    sacrebleu = pytest.importorskip("sacrebleu")
    rng = np.random.default_rng(3)
    differences, scores = [], []
    for case in range(500):
        (hypothesis,), streams = random_streams(rng, 1, int(rng.integers(1, 4)))
        references = [stream[0] for stream in streams]
        for smoothing, effective_order in SETTINGS:
            ours = sentence_bleu(hypothesis, references, smoothing, effective_order=effective_order)
            theirs = sacrebleu.sentence_bleu(hypothesis, references, smooth_method=smoothing,
                                             use_effective_order=effective_order).score
            differences.append(abs(ours - theirs))
            scores.append(ours)
        differences.append(abs(sentence_chrf(hypothesis, references)
                               - sacrebleu.sentence_chrf(hypothesis, references).score))
    assert max(differences) < 1e-9
    assert min(scores) == 0.0 and max(scores) > 99 and sum(0 < s < 90 for s in scores) > len(scores) / 4


@pytest.mark.parametrize("hypothesis, references", [
    ("Ja.", ["Ja."]), ("Ja", ["Ja."]), ("Nein.", ["Ja.", "Nein."]), ("Der Hund.", ["Der Hund schläft."]),
    ("", ["Ja."]), ("Ja.", [""]), ("a b c", ["a b c", "a b"]), ("x", ["x y", "y x"]),
])
def test_short_sentences_equal_sacrebleu(hypothesis, references):
    sacrebleu = pytest.importorskip("sacrebleu")
    for smoothing, effective_order in SETTINGS:
        assert sentence_bleu(hypothesis, references, smoothing, effective_order=effective_order) == pytest.approx(
            sacrebleu.sentence_bleu(hypothesis, references, smooth_method=smoothing,
                                    use_effective_order=effective_order).score, abs=1e-9)
        assert bleu([hypothesis], [[r] for r in references], smoothing, effective_order=effective_order) == \
            pytest.approx(sacrebleu.corpus_bleu([hypothesis], [[r] for r in references], smooth_method=smoothing,
                                                use_effective_order=effective_order).score, abs=1e-9)
    assert sentence_chrf(hypothesis, references) == pytest.approx(
        sacrebleu.sentence_chrf(hypothesis, references).score, abs=1e-9)
