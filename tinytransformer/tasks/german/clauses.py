"""Clauses and sentences in both languages: where the German verb goes.

    verb second   in a statement the finite verb comes second: after the subject, or after an adverb or a
                  question word that comes first (Heute sieht der Hund die Katze; Was sieht der Hund?)
    verb first    a yes/no question starts with it (Sieht der Hund die Katze?)
    verb last     after dass and weil (..., dass der Hund die Katze sieht)
    the bracket   the perfect (the English past) puts haben or sein second and the participle last: Der Mann
                  hat die Frau gesehen; sein for a verb of moving (Der Hund ist gelaufen)
    the middle    the receiver (dative) before the object (accusative), unless the object is a pronoun
                  (gibt es dem Kind); then nicht, then a place; kein instead of nicht for "not a"
    the present   German has one: the children eat and the children are eating are both Die Kinder essen
"""
from typing import NamedTuple

from .lexicon import ACCUSATIVE, ADVERBS, CONJUNCTIONS, DATIVE, FEMININE, NOMINATIVE, PRONOUNS
from .nouns import ADJECTIVES, PROFESSIONS, SEX, Noun
from .verbs import BE, PRETERITE, TRANSITIVE, VERB_TABLES, WITH
from .phrases import (NounPhrase, Place, english_noun_phrase, english_place, german_noun_phrase, german_place,
                      person)


class Clause(NamedTuple):
    """What a clause says: subject (a NounPhrase), verb (english lemma of a verb table, or "be"), object
    and receiver (NounPhrases or None, as the verb needs; for "be", object is what the subject is),
    negated, adverb (english or None, statements only), tense ("present" or "past": German's perfect),
    progressive (English "is eating"), question (None, "yes", "who", "what" or "where"), place (a Place
    or None), predicate (an english adjective after "be"), double_object (gives the child a book)."""
    subject: NounPhrase
    verb: str
    object: NounPhrase | None = None
    receiver: NounPhrase | None = None
    negated: bool = False
    adverb: str | None = None
    tense: str = "present"
    progressive: bool = False
    question: str | None = None
    place: Place | None = None
    predicate: str | None = None
    double_object: bool = False


def verb_of(lemma):
    """The Verb of an English lemma ("be", or of the verb table that holds it); ValueError if none does."""
    if lemma == "be":
        return BE
    for table in VERB_TABLES.values():
        if lemma in table:
            return table[lemma]
    raise ValueError(f"german: no verb {lemma!r}")


def english_verb(clause, inverted):
    """The English verb's words, the first being the one a question puts before the subject: ["sees"],
    ["does", "not", "see"], ["is", "eating"], ["did", "see"] (inverted: a question needs "do")."""
    verb, p = verb_of(clause.verb), person(clause.subject)
    be = ("am", "are", "is", "are")[p] if clause.tense == "present" else ("was", "were", "was", "were")[p]
    nicht = ["not"] if clause.negated else []
    if clause.verb == "be":
        return [be] + nicht
    if clause.progressive:
        return [be] + nicht + [verb.english[3]]
    if clause.negated or inverted:
        do = ("does" if p == 2 else "do") if clause.tense == "present" else "did"
        return [do] + nicht + [verb.english[0]]
    if clause.tense == "past":
        return [verb.english[2]]
    return [verb.english[1] if p == 2 else verb.english[0]]


def english_rest(clause):
    """The English words after the verb: what it is, the object, the receiver, the place; a question
    leaves out what it asks for (the object for what, the place for where)."""
    obj = None if clause.question == "what" else clause.object
    place = None if clause.question == "where" else clause.place
    words = [clause.predicate] if clause.predicate else []
    if clause.verb == "be" and obj is not None:
        words += english_noun_phrase(obj)
    elif clause.verb in WITH and obj is not None:
        words += ["with"] + english_noun_phrase(obj, ACCUSATIVE)
    elif clause.receiver is not None and clause.double_object:
        words += english_noun_phrase(clause.receiver, ACCUSATIVE)
        words += english_noun_phrase(obj, ACCUSATIVE) if obj is not None else []
    else:
        words += english_noun_phrase(obj, ACCUSATIVE) if obj is not None else []
        words += ["to"] + english_noun_phrase(clause.receiver, ACCUSATIVE) if clause.receiver is not None else []
    return words + (english_place(place) if place else [])


def english_clause(clause):
    """English words, subject-verb-object ("the man does not give the ball to the child"); a question puts
    the first verb word before the subject ("did the man see the woman")."""
    inverted = clause.question in ("yes", "what", "where")
    verb, subject = english_verb(clause, inverted), english_noun_phrase(clause.subject)
    if not inverted:
        return ([clause.adverb] if clause.adverb else []) + subject + verb + english_rest(clause)
    asked = [] if clause.question == "yes" else [clause.question]
    return asked + verb[:1] + subject + verb[1:] + english_rest(clause)


