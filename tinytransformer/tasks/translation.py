"""translate: English to German for the encoder-decoder, on sentences drawn from the german/ grammar.

    The old dog does not see the small cat.   ->  Der alte Hund sieht die kleine Katze nicht.
    The cat sat on the mat.                   ->  Die Katze hat auf der Matte gesessen.
    Where does the man work?                  ->  Wo arbeitet der Mann?
    The man says that the children have forty-two books.
                                              ->  Der Mann sagt, dass die Kinder zweiundvierzig Bücher haben.

Everything is generated, offline and from a seed: german/draws.py's draw_sentence
picks what a sentence says (a german.Sentence) and the grammar writes it in both
languages. The English is read word by word (lower case, "forty-two" as two
words, n't as not); the German is written in the grammar's pieces.

One vocabulary for both languages (the paper's choice too: one BPE vocabulary
for English and German): the Transformer has one embedding table, which reads
the source, reads the target and (tied) writes the output. Its ids: PAD, BOS,
EOS, the English words, then the German pieces.

Two test sets, drawn once from split_seed, that training never sees and nothing
is chosen by, measured once at the end:
- held_out: sentences drawn as training draws them; training skips any sentence
  that is one of them. It measures translating new sentences of known kinds.
- compositional: sentences with something training never shows, five kinds:
  an adjective with a noun it never qualifies in training (UNSEEN_PAIRS), a
  number never seen (UNSEEN_NUMBERS), negation inside a dass/weil clause
  (training negates main clauses only), the perfect of a verb in a main clause
  (UNSEEN_BRACKET: training shows its participle only at the end of a dass/weil
  clause), and a where question in the past (training asks where in the
  present). It measures whether the model combines what it learnt.
Training stops on a third set, validation: sentences drawn as training draws
them from their own seed, none of them a test sentence (training draws fresh
sentences, so a frequent short one may also be trained on, as it may be asked).
Measured by BLEU and chrF (metrics.py) on the German text, and exact match.

pairs="ding" trains on real sentences instead: those of Debian's Ding dictionary
where it is installed (ding.py), as BPE tokens, with a test set and a
validation set carved from the training pairs, and no compositional one.
"""
import dataclasses
from typing import NamedTuple

import numpy as np

from .. import nn
from ..decode import beam_search, greedy
from ..metrics import bleu, chrf
from ..vocabulary import BOS, EOS, N_SPECIAL, PAD
from . import ding, german
from .german.parse import reading
from .german.draws import COMPOSITIONAL_KINDS, UNSEEN_BRACKET, UNSEEN_NUMBERS, UNSEEN_PAIRS, draw_sentence  # noqa: F401
from .batches import Batch
from .sequences import transformer_loss
from .options import option
from .task import Task, TrainSettings, check_option, exact_match

MAX_TOKENS = 30          # the longest sentence draw_sentence can make fits, in words or pieces (a test checks it)
SPECIAL_NAMES = {PAD: "<pad>", BOS: "<s>", EOS: "</s>"}
PAIRS = ("generated", "ding")     # the grammar's sentences, or the Ding dictionary's (ding.py)


def distinct_sentences(rng, n, taken=frozenset()):
    """n sentences drawn by draw_sentence from rng, no two the same in English and none whose English is taken."""
    sentences = {}                        # English text -> Sentence, so that no sentence is there twice
    while len(sentences) < n:
        sentence = draw_sentence(rng)
        english = german.english_text(german.english_words(sentence))
        if english not in taken:
            sentences.setdefault(english, sentence)
    return list(sentences.values())


def english_tokens(text):
    """An English sentence as the words the model reads: lower case, a final . ! or ? dropped,
    hyphenated numbers as two words, n't as not: "The dog doesn't have forty-two balls." ->
    [the, dog, does, not, have, forty, two, balls]."""
    text = text.strip().lower().replace("n't", " not").replace("'m", " am")
    text = text[:-1] if text[-1:] in ".!?" else text
    return text.replace("-", " ").split()


