"""Reading an English sentence back into a description, by generating: analysis by synthesis.

The grammar only writes; to read a sentence, parse enumerates the descriptions made of the sentence's own
words (its nouns, verbs, adjectives, articles, numbers), writes each one's English, and keeps the one whose
English is the sentence. Noun phrases are found first, as the spans of the sentence their English fills,
so a clause is tried only with phrases that are there, its subject where a clause can start and what follows
its verb where the sentence ends. A sentence the grammar cannot say parses to None; reading(words) also says
why (with a hint where one is found), and a sentence whose words allow more than TRIES readings is refused
unread: a crafted line costs a bounded time.

    german_of(["the", "cat", "sat", "on", "the", "mat"])  ->  ["die", "Katze", "hat", "auf", "der", "Matte", "gesessen"]
"""
import functools
import itertools

from .clauses import Clause, Sentence, english_clause, english_rest, german_pieces
from .lexicon import ACCUSATIVE, ADVERBS, DATIVE, FEMININE, NOMINATIVE, POSSESSIVES, PRONOUNS, QUESTION_WORDS
from .nouns import ADJECTIVES, NOUNS, PREPOSITIONS, PROFESSIONS, SEX
from .numbers import NUMBERS, english_number
from .phrases import DEMONSTRATIVES, NounPhrase, Place, english_noun_phrase, person
from .verbs import VERB_TABLES

BE_WORDS = {"am", "is", "are", "was", "were"}
# words the grammar knows only in some phrases (translate --words lists them apart): each with how it is used,
# and a test that words (a list) use it so
ONLY_IN = {"one": ("in twenty-one to ninety-one; one thing alone is 'a': a dog",
                   lambda words, k: k > 0 and words[k - 1] in TENS),
           "next": ("in 'next to': next to the bed", lambda words, k: words[k + 1:k + 2] == ["to"]),
           "to": ("in 'next to', and after give, show, bring, send: gives the ball to the child",
                  lambda words, k: words[k - 1:k] == ["next"] or bool(set(words) & GIVING)),
           "with": ("after play and talk: plays with the dog", lambda words, k: bool(set(words) & PLAYING))}
TRIES = 20_000      # noun phrases and clauses tried at most for one sentence (a drawn one needs far fewer: a test)


class TooManyReadings(ValueError):
    """A sentence whose words could be read in more ways than the grammar tries (TRIES)."""


class Budget:
    """What is left of TRIES while one sentence is read: spend(n) before trying n more readings."""

    def __init__(self, tries=TRIES):
        self.left = tries

    def spend(self, n):
        self.left -= n
        if self.left < 0:
            raise TooManyReadings(f"its words could be read in more ways than the {TRIES:,} the grammar tries")


def occurs(part, words):
    """True if part (a list of words) is a run of consecutive words of words (lower case)."""
    part = [word.lower() for word in part]
    return any(words[i:i + len(part)] == part for i in range(len(words) - len(part) + 1))


def noun_phrases(words, budget):
    """Every NounPhrase made of the words' own nouns, articles, numbers and adjectives (and pronouns). Its
    English is [article] [number] [adjective] noun, so only the words one or two before the noun are tried as
    its number and adjective."""
    present = set(words)
    phrases = [NounPhrase(p) for p in PRONOUNS if {p.lower(), PRONOUNS[p][0]} & present]
    phrases += [NounPhrase(d) for d in DEMONSTRATIVES if d in present]
    articles = ["the", "a", None] + [p for p in POSSESSIVES if p in present]
    for noun, entry in NOUNS.items():
        for plural in [False] * (noun in present) + [True] * (entry.english_plural in present):
            before = words_before(entry.english_plural if plural else noun, words)
            numbers = [None] + [n for n in NUMBERS if english_number(n) in before]
            adjectives = [None] + [a for a in ADJECTIVES if a in before]
            budget.spend(len(articles) * len(numbers) * len(adjectives))
            for article, number, adjective, negated in itertools.product(articles, numbers, adjectives,
                                                                         (False, True)):
                if (number is not None and (not plural or article is not None)) or \
                        (negated and article not in ("a", None)) or (article == "a" and plural) or \
                        (article is None and not plural and entry.plural is not None):   # "at school": no
                    continue
                phrases.append(NounPhrase(noun, plural, article, number, adjective, negated))
    return phrases


def words_before(word, words):
    """The words one or two places before each place of word in words: where its adjective and number are."""
    return {words[k] for i, w in enumerate(words) if w == word for k in (i - 2, i - 1) if k >= 0}


def candidates(words, budget):
    """{case: the noun phrases whose English in that case is in words}, and the Places that are."""
    found = {case: [] for case in (NOMINATIVE, ACCUSATIVE, DATIVE)}
    for phrase in noun_phrases(words, budget):
        for case in found:
            if occurs(english_noun_phrase(phrase, case), words):
                found[case].append(phrase)
    places = [Place(preposition, phrase) for preposition in PREPOSITIONS if preposition != "with"
              for phrase in found[DATIVE] if occurs(preposition.split() + english_noun_phrase(phrase, DATIVE), words)]
    return found, places


