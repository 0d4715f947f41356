"""How good is a translation? BLEU and chrF, the two scores machine translation reports.

Both compare a system's outputs (hypotheses) with human translations
(references), one reference per hypothesis, over a whole test set (corpus
level: the counts are summed over all sentences first, then turned into one
score from 0 to 100). Both give the same numbers as sacrebleu's defaults
(`corpus_bleu`, `corpus_chrf`), the scores papers quote.

    bleu(["der Hund sieht die Katze ."], ["der Hund sieht die Katze ."])    # 100.0
    chrf(["der Hund sieht die Katze ."], ["die Hunde sehen die Katze ."])   # partial credit for "Hund"

BLEU (Papineni et al., 2002) counts word n-grams, n = 1..4. For each n, its
precision is the share of the hypotheses' n-grams found in the references,
each n-gram counted at most as often as its reference holds it ("clipped", so
that "the the the" does not score on "the cat"). The score is the geometric
mean of the four precisions, times a brevity penalty: precision alone would
reward saying little, so a corpus of hypotheses shorter than its references
(c words against r) is multiplied by exp(1 - r / c).

chrF (Popovic, 2015) counts character n-grams, n = 1..6, spaces removed, and
weighs recall beta = 2 times as much as precision. It gives credit for a word
half right ("Hunde" for "Hund"), which BLEU does not.
"""
import math
import re
from collections import Counter

BLEU_ORDER = 4           # word n-grams of 1 to 4 words
CHRF_ORDER = 6           # character n-grams of 1 to 6 characters
CHRF_BETA = 2            # recall counts beta times as much as precision


def tokenize_13a(line):
    """Split a sentence into words as the WMT evaluations do (mteval-v13a): punctuation becomes
    words of its own, so "Katze." is "Katze ."; a point or comma between digits (3.5, 1,000) stays."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    for entity, character in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
        line = line.replace(entity, character)
    line = f" {line} "
    line = re.sub(r"([{|}~\[\\\]^_`\ !\"#$%&()*+:;<=>?@/])", r" \1 ", line)   # symbols: always apart
    line = re.sub(r"([^0-9])([.,])", r"\1 \2 ", line)      # a point or comma after a non-digit
    line = re.sub(r"([.,])([^0-9])", r" \1 \2", line)      # ... or before one
    line = re.sub(r"([0-9])(-)", r"\1 \2 ", line)          # a dash after a digit
    return line.split()


def ngrams(items, n):
    """Counts of the n-grams of a sequence (words or characters): ngrams("abab", 2) = {ab: 2, ba: 1}."""
    return Counter(tuple(items[i:i + n]) for i in range(len(items) - n + 1))


def check_corpus(name, hypotheses, references):
    """Two lists of strings of one length: one clear line otherwise."""
    for role, texts in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(texts, str) or not all(isinstance(text, str) for text in texts):
            raise TypeError(f"{name}: {role} must be a list of strings (one per sentence), got {texts!r:.80}")
    if len(hypotheses) != len(references):
        raise ValueError(f"{name}: one reference per hypothesis, got {len(hypotheses)} hypotheses "
                         f"and {len(references)} references")


def bleu_statistics(hypotheses, references):
    """What BLEU needs, summed over the corpus: matched[n-1] and total[n-1] (clipped matches and
    all n-grams of the hypotheses, n = 1..4), the hypotheses' length c and the references' length r."""
    matched, total = [0] * BLEU_ORDER, [0] * BLEU_ORDER
    c = r = 0
    for hypothesis, reference in zip(hypotheses, references):
        hyp, ref = tokenize_13a(hypothesis.rstrip()), tokenize_13a(reference.rstrip())
        c, r = c + len(hyp), r + len(ref)
        for n in range(1, BLEU_ORDER + 1):
            hyp_ngrams, ref_ngrams = ngrams(hyp, n), ngrams(ref, n)
            total[n - 1] += sum(hyp_ngrams.values())
            # clipped: an n-gram scores at most as often as the reference holds it
            matched[n - 1] += sum(min(count, ref_ngrams[gram]) for gram, count in hyp_ngrams.items())
    return matched, total, c, r


def bleu(hypotheses, references):
    """Corpus BLEU, 0 to 100, as sacrebleu's corpus_bleu(hypotheses, [references]) with its defaults.

    Smoothing ("exp", as mteval): an order with no match at all would make the
    geometric mean 0, so its precision is taken as 1 / (2^k * total) instead,
    k counting such orders from 1. No match of any order at all gives 0; so do no
    hypothesis words, or an order the hypotheses are too short to have at all.
    """
    check_corpus("bleu", hypotheses, references)
    matched, total, c, r = bleu_statistics(hypotheses, references)
    if c == 0 or not any(matched) or not all(total):
        return 0.0
    brevity_penalty = 1.0 if c >= r else math.exp(1 - r / c)
    log_precisions, halvings = [], 0
    for n_matched, n_total in zip(matched, total):
        if n_matched == 0:
            halvings += 1
            log_precisions.append(math.log(1 / (2 ** halvings * n_total)))
        else:
            log_precisions.append(math.log(n_matched / n_total))
    return 100 * brevity_penalty * math.exp(sum(log_precisions) / BLEU_ORDER)


def chrf(hypotheses, references):
    """Corpus chrF, 0 to 100, as sacrebleu's corpus_chrf(hypotheses, [references]) with its defaults
    (character n-grams of 1 to 6, spaces removed, beta = 2, no word n-grams).

    For each order n the corpus's matches give a precision (of the hypotheses' n-grams, counting
    only sentences whose reference has n-grams of that order) and a recall (of the references');
    both are averaged over the orders that both sides have, and
    the averages are combined as F_beta = (1 + beta^2) P R / (beta^2 P + R).
    """
    check_corpus("chrf", hypotheses, references)
    hyp_count, ref_count, match_count = [0] * CHRF_ORDER, [0] * CHRF_ORDER, [0] * CHRF_ORDER
    for hypothesis, reference in zip(hypotheses, references):
        hyp, ref = "".join(hypothesis.split()), "".join(reference.split())      # spaces do not count
        for n in range(1, CHRF_ORDER + 1):
            hyp_ngrams, ref_ngrams = ngrams(hyp, n), ngrams(ref, n)
            # a reference too short for this order has nothing to match: its hypothesis is not counted
            hyp_count[n - 1] += sum(hyp_ngrams.values()) if ref_ngrams else 0
            ref_count[n - 1] += sum(ref_ngrams.values())
            match_count[n - 1] += sum((hyp_ngrams & ref_ngrams).values())     # & keeps the smaller count
    orders = [n for n in range(CHRF_ORDER) if hyp_count[n] and ref_count[n]]
    if not orders:
        return 0.0
    precision = sum(match_count[n] / hyp_count[n] for n in orders) / len(orders)
    recall = sum(match_count[n] / ref_count[n] for n in orders) / len(orders)
    if precision + recall == 0:
        return 0.0
    b2 = CHRF_BETA ** 2
    return 100 * (1 + b2) * precision * recall / (b2 * precision + recall)