class Vocabulary:
    """The shared vocabulary: PAD, BOS, EOS, the English words, the German pieces; token <-> id."""

    def __init__(self):
        english = german.english_vocabulary()
        shared = english + [piece for piece in german.german_vocabulary() if piece not in set(english)]
        self.tokens = [SPECIAL_NAMES[i] for i in range(N_SPECIAL)] + shared     # a word of both: one id
        self.ids = {token: i for i, token in enumerate(self.tokens)}
        self.english = set(english)

    def __len__(self):
        return len(self.tokens)

    def encode_english(self, text):
        """An English sentence -> ids (T,); one clear line naming the words this vocabulary lacks."""
        words = english_tokens(text)
        if not words:
            raise ValueError("translate: the sentence is empty; give an English sentence such as "
                             "'The old dog sees the small cat.'")
        unknown = [word for word in words if word not in self.english]
        if unknown:
            raise ValueError(f"translate: {', '.join(repr(w) for w in dict.fromkeys(unknown))} "
                             f"{'is' if len(set(unknown)) == 1 else 'are'} not in the vocabulary; "
                             f"it knows {len(self.english)} English words: {' '.join(sorted(self.english))}")
        return np.array([self.ids[word] for word in words], dtype=np.int64)

    def german_ids(self, pieces):
        return np.array([self.ids[piece] for piece in pieces], dtype=np.int64)

    def token_name(self, i):
        return self.tokens[int(i)]

    def german_text(self, ids):
        """Decoded ids (up to EOS, PAD ignored) -> a German sentence; an English word the model
        wrote by mistake stays as it is."""
        pieces = []
        for i in ids:
            if i == EOS:
                break
            if i >= N_SPECIAL:
                pieces.append(self.tokens[i])
        return german.german_text(pieces)


VOCABULARY = Vocabulary()
ROOM = dict(vocab_size=len(VOCABULARY), max_len=MAX_TOKENS + 1)         # + 1: BOS or EOS


class Pairs(NamedTuple):
    """Sentences in both languages, as text and as a padded Batch."""
    english: list
    german: list
    batch: Batch


def as_pairs(sentences):
    """Sentences (german.Sentence) -> Pairs; src (B, T_src), tgt_in and tgt_out (B, T_tgt + 1), PAD after."""
    english, german_texts, src_rows, tgt_rows = [], [], [], []
    for sentence in sentences:
        pieces = german.german_pieces(sentence)
        english.append(german.english_text(german.english_words(sentence)))
        german_texts.append(german.german_text(pieces))
        src_rows.append(VOCABULARY.encode_english(english[-1]))
        tgt_rows.append(VOCABULARY.german_ids(pieces))
        if max(len(src_rows[-1]), len(pieces)) > MAX_TOKENS:          # a bug of the grammar, never the user's
            raise ValueError(f"translate: a sentence of {max(len(src_rows[-1]), len(pieces))} tokens is "
                             f"longer than MAX_TOKENS={MAX_TOKENS}: {english[-1]}")
    return pairs_of(english, german_texts, src_rows, tgt_rows)


def pairs_of(english, german_texts, src_rows, tgt_rows):
    """Texts and their ids -> Pairs; src (B, T_src), tgt_in and tgt_out (B, T_tgt + 1), PAD after."""
    B = len(src_rows)
    src = as_padded(src_rows)                                                      # (B, T_src)
    T = max(map(len, tgt_rows)) + 1
    tgt_in = np.full((B, T), PAD, dtype=np.int64)                                  # (B, T_tgt + 1)
    tgt_out = np.full((B, T), PAD, dtype=np.int64)
    for b, target in enumerate(tgt_rows):
        tgt_in[b, 0], tgt_in[b, 1:len(target) + 1] = BOS, target
        tgt_out[b, :len(target)], tgt_out[b, len(target)] = target, EOS
    return Pairs(english, german_texts, Batch(src, tgt_in, tgt_out))


def translate(model, sentences, beam=None, vocabulary=VOCABULARY):
    """English sentences (strings) -> German sentences (strings), greedy or with beam search of width beam."""
    src = as_padded([vocabulary.encode_english(sentence) for sentence in sentences])   # (B, T_src)
    max_len = model.config.max_len
    ids = greedy(model, src, max_len) if beam is None else beam_search(model, src, max_len, beam_width=beam)
    return [vocabulary.german_text(row) for row in ids]


