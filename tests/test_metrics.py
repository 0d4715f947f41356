"""metrics.py: BLEU and chrF, by hand on small cases and against sacrebleu's defaults on many corpora."""
import math

import numpy as np
import pytest

from tinytransformer.metrics import bleu, chrf, ngrams, tokenize_13a

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


def random_corpus(rng, n_sentences):
    """Sentences from a small vocabulary (so that n-grams match now and then), some empty or one word,
    some with punctuation and numbers that 13a tokenization splits or keeps."""
    words = ["der", "die", "das", "Hund", "Katze", "sieht", "nicht", ",", ".", "Hunde", "3.5", "(alt)",
             "dass", "schläft", "zwei-", "Äpfel", "x"]

    def sentence():
        length = rng.choice([0, 1, 2, 3, 5, 8, 12])
        return " ".join(rng.choice(words, size=length))

    hypotheses = [sentence() for _ in range(n_sentences)]
    references = [sentence() if rng.random() < 0.5 else mutate(h, rng, words) for h in hypotheses]
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
