"""How good is a translation? BLEU and chrF, the two scores machine translation reports.

Both compare a system's outputs (hypotheses) with human translations
(references) over a whole test set (corpus level: the counts are summed over
all sentences first, then turned into one score from 0 to 100). Both give the
same numbers as sacrebleu's `corpus_bleu`, `sentence_bleu`, `corpus_chrf` and
`sentence_chrf` with their defaults, the scores papers quote.

    bleu(["der Hund sieht die Katze ."], ["der Hund sieht die Katze ."])    # 100.0
    chrf(["der Hund sieht die Katze ."], ["die Hunde sehen die Katze ."])   # partial credit for "Hund"
    bleu(hypotheses, [references_1, references_2])    # two reference translations of every sentence
    sentence_bleu("Ja.", ["Ja."])                     # 100.0 (corpus BLEU of this one sentence: 0.0)

References come as one stream (a list of strings, one per hypothesis) or as
several (a list of such lists, as sacrebleu takes them): a sentence translated
by several people may be right in several ways.

BLEU (Papineni et al., 2002) counts word n-grams, n = 1..4. For each n, its
precision p_n is the share of the hypotheses' n-grams found in the references,
each n-gram counted at most as often as one reference holds it ("clipped", so
that "the the the" does not score on "the cat"; with several references, the
most any one of them holds). The score is

    BLEU = 100 * BP * exp((log p_1 + log p_2 + log p_3 + log p_4) / 4),    BP = min(1, exp(1 - r / c)):

the geometric mean of the four precisions, times a brevity penalty: precision
alone would reward saying little, so a corpus of hypotheses shorter than its
references (c words against r; with several references, each sentence counts
the reference length closest to its own) is penalised. One p_n of 0 makes the
geometric mean 0, which a short sentence or a small corpus easily has: smoothing
gives such a p_n a small value instead (SMOOTHING lists the ways).

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
# What an order n with no match (matched_n = 0 of total_n n-grams) gets, by smoothing method (sacrebleu's names;
# Chen and Cherry, 2014, compare them):
#   "exp"   (the default, mteval's): p_n = 1 / (2^k total_n), k = 1, 2, ... counting such orders from n = 1
#   "floor": p_n = value / total_n, value 0.1 by default
#   "add-k": every order n >= 2 has value (1 by default) added to matched_n and total_n, matched or not
#   "none":  p_n = 0, so BLEU = 0
SMOOTHING = {"exp": None, "floor": 0.1, "add-k": 1, "none": None}


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


def reference_streams(name, hypotheses, references):
    """The references as a list of streams, each a list of one string per hypothesis: references is one
    stream (a list of strings) or several (a list of such lists). One clear line otherwise."""
    if isinstance(hypotheses, str) or not all(isinstance(text, str) for text in hypotheses):
        raise TypeError(f"{name}: hypotheses must be a list of strings (one per sentence), got {hypotheses!r:.80}")
    several = not isinstance(references, str) and len(references) > 0 and \
        all(isinstance(stream, (list, tuple)) for stream in references)
    streams = list(references) if several else [references]
    for k, stream in enumerate(streams, 1):
        where = f"reference stream {k}" if several else "references"
        if isinstance(stream, str) or not all(isinstance(text, str) for text in stream):
            raise TypeError(f"{name}: {where} must be a list of strings (one per sentence), or a list of such "
                            f"lists (several references of each sentence), got {stream!r:.80}")
        if len(stream) != len(hypotheses):
            raise ValueError(f"{name}: one reference per hypothesis, got {len(hypotheses)} hypotheses "
                             f"and {len(stream)} references" + (f" in stream {k}" if several else ""))
    return streams


def bleu_statistics(hypotheses, references):
    """What BLEU needs, summed over the corpus: matched[n-1] and total[n-1] (clipped matches and
    all n-grams of the hypotheses, n = 1..4), the hypotheses' length c and the references' length r
    (per sentence, the reference length closest to the hypothesis's, the shorter of two as close)."""
    streams = reference_streams("bleu", hypotheses, references)
    matched, total = [0] * BLEU_ORDER, [0] * BLEU_ORDER
    c = r = 0
    for hypothesis, *sentence_references in zip(hypotheses, *streams):
        hyp = tokenize_13a(hypothesis.rstrip())
        refs = [tokenize_13a(reference.rstrip()) for reference in sentence_references]
        c += len(hyp)
        r += min((len(ref) for ref in refs), key=lambda length: (abs(length - len(hyp)), length))
        for n in range(1, BLEU_ORDER + 1):
            hyp_ngrams = ngrams(hyp, n)
            ref_ngrams = Counter()
            for ref in refs:
                ref_ngrams |= ngrams(ref, n)           # | keeps the larger count: the most one reference holds
            total[n - 1] += sum(hyp_ngrams.values())
            # clipped: an n-gram scores at most as often as a reference holds it
            matched[n - 1] += sum(min(count, ref_ngrams[gram]) for gram, count in hyp_ngrams.items())
    return matched, total, c, r


def smoothing_value(smoothing, smooth_value):
    """The value smoothing uses (smooth_value, or SMOOTHING's default); one clear line for a method or a value
    that is not one."""
    if smoothing not in SMOOTHING:
        raise ValueError(f"bleu: smoothing must be one of {', '.join(SMOOTHING)}, got {smoothing!r}")
    if smooth_value is not None and not (isinstance(smooth_value, (int, float)) and smooth_value > 0):
        raise ValueError(f"bleu: smooth_value must be a number > 0 (None: {SMOOTHING[smoothing]} for "
                         f"{smoothing!r}), got {smooth_value!r}")
    return SMOOTHING[smoothing] if smooth_value is None else smooth_value


def bleu_score(matched, total, c, r, smoothing="exp", smooth_value=None, effective_order=False):
    """BLEU, 0 to 100, from bleu_statistics' counts, smoothed by one of SMOOTHING (smooth_value: its value
    for "floor" and "add-k", None for SMOOTHING's). No match of any order gives 0, smoothed or not.

        BLEU = 100 * BP * exp(mean of log p_n over the orders),  p_n = matched_n / total_n (smoothed if 0)
        BP   = 1 if c >= r else exp(1 - r / c)

    effective_order: the geometric mean runs only over the orders the hypotheses have at all (a sentence of
    2 words has no 3-gram: BLEU over p_1, p_2); without it such an order is a p_n of 0, and BLEU 0.
    """
    value = smoothing_value(smoothing, smooth_value)
    if not any(matched):
        return 0.0
    precisions, halvings = [], 0
    for n, (n_matched, n_total) in enumerate(zip(matched, total), 1):
        if smoothing == "add-k" and n > 1:
            n_matched, n_total = n_matched + value, n_total + value
        if n_total == 0:                    # the hypotheses are too short for this order and all above it
            break
        if n_matched > 0:
            precisions.append(n_matched / n_total)
        elif smoothing == "exp":
            halvings += 1
            precisions.append(1 / (2 ** halvings * n_total))
        else:
            precisions.append(value / n_total if smoothing == "floor" else 0.0)
    orders = len(precisions) if effective_order else BLEU_ORDER
    if len(precisions) < orders or min(precisions) <= 0:
        return 0.0
    brevity_penalty = 1.0 if c >= r else math.exp(1 - r / c)
    return 100 * brevity_penalty * math.exp(sum(map(math.log, precisions)) / orders)


def bleu(hypotheses, references, smoothing="exp", smooth_value=None, effective_order=False):
    """Corpus BLEU, 0 to 100, as sacrebleu's corpus_bleu(hypotheses, [references]) (or [refs_1, refs_2, ...])
    with its defaults: "exp" smoothing, all 4 orders. references: a list of strings, or a list of such
    lists; the other arguments as bleu_score's."""
    smoothing_value(smoothing, smooth_value)                     # checked before the corpus is counted
    return bleu_score(*bleu_statistics(hypotheses, references), smoothing, smooth_value, effective_order)


def sentence_bleu(hypothesis, references, smoothing="exp", smooth_value=None, effective_order=True):
    """BLEU of one sentence, 0 to 100, as sacrebleu's sentence_bleu(hypothesis, references) with its defaults:
    "exp" smoothing and the effective order, so "Ja." against "Ja." is 100 (corpus BLEU gives it 0: it has
    no 3-gram). references: the sentence's reference, or a list of its references."""
    if not isinstance(hypothesis, str):
        raise TypeError(f"sentence_bleu: the hypothesis must be a string, got {hypothesis!r:.80}")
    references = [references] if isinstance(references, str) else references
    return bleu([hypothesis], [[reference] for reference in references], smoothing, smooth_value, effective_order)


def chrf_statistics(hypothesis, reference):
    """[(hypothesis n-grams, reference n-grams, matches) for n = 1..6] of one sentence pair, spaces removed;
    a reference too short for an order has nothing to match, so its hypothesis n-grams are not counted."""
    hyp, ref = "".join(hypothesis.split()), "".join(reference.split())          # spaces do not count
    counts = []
    for n in range(1, CHRF_ORDER + 1):
        hyp_ngrams, ref_ngrams = ngrams(hyp, n), ngrams(ref, n)
        counts.append((sum(hyp_ngrams.values()) if ref_ngrams else 0, sum(ref_ngrams.values()),
                       sum((hyp_ngrams & ref_ngrams).values())))              # & keeps the smaller count
    return counts


def chrf_score(counts):
    """chrF, 0 to 100, from [(hypothesis n-grams, reference n-grams, matches)] per order: the precision P and
    recall R averaged over the orders both sides have, F_beta = (1 + beta^2) P R / (beta^2 P + R)."""
    orders = [(n_hyp, n_ref, n_match) for n_hyp, n_ref, n_match in counts if n_hyp and n_ref]
    if not orders:
        return 0.0
    precision = sum(n_match / n_hyp for n_hyp, _, n_match in orders) / len(orders)
    recall = sum(n_match / n_ref for _, n_ref, n_match in orders) / len(orders)
    if precision + recall == 0:
        return 0.0
    b2 = CHRF_BETA ** 2
    return 100 * (1 + b2) * precision * recall / (b2 * precision + recall)


def chrf(hypotheses, references):
    """Corpus chrF, 0 to 100, as sacrebleu's corpus_chrf(hypotheses, [references]) (or [refs_1, refs_2, ...])
    with its defaults (character n-grams of 1 to 6, spaces removed, beta = 2, no word n-grams).

    Each sentence counts its n-grams against the one reference that gives it the best chrF (the first of
    equals); the counts are summed over the corpus and turned into one score by chrf_score.
    """
    streams = reference_streams("chrf", hypotheses, references)
    summed = [(0, 0, 0)] * CHRF_ORDER
    for hypothesis, *sentence_references in zip(hypotheses, *streams):
        candidates = [chrf_statistics(hypothesis, reference) for reference in sentence_references]
        best = max(candidates, key=chrf_score)                 # max keeps the first of equal scores
        summed = [tuple(map(sum, zip(a, b))) for a, b in zip(summed, best)]
    return chrf_score(summed)


def sentence_chrf(hypothesis, references):
    """chrF of one sentence, 0 to 100, as sacrebleu's sentence_chrf(hypothesis, references): references is
    the sentence's reference, or a list of its references."""
    if not isinstance(hypothesis, str):
        raise TypeError(f"sentence_chrf: the hypothesis must be a string, got {hypothesis!r:.80}")
    references = [references] if isinstance(references, str) else references
    return chrf([hypothesis], [[reference] for reference in references])
