"""Reading an English sentence back into a description, by generating: analysis by synthesis.

The grammar only writes; to read a sentence, parse enumerates the descriptions made of the sentence's own
words (its nouns, verbs, adjectives, articles, numbers), writes each one's English, and keeps the one whose
English is the sentence. Noun phrases are found first, as the spans of the sentence their English fills,
so a clause is tried only with phrases that are there. A sentence the grammar cannot say parses to None.

    german_of(["the", "cat", "sat", "on", "the", "mat"])  ->  ["die", "Katze", "hat", "auf", "der", "Matte", "gesessen"]
"""
import itertools

from .clauses import Clause, Sentence, english_clause, german_pieces
from .lexicon import ACCUSATIVE, ADVERBS, DATIVE, NOMINATIVE, POSSESSIVES, PRONOUNS, QUESTION_WORDS
from .nouns import ADJECTIVES, NOUNS, PREPOSITIONS
from .numbers import NUMBERS, english_number
from .phrases import DEMONSTRATIVES, NounPhrase, Place, english_noun_phrase
from .verbs import VERB_TABLES

BE_WORDS = {"am", "is", "are", "was", "were"}


def occurs(part, words):
    """True if part (a list of words) is a run of consecutive words of words (lower case)."""
    part = [word.lower() for word in part]
    return any(words[i:i + len(part)] == part for i in range(len(words) - len(part) + 1))


def noun_phrases(words):
    """Every NounPhrase made of the words' own nouns, articles, numbers and adjectives (and pronouns)."""
    present = set(words)
    phrases = [NounPhrase(p) for p in PRONOUNS if {p.lower(), PRONOUNS[p][0]} & present]
    phrases += [NounPhrase(d) for d in DEMONSTRATIVES if d in present]
    articles = ["the", "a", None] + [p for p in POSSESSIVES if p in present]
    numbers = [None] + [n for n in NUMBERS if english_number(n) in present]
    adjectives = [None] + [a for a in ADJECTIVES if a in present]
    for noun, entry in NOUNS.items():
        for plural in [False] * (noun in present) + [True] * (entry.english_plural in present):
            for article, number, adjective, negated in itertools.product(articles, numbers, adjectives,
                                                                         (False, True)):
                if (number is not None and (not plural or article is not None)) or \
                        (negated and article not in ("a", None)) or (article == "a" and plural):
                    continue
                phrases.append(NounPhrase(noun, plural, article, number, adjective, negated))
    return phrases


def candidates(words):
    """{case: the noun phrases whose English in that case is in words}, and the Places that are."""
    found = {case: [] for case in (NOMINATIVE, ACCUSATIVE, DATIVE)}
    for phrase in noun_phrases(words):
        for case in found:
            if occurs(english_noun_phrase(phrase, case), words):
                found[case].append(phrase)
    places = [Place(preposition, phrase) for preposition in PREPOSITIONS if preposition != "with"
              for phrase in found[DATIVE] if occurs(preposition.split() + english_noun_phrase(phrase, DATIVE), words)]
    return found, places


def clauses_of(words):
    """The Clauses whose English is words (a list of lower-case words), each once."""
    present, (found, places) = set(words), candidates(words)
    verbs = [("be", None)] if BE_WORDS & present else []
    verbs += [(lemma, frame) for frame, table in VERB_TABLES.items() for lemma, verb in table.items()
              if set(verb.english) & present]
    questions = [None, "yes"] + [q for q in QUESTION_WORDS if q in present]
    adverbs = [None] + [a for a in ADVERBS if a in present]
    flags = list(itertools.product(("present", "past"), (False, True) if any(w.endswith("ing") for w in words)
                                   else (False,), (False, True) if "not" in present else (False,)))
    adjectives = [a for a in ADJECTIVES if a in present]
    matches = []
    for (lemma, frame), question, adverb in itertools.product(verbs, questions, adverbs):
        subjects = [NounPhrase("who")] if question == "who" else [p for p in found[NOMINATIVE] if p.noun != "who"]
        objects = [NounPhrase("what")] if question == "what" else [p for p in found[ACCUSATIVE] if p.noun != "what"]
        wheres = [None] if question == "where" else [None] + places
        if frame is None:              # be: an adjective, a noun phrase, or a place
            rests = [dict(predicate=a) for a in adjectives] + [dict(object=p) for p in found[NOMINATIVE]] + \
                [dict(place=p) for p in wheres if p is not None] + [dict()] * (question == "where")
        elif frame == "intransitive":
            rests = [dict(place=p) for p in wheres]
        elif frame == "ditransitive":
            rests = [dict(object=o, receiver=r, double_object=d) for o in objects for r in found[ACCUSATIVE]
                     for d in (False, True)]
        elif frame == "transitive":
            rests = [dict(object=o, place=p) for o in objects for p in wheres]
        elif frame == "say":
            rests = [dict()]
        elif frame == "with":          # plays with the dog, or plays (in the garden)
            rests = [dict(object=o) for o in objects] + [dict(place=p) for p in wheres]
        else:
            rests = [dict(object=o) for o in objects]
        for subject, rest, (tense, progressive, negated) in itertools.product(subjects, rests, flags):
            clause = Clause(subject, lemma, negated=negated, adverb=adverb, tense=tense, progressive=progressive,
                            question=question, **rest)
            if not kein_as_drawn(clause, frame):
                continue
            if [w.lower() for w in english_clause(clause)] == words and clause not in matches:
                matches.append(clause)
    return matches


def kein_as_drawn(clause, frame):
    """True if the clause's object says kein exactly when the grammar's draws would: a negated clause with an
    indefinite object ("not a", "not any"), the object of a verb but "with"; no receiver is negated."""
    obj = clause.object
    if clause.receiver is not None and clause.receiver.negated:
        return False
    if obj is None or obj.noun not in NOUNS:
        return True
    kein = clause.negated and frame != "with" and obj.article in ("a", None)
    return obj.negated == kein


def parse(words):
    """The Sentence whose English is words (lower case, no final punctuation, "forty two" as two words), or
    None if the grammar cannot say it."""
    joined = join_numbers(words)
    for clause in clauses_of(joined):
        return Sentence(clause)
    for k, word in enumerate(joined):
        if word in ("that", "because") and k > 0:
            mains = [c for c in clauses_of(joined[:k]) if c.question is None]
            seconds = [c for c in clauses_of(joined[k + 1:]) if c.question is None and c.adverb is None]
            if mains and seconds:
                return Sentence(mains[0], word, seconds[0])
    return None


def join_numbers(words):
    """["forty", "two"] -> ["forty-two"]: the English of a number as the grammar writes it."""
    joined = []
    for word in words:
        if joined and joined[-1] in TENS and word in UNITS:
            joined[-1] += "-" + word
        else:
            joined.append(word)
    return joined


TENS = {english_number(n) for n in range(20, 100, 10)}
UNITS = {english_number(n) for n in range(2, 10)} | {"one"}


def german_of(words):
    """The grammar's own German pieces for an English sentence (words as parse takes them), or None."""
    sentence = parse(words)
    return None if sentence is None else german_pieces(sentence)
