"""Descriptions drawn at random, from an np.random.Generator (same generator state, same sentence), that make
sense by construction: a verb's subject and object are of the kinds it takes (lexicon.SUBJECTS, OBJECTS),
an adjective describes only nouns of its kinds (no colour describes a person), a place fits its preposition.

Training never draws what the compositional test asks for (COMPOSITIONAL_KINDS): an adjective with a noun
(UNSEEN_PAIRS), a number (UNSEEN_NUMBERS), nicht inside a dass/weil clause, the perfect of UNSEEN_BRACKET
in a main clause (training shows their participles only at the end of a dass/weil clause), and a where
question in the past (training asks where in the present only).
"""
from .clauses import Clause, Sentence
from .lexicon import PRONOUNS
from .nouns import ADJECTIVES, NOUNS, PEOPLE, PLACES, PROFESSIONS, SEX, adjectives_for
from .verbs import (DATIVE_OBJECT, DITRANSITIVE, INTRANSITIVE, OBJECTS, PLACED, SAYING, STATIVE, SUBJECTS,
                    TRANSITIVE, WITH)
from .numbers import NUMBERS
from .phrases import NounPhrase, Place, person

UNSEEN_PAIRS = (("young", "cat"), ("old", "book"), ("big", "bird"), ("black", "car"), ("new", "bag"))
UNSEEN_NUMBERS = (37, 58, 64, 83, 91)
UNSEEN_BRACKET = ("wash", "swim")
COMPOSITIONAL_KINDS = ("unseen adjective-noun pair", "unseen number", "negation after dass/weil",
                       "unseen perfect in a main clause", "unseen where question in the past")
FRAMES = {"intransitive": INTRANSITIVE, "transitive": TRANSITIVE, "ditransitive": DITRANSITIVE, "with": WITH,
          "dative": DATIVE_OBJECT}
FRAME_SHARES = {"intransitive": 0.22, "transitive": 0.36, "ditransitive": 0.08, "with": 0.06, "dative": 0.03,
                "be": 0.25}
SUBJECT_PRONOUNS = ("I", "you", "he", "she", "we", "they")
POSSESSIVE_WORDS = ("my", "your", "his", "her", "our", "their")
NO_POSSESSIVE = ("man", "woman", "girl", "boy", "doctor", "student")      # not "her man", "their girl"


def pick(rng, options):
    """One of options (a sequence), uniformly."""
    return options[int(rng.integers(len(options)))]


def draw_number(rng):
    """A number training may see: 2..99 but UNSEEN_NUMBERS."""
    while True:
        number = int(pick(rng, NUMBERS))
        if number not in UNSEEN_NUMBERS:
            return number


def nouns_of_kinds(kinds):
    """The nouns of any of kinds (letters of lexicon's kinds)."""
    return tuple(english for english, noun in NOUNS.items() if set(noun.kinds) & set(kinds))


def draw_noun_phrase(rng, nouns, number_allowed=True, article_allowed=True):
    """A NounPhrase of one of nouns: singular with the, a or a possessive (a mass noun: no article for a),
    or plural with the, a possessive, no article or a number; an adjective of its kinds a quarter of the time,
    never one of UNSEEN_PAIRS."""
    noun = pick(rng, nouns)
    countable = NOUNS[noun].plural is not None
    plural, number = countable and rng.random() < 0.3, None
    roll = rng.random()
    article = "the" if roll < 0.5 else pick(rng, POSSESSIVE_WORDS) if roll < 0.65 else "a"
    if article == "a" and (plural or not countable):
        article = None
        if plural and number_allowed and rng.random() < 0.4:
            number = draw_number(rng)
    if article in POSSESSIVE_WORDS and noun in NO_POSSESSIVE:
        article = "the"
    if not article_allowed:                            # this is a book, that is my ball
        plural, number, article = False, None, article if article in POSSESSIVE_WORDS or not countable else "a"
    adjective = None
    if rng.random() < 0.25:
        adjective = pick(rng, adjectives_for(noun))
        adjective = None if (adjective, noun) in UNSEEN_PAIRS else adjective
    return NounPhrase(noun, plural, article, number, adjective)


def draw_subject(rng, kinds, numbers=True):
    """A subject of kinds (P: a person, also I, you, he, she, we, they; A: an animal, also it)."""
    if rng.random() < 0.35:
        pronouns = (SUBJECT_PRONOUNS if "P" in kinds else ()) + (("it",) if "A" in kinds else ())
        return NounPhrase(pick(rng, pronouns))
    return draw_noun_phrase(rng, nouns_of_kinds(kinds), numbers)


