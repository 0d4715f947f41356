"""Noun phrases in both languages: the article and the adjective ending that show gender and case, the
pronouns (ich, mich, mir), the possessives (mein, meinen), and places (auf der Matte, im Garten).

    case        the subject in the nominative (der Hund), the object in the accusative (den Hund), the
                receiver and everything after in, auf, unter, neben, an, mit in the dative (dem Hund)
    adjectives  the ending depends on the word before it: der alte Hund, ein alter Hund, den alten Hund,
                alte Hunde, kaltes Wasser; mein and kein end as ein does (mein alter Hund)
    plural      a dative plural adds -n: mit den Hunden; a weak noun adds -n to its other cases too:
                den Jungen
"""
from typing import NamedTuple

from .lexicon import ACCUSATIVE, DATIVE, FEMININE, MASCULINE, NEUTER, NOMINATIVE, PLURAL, POSSESSIVES, PRONOUNS
from .nouns import ADJECTIVES, CONTRACTIONS, NOUNS, PREPOSITIONS
from .numbers import english_number, german_number

DEFINITE = {NOMINATIVE: {MASCULINE: "der", FEMININE: "die", NEUTER: "das", PLURAL: "die"},
            ACCUSATIVE: {MASCULINE: "den", FEMININE: "die", NEUTER: "das", PLURAL: "die"},
            DATIVE: {MASCULINE: "dem", FEMININE: "der", NEUTER: "dem", PLURAL: "den"}}
# ein (singular only); kein and mein, dein, ... are ein with a stem before it, and have a plural
INDEFINITE = {NOMINATIVE: {MASCULINE: "ein", FEMININE: "eine", NEUTER: "ein"},
              ACCUSATIVE: {MASCULINE: "einen", FEMININE: "eine", NEUTER: "ein"},
              DATIVE: {MASCULINE: "einem", FEMININE: "einer", NEUTER: "einem"}}
KEIN_PLURAL = {NOMINATIVE: "keine", ACCUSATIVE: "keine", DATIVE: "keinen"}

# Adjective endings. Weak, after der/die/das (and any plural article): -e in the nominative singular (and
# the accusative of die and das), -en everywhere else. Mixed, after ein/kein/mein: the ending shows the
# gender that ein does not (ein alter Hund, ein altes Kind). Strong, with no article: the ending der would have.
WEAK = {NOMINATIVE: {MASCULINE: "e", FEMININE: "e", NEUTER: "e", PLURAL: "en"},
        ACCUSATIVE: {MASCULINE: "en", FEMININE: "e", NEUTER: "e", PLURAL: "en"},
        DATIVE: {MASCULINE: "en", FEMININE: "en", NEUTER: "en", PLURAL: "en"}}
MIXED = {NOMINATIVE: {MASCULINE: "er", FEMININE: "e", NEUTER: "es"},        # singular only: keine alten
         ACCUSATIVE: {MASCULINE: "en", FEMININE: "e", NEUTER: "es"},        # Hunde takes WEAK's plural
         DATIVE: {MASCULINE: "en", FEMININE: "en", NEUTER: "en"}}
STRONG = {NOMINATIVE: {MASCULINE: "er", FEMININE: "e", NEUTER: "es", PLURAL: "e"},
          ACCUSATIVE: {MASCULINE: "en", FEMININE: "e", NEUTER: "es", PLURAL: "e"},
          DATIVE: {MASCULINE: "em", FEMININE: "er", NEUTER: "em", PLURAL: "en"}}
STRONG_PLURAL = {case: by_gender[PLURAL] for case, by_gender in STRONG.items()}
DEMONSTRATIVES = {"this": "das", "that": "das",        # this is a book, that is my house: das ist ...
                  "who": "wer", "what": "was"}          # who sleeps? wer schläft? what does he see? was sieht er?


class NounPhrase(NamedTuple):
    """What a noun phrase says: noun (english singular, a pronoun of PRONOUNS, "this" or "that"), plural,
    article ("the", "a", a possessive "my" ... or None: no article, a number or a mass noun), number (2..99
    or None), adjective (english or None), negated (True: "not a" or "not any", German kein)."""
    noun: str
    plural: bool = False
    article: str | None = "the"
    number: int | None = None
    adjective: str | None = None
    negated: bool = False