def grammar_translation(text):
    """The grammar's own German for an English sentence (german.parse), or None if the grammar cannot say it."""
    return grammar_reading(text)[0]


def grammar_reading(text):
    """(the grammar's own German for an English sentence, None), or (None, why the grammar cannot say it)."""
    sentence, why = reading(tuple(english_tokens(text)))
    return (None, why) if sentence is None else (german.german_text(german.german_pieces(sentence)), None)


class Checked(NamedTuple):
    """The model's German for an English sentence, and the grammar's: grammar is None where the grammar cannot
    say the sentence (outside is then why), and the model's German is not checked."""
    german: str
    grammar: str | None
    outside: str | None

    def line(self, compare=True):
        """The German, and in brackets beside it: a warning where the grammar cannot check it, and (compare)
        the grammar's German where the two differ. str(checked) is line()."""
        if self.grammar is None:
            return f"{self.german}    [not checked: {self.outside}]"
        if compare and self.grammar != self.german:
            return f"{self.german}    [the grammar: {self.grammar}]"
        return self.german

    __str__ = line


def translate_checked(model, sentences, beam=None):
    """English sentences (strings) -> a Checked for each: the model's German (as translate gives it) beside the
    grammar's, or a warning that the grammar cannot check it."""
    return [Checked(german_text, *grammar_reading(sentence))
            for german_text, sentence in zip(translate(model, sentences, beam), sentences)]


def as_padded(rows):
    """Rows of ids of different lengths -> one array (B, longest), PAD after each row."""
    padded = np.full((len(rows), max(map(len, rows))), PAD, dtype=np.int64)          # (B, T)
    for b, row in enumerate(rows):
        padded[b, :len(row)] = row
    return padded


def scores(model, pairs, beam=None, vocabulary=VOCABULARY):
    """{"bleu", "chrf", "exact_match", "outputs"} of the model on pairs (greedy, or beam search)."""
    outputs = translate(model, pairs.english, beam, vocabulary)
    return {"bleu": bleu(outputs, pairs.german), "chrf": chrf(outputs, pairs.german),
            "exact_match": float(np.mean([o == g for o, g in zip(outputs, pairs.german)])), "outputs": outputs}