def draw_object(rng, verb, subject, numbers):
    """The object of verb: a noun phrase of its kinds, or (a fifth of the time, for a verb of people) a
    pronoun that is not the subject's own (no "I see me")."""
    kinds = OBJECTS[verb]
    if "P" in kinds and rng.random() < 0.2:
        pronouns = [p for p in PRONOUNS if p != subject.noun and (p != "it" or "T" in kinds)]
        return NounPhrase(pick(rng, pronouns))
    return draw_noun_phrase(rng, nouns_of_kinds(kinds), numbers)


def draw_place(rng, prepositions):
    """A Place: one of prepositions and a noun it fits (on the table, in the garden)."""
    preposition = pick(rng, prepositions)
    return Place(preposition, draw_noun_phrase(rng, PLACES[preposition], number_allowed=False))


def draw_be(rng, subject):
    """A clause of "be": the subject is an adjective of its kind (half the time), a profession (a person of
    known sex), somewhere, or "this/that is" something instead."""
    roll = rng.random()
    if roll < 0.5:
        kinds = {"it": "A"}.get(subject.noun, "P") if subject.noun in PRONOUNS else NOUNS[subject.noun].kinds
        return Clause(subject, "be", predicate=pick(rng, [a for a, entry in ADJECTIVES.items()
                                                           if set(entry.kinds) & set(kinds)]))
    if roll < 0.65 and subject.noun in SEX and not subject.plural:
        return Clause(subject, "be", object=NounPhrase(pick(rng, list(PROFESSIONS)), article="a"))
    if roll < 0.8 or subject.noun == "it":
        thing = draw_noun_phrase(rng, nouns_of_kinds("ATFDR"), number_allowed=False, article_allowed=False)
        return Clause(NounPhrase(pick(rng, ("this", "that"))), "be", object=thing)
    if subject.noun in PRONOUNS or set(NOUNS[subject.noun].kinds) & set("PAT"):
        return Clause(subject, "be", place=draw_place(rng, list(PLACES)))
    return Clause(subject, "be", predicate=pick(rng, adjectives_for(subject.noun)))


def draw_clause(rng, subordinate=False, numbers=True, may_negate=True, past_allowed=True):
    """A Clause of one of the frames (FRAME_SHARES), present or past, progressive a third of the present
    time (if the verb is not stative), negated a quarter of the time (if may_negate), with a place for a
    verb that may have one; an adverb first a sixth of the time (statements). At most one number in it."""
    frame = pick(rng, [f for f, share in FRAME_SHARES.items() for _ in range(int(share * 100))])
    tense = "past" if past_allowed and rng.random() < 0.45 else "present"
    negated = may_negate and rng.random() < 0.25
    if frame == "be":
        clause = draw_be(rng, draw_subject(rng, "PATFDRiouaO", numbers))
        if negated and clause.object is not None and clause.object.article in ("a", None):
            clause = clause._replace(object=clause.object._replace(negated=True))     # ist kein Buch
    else:
        verb = pick(rng, list(FRAMES[frame]))
        subject = draw_subject(rng, SUBJECTS.get(verb, "PA"), numbers)
        numbers = numbers and subject.number is None
        obj = receiver = place = None
        if frame == "with" and rng.random() < 0.35:
            frame = "intransitive"                         # the children play (in the garden)
        if frame != "intransitive":
            obj = draw_object(rng, verb, subject, numbers and not negated)
            if negated and frame != "with" and obj.article in ("a", None) and obj.noun in NOUNS:
                obj = obj._replace(negated=True)           # not a ball, not balls -> kein Ball, keine Bälle
            numbers = numbers and obj.number is None
        if frame == "ditransitive":
            receiver = draw_object(rng, "help", subject, numbers)      # a person, as helfen's object is
        if verb in PLACED and (frame == "intransitive" or frame == "transitive" and rng.random() < 0.3) \
                and rng.random() < 0.5:
            place = draw_place(rng, PLACED[verb])
        clause = Clause(subject, verb, obj, receiver, place=place,
                        double_object=receiver is not None and rng.random() < 0.5)
    if clause.verb in STATIVE or tense == "past" or rng.random() < 2 / 3:
        clause = clause._replace(tense=tense)
    else:
        clause = clause._replace(progressive=True)
    clause = clause._replace(negated=negated or (clause.object is not None and clause.object.negated))
    if clause.verb == "read" and clause.tense == "past" and person(clause.subject) != 2:
        clause = clause._replace(tense="present")             # "I read": present or past? English cannot say
    if not subordinate and clause.verb != "be" and rng.random() < 1 / 6:
        adverb = pick(rng, ["today", "often", "now" if clause.tense == "present" else "yesterday"])
        clause = clause._replace(adverb=adverb)
    if not subordinate and clause.verb in UNSEEN_BRACKET and clause.tense == "past":
        clause = clause._replace(tense="present")             # the compositional test's main-clause perfect
    return clause


