"""A small grammar of German: the facts that make English-to-German more than word for word.

Each function turns a description of a phrase into its English words and its
German pieces. Nothing here is random (tasks/translation.py draws the
descriptions); every table is a fact of German grammar:

    gender      der Hund (masculine), die Katze (feminine), das Kind (neuter)
    case        the subject in the nominative (der Hund), the object in the accusative
                (den Hund), after "mit" and for the receiver of "geben" the dative (dem Hund)
    adjectives  the ending depends on the article before it: der alte Hund, ein alter Hund,
                den alten Hund, alte Hunde
    plural      die Hunde schlafen (the verb agrees); a dative plural adds -n: mit den Hunden
    word order  the verb second in a main clause (Heute sieht der Hund die Katze), last in a
                clause after dass or weil (..., dass der Hund die Katze sieht)
    negation    nicht after the object (sieht die Katze nicht); kein for "not a" (sieht keine Katze)
    numbers     one word, the units before the tens: zweiundvierzig

German is written in pieces, one per token: a word, a comma, or a piece of a
number that ends in "+" and is glued to the next (zwei+ und+ vierzig ->
zweiundvierzig). german_text joins the pieces into a sentence.
"""
from typing import NamedTuple

MASCULINE, FEMININE, NEUTER, PLURAL = "m", "f", "n", "pl"
NOMINATIVE, ACCUSATIVE, DATIVE = "nom", "acc", "dat"


class Noun(NamedTuple):
    """A German noun's gender, singular, plural and dative plural, and its English plural."""
    gender: str           # m, f or n
    singular: str
    plural: str
    dative_plural: str    # the plural + n, unless it already ends in n or s
    english_plural: str


NOUNS = {   # english singular -> Noun
    "dog": Noun(MASCULINE, "Hund", "Hunde", "Hunden", "dogs"),
    "cat": Noun(FEMININE, "Katze", "Katzen", "Katzen", "cats"),
    "child": Noun(NEUTER, "Kind", "Kinder", "Kindern", "children"),
    "man": Noun(MASCULINE, "Mann", "Männer", "Männern", "men"),
    "woman": Noun(FEMININE, "Frau", "Frauen", "Frauen", "women"),
    "girl": Noun(NEUTER, "Mädchen", "Mädchen", "Mädchen", "girls"),
    "teacher": Noun(MASCULINE, "Lehrer", "Lehrer", "Lehrern", "teachers"),
    "bird": Noun(MASCULINE, "Vogel", "Vögel", "Vögeln", "birds"),
    "ball": Noun(MASCULINE, "Ball", "Bälle", "Bällen", "balls"),
    "apple": Noun(MASCULINE, "Apfel", "Äpfel", "Äpfeln", "apples"),
    "book": Noun(NEUTER, "Buch", "Bücher", "Büchern", "books"),
    "car": Noun(NEUTER, "Auto", "Autos", "Autos", "cars"),
    "flower": Noun(FEMININE, "Blume", "Blumen", "Blumen", "flowers"),
    "cup": Noun(FEMININE, "Tasse", "Tassen", "Tassen", "cups"),
}
ANIMATE = ("dog", "cat", "child", "man", "woman", "girl", "teacher", "bird")     # may be a subject
PEOPLE = ("child", "man", "woman", "girl", "teacher")                           # may say or know things

ADJECTIVES = {"old": "alt", "small": "klein", "big": "groß", "young": "jung", "black": "schwarz",
              "red": "rot", "new": "neu"}


class Verb(NamedTuple):
    """A verb's forms for he and for they, in English and in German."""
    english: tuple        # (he ..., they ...): ("sees", "see")
    german: tuple         # (er ..., sie ...): ("sieht", "sehen")


# by what follows the verb: nothing, an object (accusative), an object and a receiver (accusative and
# dative), "with" and a dative, or "that" and a clause
INTRANSITIVE = {"sleep": Verb(("sleeps", "sleep"), ("schläft", "schlafen")),
                "run": Verb(("runs", "run"), ("läuft", "laufen")),
                "sing": Verb(("sings", "sing"), ("singt", "singen")),
                "wait": Verb(("waits", "wait"), ("wartet", "warten"))}