@dataclasses.dataclass
class TranslationTask(Task):
    """English to German for the encoder-decoder Transformer; stopped on greedy decoding of validation
    sentences, tested on the test sentences and the compositional ones."""
    n_held_out: int = 500            # test sentences, drawn as training draws
    n_compositional: int = 100       # test sentences of each compositional kind
    n_validation: int = 500          # validation sentences, drawn as training draws, none a test sentence
    split_seed: int = 0              # the test and validation sets are drawn once, from this seed
    pairs: str = option("generated", "--pairs", "the grammar's sentences (generated) or the Ding dictionary's real "
                        "ones (ding, read from Debian's trans-de-en where it is installed)", choices=PAIRS)

    name, model_class, examples = "translate", nn.Transformer, "sentences"
    settings = TrainSettings(steps=3000, eval_every=100, target_accuracy=0.9)

    def __post_init__(self):
        check_option(self, "n_held_out", 1)
        check_option(self, "n_compositional", 1)
        check_option(self, "n_validation", 1)
        if self.pairs not in PAIRS:
            raise ValueError(f"translate: pairs must be one of {PAIRS}, got {self.pairs!r}")
        held_out_rng, compositional_rng, validation_rng = np.random.default_rng(self.split_seed).spawn(3)
        if self.pairs == "ding":
            self.corpus = ding.DingCorpus(self.n_held_out, held_out_rng, n_validation=self.n_validation)
            self.vocabulary, self.compositional = self.corpus.vocabulary, {}
            self.held_out = pairs_of(*self.corpus.held_out)
            self.validation = pairs_of(*self.corpus.validation)
            self.held_out_batch = self.held_out.batch
            return
        self.vocabulary = VOCABULARY
        self.held_out = as_pairs(distinct_sentences(held_out_rng, self.n_held_out))
        self.held_out_english = set(self.held_out.english)
        self.validation = as_pairs(distinct_sentences(validation_rng, self.n_validation, self.held_out_english))
        self.compositional = {kind: as_pairs([draw_sentence(compositional_rng, k)
                                              for _ in range(self.n_compositional)])
                              for k, kind in enumerate(COMPOSITIONAL_KINDS)}
        self.held_out_batch = self.held_out.batch

    def room(self):
        if self.pairs == "ding":
            return dict(vocab_size=len(self.vocabulary), max_len=self.corpus.max_tokens + 1)
        return dict(ROOM)

    def describe(self):
        if self.pairs == "ding":
            return (f"English to German, {len(self.corpus.training[0])} sentence pairs of Debian's Ding dictionary "
                    f"to train on, BPE of {len(self.vocabulary)} tokens shared, {self.n_validation} validation, "
                    f"{self.n_held_out} test")
        return (f"English to German, {len(VOCABULARY)} tokens shared, {self.n_validation} validation sentences; "
                f"to test, {self.n_held_out} sentences and {self.n_compositional} of each of "
                f"{len(COMPOSITIONAL_KINDS)} compositional kinds")

    def batch(self, batch_size, rng):
        if self.pairs == "ding":
            chosen = rng.integers(len(self.corpus.training[0]), size=batch_size)     # (B,) training pairs
            return pairs_of(*([part[i] for i in chosen] for part in self.corpus.training)).batch
        sentences = []
        while len(sentences) < batch_size:
            sentence = draw_sentence(rng)
            if german.english_text(german.english_words(sentence)) not in self.held_out_english:
                sentences.append(sentence)
        return as_pairs(sentences).batch

    loss = staticmethod(transformer_loss)

    def evaluate(self, model):
        """The validation exact match (greedy), which training stops on."""
        src, _, tgt_out = self.validation.batch
        return exact_match(greedy(model, src, max_len=tgt_out.shape[1]), tgt_out)

    def test(self, model):
        """The test exact match (greedy) and the number of test sentences (model_measures adds BLEU, chrF
        and the compositional sets)."""
        src, _, tgt_out = self.held_out_batch
        return exact_match(greedy(model, src, max_len=tgt_out.shape[1]), tgt_out), len(src)

    def model_measures(self, model, n_examples=5):
        """What the report and --json add, all on the test sets: BLEU, chrF, exact match (greedy), examples,
        and the compositional set's BLEU by kind."""
        held_out = scores(model, self.held_out, vocabulary=self.vocabulary)
        examples = [{"source": e, "reference": g, "output": o}
                    for e, g, o in zip(self.held_out.english, self.held_out.german, held_out["outputs"])]
        return {"bleu": held_out["bleu"], "chrf": held_out["chrf"], "exact_match": held_out["exact_match"],
                "examples": examples[:n_examples],
                "compositional_bleu": {kind: scores(model, pairs, vocabulary=self.vocabulary)["bleu"]
                                       for kind, pairs in self.compositional.items()}}

    def show(self, model, n=3):
        m = self.model_measures(model, n)
        lines = [f"test (greedy): BLEU {m['bleu']:.1f}, chrF {m['chrf']:.1f}, exact match {m['exact_match']:.1%}"]
        if m["compositional_bleu"]:
            lines.append("compositional test BLEU: " + ", ".join(
                f"{kind} {value:.1f}" for kind, value in m["compositional_bleu"].items()))
        lines.append("test sentences:")
        for example in m["examples"]:
            lines += [f"  source     {example['source']}", f"  reference  {example['reference']}",
                      f"  output     {example['output']}", ""]
        return lines

    def plot_example(self):
        """(the model's inputs, key labels, query labels) of one held-out sentence, for an attention map."""
        src, tgt_in, tgt_out = (ids[:1] for ids in self.held_out_batch)
        keep_src, keep_tgt = src[0] != PAD, tgt_out[0] != PAD
        def name(i):
            return SPECIAL_NAMES.get(int(i)) or self.vocabulary.token_name(i)
        return ((src[:, keep_src], tgt_in[:, keep_tgt]), [name(i) for i in src[0][keep_src]],
                [name(i) for i in tgt_out[0][keep_tgt]])