def draw_question(rng, clause):
    """The clause asked as a question (no adverb, no negation): yes/no, who (for a third-person subject),
    what (for an object of a thing), where (for a place, in the present: training never asks where in the past)."""
    clause = clause._replace(adverb=None, negated=False,
                             object=clause.object and clause.object._replace(negated=False))
    kinds = ["yes"]
    if (clause.subject.noun in PEOPLE or clause.subject.noun in ("he", "she")) and \
            (clause.verb != "be" or clause.predicate):
        kinds.append("who")
    if clause.object is not None and clause.verb != "be" and clause.verb not in WITH | DATIVE_OBJECT \
            and clause.object.noun in NOUNS and "P" not in NOUNS[clause.object.noun].kinds:
        kinds.append("what")
    if clause.place is not None and clause.tense == "present":
        kinds.append("where")
    kind = pick(rng, kinds)
    if kind == "who":
        clause = clause._replace(subject=NounPhrase("who"))
    return clause._replace(question=kind)


def draw_sentence(rng, force=None):
    """A Sentence: a statement or a question (half of the single clauses are questions), "someone
    says/knows/... that ..." or "... because ...". Training never negates the clause after that/because.

    force: None (training and the held-out set), or a compositional kind (an index into
    COMPOSITIONAL_KINDS) the sentence must show, and no other."""
    if force in (3, 4):
        return show_unseen_form(rng, force)
    shape = pick(rng, (0, 0, 0, 1, 2)) if force != 2 else 1 + int(rng.integers(2))
    if shape == 0:
        clause = draw_clause(rng)
        if rng.random() < 0.3:
            clause = draw_question(rng, clause)
        sentence = Sentence(clause)
    else:
        if shape == 1:
            main = Clause(draw_subject(rng, "P", numbers=False), pick(rng, list(SAYING)))
        else:
            main = draw_clause(rng, numbers=False)
            while main.verb == "be" and main.subject.noun in ("this", "that"):
                main = draw_clause(rng, numbers=False)
        second = draw_clause(rng, subordinate=True, may_negate=force == 2)
        while force == 2 and not second.negated:
            second = draw_clause(rng, subordinate=True)
        sentence = Sentence(main, "that" if shape == 1 else "because", second)
    return show_unseen(sentence, rng, force)


def show_unseen_form(rng, force):
    """A sentence of compositional kind 3 (a main-clause perfect of a verb of UNSEEN_BRACKET) or 4 (a where
    question in the past)."""
    while True:
        clause = draw_clause(rng, past_allowed=True)
        if force == 3 and clause.verb in UNSEEN_BRACKET:
            return Sentence(clause._replace(tense="past", progressive=False))
        if force == 4 and clause.place is not None:
            clause = draw_question(rng, clause._replace(tense="present", progressive=False))
            if clause.question == "where":
                return Sentence(clause._replace(tense="past"))


def show_unseen(sentence, rng, force):
    """sentence changed to show compositional kind 0 (an unseen adjective-noun pair: as the subject of its
    last clause, or as the object of "see") or 1 (an unseen number: a subject of that many, the clause's other
    numbers dropped). Kind 2 is drawn so by draw_sentence."""
    if force not in (0, 1):
        return sentence
    clause = sentence.second or sentence.main
    if force == 0:
        adjective, noun = pick(rng, UNSEEN_PAIRS)
        clause = Clause(NounPhrase(pick(rng, PEOPLE)), "see", NounPhrase(noun, adjective=adjective),
                        tense=clause.tense)
    else:
        subject = NounPhrase(pick(rng, PEOPLE), True, None, int(pick(rng, UNSEEN_NUMBERS)))
        clause = Clause(subject, pick(rng, ("sleep", "wait", "laugh", "work")), tense=clause.tense)
    return sentence._replace(second=clause) if sentence.second else sentence._replace(main=clause)
