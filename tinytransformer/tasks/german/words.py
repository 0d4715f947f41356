"""The vocabularies: every English word and every German piece a sentence can have, and the English words
by part of speech (what `translate --words` lists)."""
from .lexicon import ADVERBS, CONJUNCTIONS, POSSESSIVES, PRONOUNS, QUESTION_WORDS
from .nouns import ADJECTIVES, CONTRACTIONS, NOUNS, PREPOSITIONS, PROFESSIONS
from .verbs import BE, PRETERITE, VERB_TABLES
from .numbers import ENGLISH_TENS, ENGLISH_UNITS, NUMBERS, german_number
from .phrases import DEFINITE, DEMONSTRATIVES, INDEFINITE, KEIN_PLURAL, MIXED, STRONG, WEAK

AUXILIARIES = ["am", "are", "is", "was", "were", "do", "does", "did", "not"]


def english_parts_of_speech():
    """{part of speech: its English words, sorted}: what a sentence can say, as the model reads it (lower case)."""
    verbs = {form for table in VERB_TABLES.values() for verb in table.values() for form in verb.english}
    parts = {
        "nouns": set(NOUNS) | {noun.english_plural for noun in NOUNS.values() if noun.english_plural},
        "verbs": verbs,
        "be and do": set(AUXILIARIES),
        "adjectives": set(ADJECTIVES),
        "pronouns": {word for subject, forms in PRONOUNS.items() for word in (subject.lower(), forms[0])} |
                    {"this", "that"},
        "articles and possessives": {"the", "a", "an"} | set(POSSESSIVES),
        "prepositions": {word for preposition in PREPOSITIONS for word in preposition.split()} | {"to"},
        "adverbs": set(ADVERBS),
        "conjunctions": set(CONJUNCTIONS),
        "question words": set(QUESTION_WORDS),
        "numbers": set(ENGLISH_UNITS[1:]) | set(ENGLISH_TENS[2:]),
    }
    return {part: sorted(words) for part, words in parts.items()}


def english_vocabulary():
    """Every English word a sentence can have (lower case), sorted."""
    return sorted({word for words in english_parts_of_speech().values() for word in words})


def german_vocabulary():
    """Every German piece a sentence can have, sorted."""
    pieces = {form for noun in NOUNS.values()
              for form in (noun.singular, noun.plural, noun.dative_plural, noun.oblique) if form}
    endings = {ending for table in (WEAK, MIXED, STRONG) for by_gender in table.values()
               for ending in by_gender.values()}
    pieces |= {adjective.stem + ending for adjective in ADJECTIVES.values() for ending in endings}
    pieces |= {adjective.german for adjective in ADJECTIVES.values()}
    for verb in [BE] + [verb for table in VERB_TABLES.values() for verb in table.values()]:
        pieces |= set(verb.german)
    pieces |= {form for forms in PRETERITE.values() for form in forms}
    bases = ["ein", "kein"] + list(POSSESSIVES.values())
    pieces |= {word for by_gender in DEFINITE.values() for word in by_gender.values()}
    pieces |= {base + word[len("ein"):] for base in bases for by_gender in INDEFINITE.values()
               for word in by_gender.values()}
    pieces |= {base + word[len("kein"):] for base in bases for word in KEIN_PLURAL.values()}
    pieces |= {form for forms in PRONOUNS.values() for form in forms[1:4]} | set(DEMONSTRATIVES.values())
    pieces |= set(PREPOSITIONS.values()) | set(CONTRACTIONS.values())
    pieces |= {form for forms in PROFESSIONS.values() for form in forms}
    pieces |= set(ADVERBS.values()) | set(CONJUNCTIONS.values()) | set(QUESTION_WORDS.values())
    pieces |= {piece for n in NUMBERS for piece in german_number(n)} | {"nicht", ",", "?"}
    return sorted(pieces)