TRANSITIVE = {"see": Verb(("sees", "see"), ("sieht", "sehen")),
              "find": Verb(("finds", "find"), ("findet", "finden")),
              "have": Verb(("has", "have"), ("hat", "haben")),
              "buy": Verb(("buys", "buy"), ("kauft", "kaufen")),
              "like": Verb(("likes", "like"), ("mag", "mögen"))}
DITRANSITIVE = {"give": Verb(("gives", "give"), ("gibt", "geben")),
                "show": Verb(("shows", "show"), ("zeigt", "zeigen"))}
WITH = {"play": Verb(("plays", "play"), ("spielt", "spielen"))}
SAYING = {"say": Verb(("says", "say"), ("sagt", "sagen")),
          "know": Verb(("knows", "know"), ("weiß", "wissen")),
          "believe": Verb(("believes", "believe"), ("glaubt", "glauben"))}
ADVERBS = {"today": "heute", "now": "jetzt", "often": "oft"}
CONJUNCTIONS = {"that": "dass", "because": "weil"}

DEFINITE = {NOMINATIVE: {MASCULINE: "der", FEMININE: "die", NEUTER: "das", PLURAL: "die"},
            ACCUSATIVE: {MASCULINE: "den", FEMININE: "die", NEUTER: "das", PLURAL: "die"},
            DATIVE: {MASCULINE: "dem", FEMININE: "der", NEUTER: "dem", PLURAL: "den"}}
# ein (singular only); kein is ein with a k, and has a plural
INDEFINITE = {NOMINATIVE: {MASCULINE: "ein", FEMININE: "eine", NEUTER: "ein"},
              ACCUSATIVE: {MASCULINE: "einen", FEMININE: "eine", NEUTER: "ein"},
              DATIVE: {MASCULINE: "einem", FEMININE: "einer", NEUTER: "einem"}}
KEIN_PLURAL = {NOMINATIVE: "keine", ACCUSATIVE: "keine", DATIVE: "keinen"}

# Adjective endings. Weak, after der/die/das: -e in the nominative singular (and the accusative of
# die and das), -en everywhere else. Mixed, after ein/kein: the ending shows the gender that ein
# does not (ein alter Hund, ein altes Kind). Strong, with no article (plural here): -e, dative -en.
WEAK = {NOMINATIVE: {MASCULINE: "e", FEMININE: "e", NEUTER: "e", PLURAL: "en"},
        ACCUSATIVE: {MASCULINE: "en", FEMININE: "e", NEUTER: "e", PLURAL: "en"},
        DATIVE: {MASCULINE: "en", FEMININE: "en", NEUTER: "en", PLURAL: "en"}}
MIXED = {NOMINATIVE: {MASCULINE: "er", FEMININE: "e", NEUTER: "es"},        # singular only: keine alten
         ACCUSATIVE: {MASCULINE: "en", FEMININE: "e", NEUTER: "es"},        # Hunde takes WEAK's plural
         DATIVE: {MASCULINE: "en", FEMININE: "en", NEUTER: "en"}}
STRONG_PLURAL = {NOMINATIVE: "e", ACCUSATIVE: "e", DATIVE: "en"}

ENGLISH_UNITS = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
ENGLISH_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
GERMAN_UNITS = ["", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf",
                "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"]
GERMAN_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]
NUMBERS = range(2, 100)      # one is the article (ein Hund), so the numbers start at two


def english_number(n):
    """2..99 in English words: 42 -> "forty-two" (tens first, joined by a hyphen)."""
    check_number(n)
    if n < 20:
        return ENGLISH_UNITS[n]
    tens, units = divmod(n, 10)
    return ENGLISH_TENS[tens] + (f"-{ENGLISH_UNITS[units]}" if units else "")


def german_number(n):
    """2..99 as German pieces: 42 -> ["zwei+", "und+", "vierzig"], the units first, then "und",
    then the tens, all one word; a one before "und" is "ein" (einundzwanzig)."""
    check_number(n)
    if n < 20:
        return [GERMAN_UNITS[n]]
    tens, units = divmod(n, 10)
    if units == 0:
        return [GERMAN_TENS[tens]]
    return ["ein+" if units == 1 else GERMAN_UNITS[units] + "+", "und+", GERMAN_TENS[tens]]