def clauses_of(words, budget):
    """The Clauses whose English is words (a list of lower-case words), each once; spends budget first."""
    present, (found, places) = set(words), candidates(words, budget)
    verbs = [("be", None)] if BE_WORDS & present else []
    verbs += [(lemma, frame) for frame, table in VERB_TABLES.items() for lemma, verb in table.items()
              if set(verb.english) & present]
    questions = [None, "yes"] + [q for q in QUESTION_WORDS if q in present]
    adverbs = [None] + [a for a in ADVERBS if a in present]
    flags = list(itertools.product(("present", "past"), (False, True) if any(w.endswith("ing") for w in words)
                                   else (False,), (False, True) if "not" in present else (False,)))
    adjectives = [a for a in ADJECTIVES if a in present]
    # a subject comes first, or after an adverb, a question's verb, or a question word and its verb
    first = [p for p in found[NOMINATIVE] if any(starts_at(english_noun_phrase(p), words, k) for k in range(3))]
    shapes = []                         # (verb, frame, question, adverb, subjects, rests) to try
    for (lemma, frame), question, adverb in itertools.product(verbs, questions, adverbs):
        subjects = [NounPhrase("who")] if question == "who" else [p for p in first if p.noun != "who"]
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
        budget.spend(len(rests))
        ending = [rest for rest in rests           # a clause's English ends with what follows the verb
                  if ends_with(english_rest(Clause(NounPhrase("it"), lemma, question=question, **rest)), words)]
        shapes.append((lemma, frame, question, adverb, subjects, ending))
    budget.spend(sum(len(subjects) * len(rests) for *_, subjects, rests in shapes) * len(flags))
    matches = []
    for lemma, frame, question, adverb, subjects, rests in shapes:
        for subject, rest, (tense, progressive, negated) in itertools.product(subjects, rests, flags):
            clause = Clause(subject, lemma, negated=negated, adverb=adverb, tense=tense, progressive=progressive,
                            question=question, **rest)
            if not kein_as_drawn(clause, frame) or not profession_sayable(clause):
                continue
            if [w.lower() for w in english_clause(clause)] == words and clause not in matches:
                matches.append(clause)
    return matches


def starts_at(part, words, k):
    """True if part (a list of words) is words[k:k + len(part)], lower case."""
    return [word.lower() for word in part] == words[k:k + len(part)]


def ends_with(part, words):
    """True if words end with part (a list of words), lower case."""
    return len(part) <= len(words) and starts_at(part, words, len(words) - len(part))


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


def profession_sayable(clause):
    """False for "be" and a profession the grammar's German would get wrong: one person whose sex it does not
    know (I am a teacher: Lehrer or Lehrerin?), or women (it has no word Lehrerinnen)."""
    if clause.verb != "be" or clause.object is None or clause.object.noun not in PROFESSIONS:
        return True
    if clause.subject.plural or person(clause.subject) == 3:
        return SEX.get(clause.subject.noun) != FEMININE
    return clause.subject.noun in SEX


def parse(words):
    """The Sentence whose English is words (lower case, no final punctuation, "forty two" as two words), or
    None if the grammar cannot say it (or cannot try all its readings: TRIES)."""
    return reading(tuple(words))[0]


@functools.lru_cache(maxsize=4096)          # a class's sentences repeat; a sentence costs up to TRIES readings
def reading(words):
    """(the Sentence whose English is words (a tuple, as parse takes them), None), or (None, why the grammar
    cannot say it)."""
    joined, budget = join_numbers(words), Budget()
    try:
        for clause in clauses_of(joined, budget):
            return Sentence(clause), None
        for k, word in enumerate(joined):
            if word in ("that", "because") and k > 0:
                mains = [c for c in clauses_of(joined[:k], budget) if c.question is None]
                seconds = [c for c in clauses_of(joined[k + 1:], budget) if c.question is None and c.adverb is None]
                if mains and seconds:
                    return Sentence(mains[0], word, seconds[0]), None
    except TooManyReadings as error:
        return None, str(error)
    return None, "outside the grammar the model was taught" + hint(list(words))


def hint(words):
    """What may have put words outside the grammar, as ' (...)', or '': a word of ONLY_IN used otherwise, or an
    adverb (the only one) later than the grammar says it ('the boy is sleeping now': 'now the boy is sleeping')."""
    for k, word in enumerate(words):
        if word in ONLY_IN and not ONLY_IN[word][1](words, k):
            return f" ('{word}' only {ONLY_IN[word][0]})"
    adverbs = [k for k, word in enumerate(words) if word in ADVERBS]
    if len(adverbs) == 1 and adverbs[0] > 0:                # one more reading at most: the adverb put first
        k = adverbs[0]
        moved = [words[k]] + words[:k] + words[k + 1:]
        if reading(tuple(moved))[0] is not None:
            return f" (it says '{words[k]}' first: '{' '.join(moved)}')"
    return ""


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
GIVING = {form for verb in VERB_TABLES["ditransitive"].values() for form in verb.english}
PLAYING = {form for verb in VERB_TABLES["with"].values() for form in verb.english}
UNITS = {english_number(n) for n in range(2, 10)} | {"one"}


def german_of(words):
    """The grammar's own German pieces for an English sentence (words as parse takes them), or None."""
    sentence = parse(words)
    return None if sentence is None else german_pieces(sentence)
