"""Real sentences for the translate task: the Ding dictionary's example sentences, where Debian installs them.

Debian's trans-de-en package holds the Ding German-English dictionary (Frank
Richter, TU Chemnitz; GPL-2+), and among its entries some thousands of short
sentences with their translation. They are read where the package installs
them (DING_PATH), never shipped with tinytransformer or copied. A line reads

    Der Hund schläft. :: The dog sleeps.          (a line of that form, made up here)

(German :: English; " | " separates parallel entries on both sides). Kept: the
entries whose two sides are each one plain sentence, a capital first and a
. ! or ? last, of 3 to max_words words, with no alternatives (/ or ;) and no
notes ({f}, [coll.], (...)) in them. Real sentences have far more words than a
classroom model can learn in minutes, so they are read as byte-level BPE
tokens (tokenizer/), one vocabulary for both languages, learnt from the
training pairs only.
"""
import os
import re

import numpy as np

from ..tokenizer import BPE
from ..vocabulary import EOS, N_SPECIAL

DING_PATH = "/usr/share/trans/de-en"
SENTENCE = re.compile(r"[A-ZÄÖÜ][^/;{}\[\]()]*[.!?]")      # one plain sentence: no alternatives, no notes


def read_pairs(path=DING_PATH, max_words=10):
    """[(english, german)] of the dictionary's sentence entries, in the file's order, each pair once."""
    if not os.path.isfile(path):
        raise ValueError(f"translate: --pairs ding reads Debian's trans-de-en dictionary at {path}, which is "
                         "not installed here (apt-get install trans-de-en), or use the generated pairs")
    pairs = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or " :: " not in line:
                continue
            german_side, english_side = line.rstrip("\n").split(" :: ", 1)
            for german, english in zip(german_side.split(" | "), english_side.split(" | ")):
                german, english = german.strip(), english.strip()
                if SENTENCE.fullmatch(german) and SENTENCE.fullmatch(english) and \
                        3 <= len(german.split()) <= max_words and len(english.split()) <= max_words:
                    pairs.setdefault((english, german), None)
    return list(pairs)


class BPEVocabulary:
    """Byte-level BPE learnt from both languages' training sentences; model ids are the tokenizer's + N_SPECIAL."""

    def __init__(self, texts, vocab_size):
        self.tokenizer = BPE.train("\n".join(texts), vocab_size - N_SPECIAL)

    def __len__(self):
        return N_SPECIAL + self.tokenizer.vocab_size

    def encode(self, text):
        return np.array(self.tokenizer.encode(text), dtype=np.int64) + N_SPECIAL

    def encode_english(self, text):
        """An English sentence -> ids (T,); any text has ids (bytes), so only an empty one is refused."""
        if not text.strip():
            raise ValueError("translate: the sentence is empty; give an English sentence")
        return self.encode(text.strip())

    def german_text(self, ids):
        """Decoded ids, up to EOS, -> the German text."""
        ids = [int(i) for i in ids]
        ids = ids[:ids.index(EOS)] if EOS in ids else ids
        return self.tokenizer.decode([i - N_SPECIAL for i in ids if i >= N_SPECIAL]).strip()

    def token_name(self, i):
        """The text of ordinary token i (an id from N_SPECIAL on)."""
        return self.tokenizer.token_text(int(i) - N_SPECIAL)


class DingCorpus:
    """read_pairs' sentences: n_held_out drawn once from rng for the test, n_validation others for validation,
    the rest to train on (and to learn the BPE vocabulary from), all as BPE ids."""

    def __init__(self, n_held_out, rng, vocab_size=1000, max_words=10, n_validation=0):
        pairs = read_pairs(max_words=max_words)
        if not 1 <= n_held_out or not 0 <= n_validation or n_held_out + n_validation >= len(pairs):
            raise ValueError(f"translate: n_held_out + n_validation must be from 1 to {len(pairs) - 1} with --pairs "
                             f"ding ({len(pairs)} sentence pairs), got {n_held_out} + {n_validation}")
        chosen = rng.choice(len(pairs), n_held_out + n_validation, replace=False).tolist()
        held_out, validation = set(chosen[:n_held_out]), set(chosen[n_held_out:])
        train = [pair for i, pair in enumerate(pairs) if i not in held_out and i not in validation]
        self.vocabulary = BPEVocabulary([text for pair in train for text in pair], vocab_size)
        self.held_out = self.encoded([pairs[i] for i in sorted(held_out)])
        self.validation = self.encoded([pairs[i] for i in sorted(validation)])
        self.training = self.encoded(train)
        self.max_tokens = max(len(ids) for part in (self.held_out, self.validation, self.training)
                              for ids in part[2] + part[3])

    def encoded(self, pairs):
        """(english texts, german texts, english ids, german ids) of pairs."""
        english, german = [e for e, _ in pairs], [g for _, g in pairs]
        return (english, german, [self.vocabulary.encode(e) for e in english],
                [self.vocabulary.encode(g) for g in german])