def check_number(n):
    """Raise ValueError unless n is a number the grammar has words for (NUMBERS)."""
    if n not in NUMBERS:
        raise ValueError(f"german: numbers run from {NUMBERS.start} to {NUMBERS.stop - 1}, got {n!r}")


class NounPhrase(NamedTuple):
    """What a noun phrase says: noun (english singular), plural, article ("the", "a" or None; None
    in the plural: no article, or a number), number (2..99 or None), adjective (english or None),
    negated (True: "not a" or "not any", German kein)."""
    noun: str
    plural: bool = False
    article: str | None = "the"
    number: int | None = None
    adjective: str | None = None
    negated: bool = False


def english_noun_phrase(phrase):
    """The English words: ["the", "old", "dog"], ["an", "apple"], ["forty-two", "red", "cars"]."""
    noun = NOUNS[phrase.noun].english_plural if phrase.plural else phrase.noun
    words = ([phrase.adjective] if phrase.adjective else []) + [noun]
    if phrase.number is not None:
        return [english_number(phrase.number)] + words
    if phrase.article == "a":
        return ["an" if words[0][0] in "aeiou" else "a"] + words
    return ([phrase.article] if phrase.article else []) + words


def german_noun_phrase(phrase, case):
    """The German pieces in case: ["den", "alten", "Hund"], ["keine", "Katze"], ["zwei+", "und+",
    "vierzig", "rote", "Autos"]."""
    noun = NOUNS[phrase.noun]
    gender = PLURAL if phrase.plural else noun.gender
    if phrase.plural:
        article = [] if phrase.article is None else [DEFINITE[case][PLURAL]]
        if phrase.negated:
            article = [KEIN_PLURAL[case]]
        ending = STRONG_PLURAL[case] if not article else WEAK[case][PLURAL]
        word = noun.dative_plural if case == DATIVE else noun.plural
    else:
        if phrase.article == "the":
            article, ending = [DEFINITE[case][gender]], WEAK[case][gender]
        else:                                            # ein or kein
            indefinite = INDEFINITE[case][gender]
            article, ending = ["k" + indefinite if phrase.negated else indefinite], MIXED[case][gender]
        word = noun.singular
    numbers = german_number(phrase.number) if phrase.number is not None else []
    adjective = [ADJECTIVES[phrase.adjective] + ending] if phrase.adjective else []
    return article + numbers + adjective + [word]


class Clause(NamedTuple):
    """What a clause says: subject (a NounPhrase), verb (english lemma, from one of the verb tables),
    object and receiver (NounPhrases or None, as the verb needs), negated, adverb (english or None,
    main clauses only)."""
    subject: NounPhrase
    verb: str
    object: NounPhrase | None = None
    receiver: NounPhrase | None = None
    negated: bool = False
    adverb: str | None = None


def verb_of(lemma):
    """The Verb of an English lemma, from the verb table that holds it; ValueError if none does."""
    for table in (INTRANSITIVE, TRANSITIVE, DITRANSITIVE, WITH, SAYING):
        if lemma in table:
            return table[lemma]
    raise ValueError(f"german: no verb {lemma!r}")


def english_clause(clause):
    """English words, always subject-verb-object: "the man does not give the ball to the child"."""
    person = 1 if clause.subject.plural else 0                # he sees / they see
    verb = verb_of(clause.verb)
    if clause.negated:
        verb_words = ["do" if person else "does", "not", verb.english[1]]
    else:
        verb_words = [verb.english[person]]
    words = english_noun_phrase(clause.subject) + verb_words
    if clause.verb in WITH:
        words += ["with"] + english_noun_phrase(clause.object)
    elif clause.object is not None:
        words += english_noun_phrase(clause.object)
    if clause.receiver is not None:
        words += ["to"] + english_noun_phrase(clause.receiver)
    return ([clause.adverb] if clause.adverb else []) + words