def german_verb(clause):
    """(the finite verb, what goes last): ("sieht", []), ("hat", ["gesehen"]), ("ist", ["gelaufen"]),
    ("war", []): the English past is the perfect, but sein and haben say war and hatte."""
    verb, p = verb_of(clause.verb), person(clause.subject)
    if clause.tense == "present":
        return verb.german[p], []
    if clause.verb in PRETERITE:
        return PRETERITE[clause.verb][p], []
    auxiliary = BE if verb.auxiliary == "sein" else TRANSITIVE["have"]
    return auxiliary.german[p], [verb.german[4]]


def german_predicate(clause):
    """What the subject is, after sein: a noun phrase (ein Buch, kein Buch, mein Haus); a profession of one
    person of known sex: with no article for "a" (Lehrer, Lehrerin, keine Lehrerin), else as a noun phrase of
    that sex (meine Lehrerin, ein guter Arzt, keine gute Ärztin)."""
    phrase, sex = clause.object, SEX.get(clause.subject.noun)
    if phrase.noun not in PROFESSIONS or sex is None or phrase.plural or clause.subject.plural:
        return german_noun_phrase(phrase, NOMINATIVE)
    female = sex == FEMININE
    if phrase.article == "a" and phrase.adjective is None:
        return (["keine" if female else "kein"] if phrase.negated else []) + [PROFESSIONS[phrase.noun][female]]
    noun = Noun(FEMININE, PROFESSIONS[phrase.noun][True], None, None, None) if female else None
    return german_noun_phrase(phrase, NOMINATIVE, noun)


def german_middle(clause):
    """The German between the finite verb and the end: objects, nicht (or kein in an object), a place."""
    obj = None if clause.question == "what" else clause.object
    place = None if clause.question == "where" else clause.place
    kein = obj is not None and obj.negated
    nicht = ["nicht"] if clause.negated and not kein else []
    if clause.verb == "be":
        what = german_predicate(clause._replace(object=obj)) if obj is not None else []
        return nicht + what + ([ADJECTIVES[clause.predicate].german] if clause.predicate else []) + \
            (german_place(place) if place else [])
    if clause.verb in WITH:
        return nicht + (["mit"] + german_noun_phrase(obj, DATIVE) if obj is not None else []) + \
            (german_place(place) if place else [])
    middle = []
    if obj is not None:
        middle = german_noun_phrase(obj, DATIVE if clause.verb in VERB_TABLES["dative"] else ACCUSATIVE)
    if clause.receiver is not None:
        receiver = german_noun_phrase(clause.receiver, DATIVE)
        pronoun = obj is not None and obj.noun in PRONOUNS
        middle = middle + receiver if pronoun else receiver + middle      # gibt es dem Kind, gibt dem Kind das Buch
    return middle + nicht + (german_place(place) if place else [])


def german_clause(clause, subordinate=False):
    """German pieces: a statement puts the finite verb second, a yes/no question first, a subordinate
    clause last; the participle of the perfect goes last, before the verb of a subordinate clause."""
    finite, end = german_verb(clause)
    subject, middle = german_noun_phrase(clause.subject, NOMINATIVE), german_middle(clause)
    if subordinate:
        return subject + middle + end + [finite]
    if clause.question == "yes":
        return [finite] + subject + middle + end
    if clause.question in ("what", "where"):
        return [{"what": "was", "where": "wo"}[clause.question], finite] + subject + middle + end
    if clause.adverb:
        return [ADVERBS[clause.adverb], finite] + subject + middle + end      # verb second: after the adverb
    return subject + [finite] + middle + end


class Sentence(NamedTuple):
    """A clause alone; or with a second clause after "that" (main: someone says, knows, believes, thinks
    or hopes) or "because" (main: any clause)."""
    main: Clause
    conjunction: str | None = None
    second: Clause | None = None


def english_words(sentence):
    """The sentence in English, as words: the main clause, then the conjunction and second clause if any;
    a question ends with "?"."""
    words = english_clause(sentence.main)
    if sentence.conjunction:
        words += [sentence.conjunction] + english_clause(sentence.second)
    return words + (["?"] if sentence.main.question else [])


def german_pieces(sentence):
    """The sentence in German, as pieces: after dass and weil, a comma and the verb last; a question ends
    with "?"."""
    pieces = german_clause(sentence.main)
    if sentence.conjunction:     # a comma before dass and weil, and the verb last after them
        pieces += [",", CONJUNCTIONS[sentence.conjunction]] + german_clause(sentence.second, subordinate=True)
    return pieces + (["?"] if sentence.main.question else [])


def english_text(words):
    """["the", "dog", "sleeps"] -> "The dog sleeps."; ["does", "the", "dog", "sleep", "?"] -> "Does the dog sleep?" """
    text = " ".join(words).replace(" ?", "?")
    return text[:1].upper() + text[1:] + ("" if text.endswith("?") else ".")


def german_text(pieces):
    """German pieces -> the sentence: ["der", "Hund", "hat", "zwei+", "und+", "vierzig", "Bälle"] ->
    "Der Hund hat zweiundvierzig Bälle." A piece ending in + is glued to the next; a comma and a question
    mark to the word before. (A model's output may end on a + piece: the + is dropped.)"""
    text = " ".join(pieces).replace("+ ", "").replace(" ,", ",").replace(" ?", "?").rstrip("+")
    return text[:1].upper() + text[1:] + ("" if text.endswith("?") else ".")