def is_pronoun(phrase):
    """True if the phrase is a personal pronoun (I, you, ...), this or that, who or what."""
    return phrase.noun in PRONOUNS or phrase.noun in DEMONSTRATIVES


def person(phrase):
    """The verb form a subject takes: 0 ich, 1 du, 2 er/sie/es (and a singular noun), 3 wir/sie (and a plural)."""
    if phrase.noun in PRONOUNS:
        return PRONOUNS[phrase.noun][4]
    return 3 if phrase.plural else 2


def english_noun_phrase(phrase, case=NOMINATIVE):
    """The English words: ["the", "old", "dog"], ["an", "apple"], ["forty-two", "red", "cars"], ["me"]."""
    if phrase.noun in PRONOUNS:
        return [phrase.noun if case == NOMINATIVE else PRONOUNS[phrase.noun][0]]
    if phrase.noun in DEMONSTRATIVES:
        return [phrase.noun]
    noun = NOUNS[phrase.noun].english_plural if phrase.plural else phrase.noun
    words = ([phrase.adjective] if phrase.adjective else []) + [noun]
    if phrase.number is not None:
        return [english_number(phrase.number)] + words
    if phrase.article == "a":
        return ["an" if words[0][0] in "aeiou" else "a"] + words
    return ([phrase.article] if phrase.article else []) + words


def german_noun_phrase(phrase, case, noun=None):
    """The German pieces in case: ["den", "alten", "Hund"], ["keine", "Katze"], ["meinem", "Haus"], ["mir"],
    ["zwei+", "und+", "vierzig", "rote", "Autos"]; noun, a Noun, instead of the phrase's own entry (a woman's
    profession: ["meine", "Lehrerin"])."""
    if phrase.noun in PRONOUNS:
        return [PRONOUNS[phrase.noun][{NOMINATIVE: 1, ACCUSATIVE: 2, DATIVE: 3}[case]]]
    if phrase.noun in DEMONSTRATIVES:
        return [DEMONSTRATIVES[phrase.noun]]
    noun = noun or NOUNS[phrase.noun]
    gender = PLURAL if phrase.plural else noun.gender
    base = "kein" if phrase.negated else "ein" if phrase.article == "a" else POSSESSIVES.get(phrase.article)
    if phrase.article == "the":
        article, ending = [DEFINITE[case][gender]], WEAK[case][gender]
    elif base is None:                                     # no article: a plural, a number, a mass noun
        article, ending = [], STRONG[case][gender]
    elif phrase.plural:                                    # keine, meine: ends as kein's plural
        article, ending = [base + KEIN_PLURAL[case][len("kein"):]], WEAK[case][PLURAL]
    else:                                                  # ein, kein, mein, unser: ends as ein does
        article, ending = [base + INDEFINITE[case][gender][len("ein"):]], MIXED[case][gender]
    if phrase.plural:
        word = noun.dative_plural if case == DATIVE else noun.plural
    else:
        word = noun.oblique if noun.oblique and case != NOMINATIVE else noun.singular
    numbers = german_number(phrase.number) if phrase.number is not None else []
    adjective = [ADJECTIVES[phrase.adjective].stem + ending] if phrase.adjective else []
    return article + numbers + adjective + [word]


class Place(NamedTuple):
    """Where: a preposition of PREPOSITIONS (in, on, under, next to, at) and a NounPhrase, in the dative."""
    preposition: str
    where: NounPhrase


def english_place(place):
    """["on", "the", "mat"], ["next", "to", "the", "car"]."""
    return place.preposition.split() + english_noun_phrase(place.where, DATIVE)


def german_place(place):
    """["auf", "der", "Matte"]; in dem and an dem are one word: ["im", "Garten"], ["am", "Tisch"]."""
    preposition, phrase = PREPOSITIONS[place.preposition], german_noun_phrase(place.where, DATIVE)
    if (preposition, phrase[0]) in CONTRACTIONS:
        return [CONTRACTIONS[preposition, phrase[0]]] + phrase[1:]
    return [preposition] + phrase