def german_clause(clause, subordinate=False):
    """German pieces: a main clause puts the verb second (after the subject, or after an adverb that
    comes first); a subordinate clause puts it last. The middle is the same either way: the receiver
    (dative) before the object (accusative), then nicht, unless kein already negates the object;
    nicht comes before "mit"."""
    verb = verb_of(clause.verb).german[1 if clause.subject.plural else 0]
    subject = german_noun_phrase(clause.subject, NOMINATIVE)
    kein = clause.object is not None and clause.object.negated
    nicht = ["nicht"] if clause.negated and not kein else []
    middle = german_noun_phrase(clause.receiver, DATIVE) if clause.receiver is not None else []
    if clause.verb in WITH:
        middle += nicht + ["mit"] + german_noun_phrase(clause.object, DATIVE)
    else:
        if clause.object is not None:
            middle += german_noun_phrase(clause.object, ACCUSATIVE)
        middle += nicht
    if subordinate:
        return subject + middle + [verb]
    if clause.adverb:
        return [ADVERBS[clause.adverb], verb] + subject + middle           # verb second: after the adverb
    return subject + [verb] + middle


class Sentence(NamedTuple):
    """A clause alone; or with a second clause after "that" (main: someone says, knows or believes)
    or "because" (main: any clause)."""
    main: Clause
    conjunction: str | None = None
    second: Clause | None = None


def english_words(sentence):
    """The sentence in English, as words: the main clause, then the conjunction and second clause if any."""
    words = english_clause(sentence.main)
    if sentence.conjunction:
        words += [sentence.conjunction] + english_clause(sentence.second)
    return words


def german_pieces(sentence):
    """The sentence in German, as pieces: after dass and weil, a comma and the verb last."""
    pieces = german_clause(sentence.main)
    if sentence.conjunction:     # a comma before dass and weil, and the verb last after them
        pieces += [",", CONJUNCTIONS[sentence.conjunction]] + german_clause(sentence.second, subordinate=True)
    return pieces


def english_text(words):
    """["the", "dog", "sleeps"] -> "The dog sleeps." """
    text = " ".join(words)
    return text[:1].upper() + text[1:] + "."


def german_text(pieces):
    """German pieces -> the sentence: ["der", "Hund", "hat", "zwei+", "und+", "vierzig", "Bälle"] ->
    "Der Hund hat zweiundvierzig Bälle." A piece ending in + is glued to the next; a comma to the word
    before it. (A model's output may end on a + piece: the + is dropped.)"""
    text = " ".join(pieces).replace("+ ", "").replace(" ,", ",").rstrip("+")
    return text[:1].upper() + text[1:] + "."


def english_vocabulary():
    """Every English word a sentence can have, sorted."""
    words = set(NOUNS) | {noun.english_plural for noun in NOUNS.values()} | set(ADJECTIVES) | set(ADVERBS)
    for table in (INTRANSITIVE, TRANSITIVE, DITRANSITIVE, WITH, SAYING):
        words |= {form for verb in table.values() for form in verb.english}
    words |= set(CONJUNCTIONS) | {"the", "a", "an", "do", "does", "not", "with", "to"}
    words |= set(ENGLISH_UNITS[1:]) | set(ENGLISH_TENS[2:])
    return sorted(words)


def german_vocabulary():
    """Every German piece a sentence can have, sorted."""
    pieces = {form for noun in NOUNS.values() for form in (noun.singular, noun.plural, noun.dative_plural)}
    endings = {ending for table in (WEAK, MIXED) for by_gender in table.values() for ending in by_gender.values()}
    pieces |= {stem + ending for stem in ADJECTIVES.values() for ending in endings}
    for table in (INTRANSITIVE, TRANSITIVE, DITRANSITIVE, WITH, SAYING):
        pieces |= {form for verb in table.values() for form in verb.german}
    articles = {word for table in (DEFINITE, INDEFINITE) for by_gender in table.values() for word in by_gender.values()}
    kein = {"k" + word for by_gender in INDEFINITE.values() for word in by_gender.values()}
    pieces |= articles | kein | set(KEIN_PLURAL.values())
    pieces |= set(ADVERBS.values()) | set(CONJUNCTIONS.values()) | {"nicht", "mit", ","}
    pieces |= {piece for n in NUMBERS for piece in german_number(n)}
    return sorted(pieces)
