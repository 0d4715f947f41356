"""The small words, and the names of genders and cases: pronouns (I, me: ich, mich, mir; "you" is du),
possessives, adverbs, conjunctions, question words. The nouns and adjectives are in nouns.py, the verbs in
verbs.py."""

MASCULINE, FEMININE, NEUTER, PLURAL = "m", "f", "n", "pl"
NOMINATIVE, ACCUSATIVE, DATIVE = "nom", "acc", "dat"

# pronouns by person: I you (du: one person, familiar) he she it we they
PERSONS = ("I", "you", "he", "she", "it", "we", "they")
PRONOUNS = {   # english subject -> (english object, german nominative, accusative, dative, german verb form index)
    "I": ("me", "ich", "mich", "mir", 0), "you": ("you", "du", "dich", "dir", 1), "he": ("him", "er", "ihn", "ihm", 2),
    "she": ("her", "sie", "sie", "ihr", 2), "it": ("it", "es", "es", "ihm", 2), "we": ("us", "wir", "uns", "uns", 3),
    "they": ("them", "sie", "sie", "ihnen", 3)}
POSSESSIVES = {"my": "mein", "your": "dein", "his": "sein", "her": "ihr", "our": "unser", "their": "ihr"}
ADVERBS = {"today": "heute", "now": "jetzt", "often": "oft", "yesterday": "gestern"}
CONJUNCTIONS = {"that": "dass", "because": "weil"}
QUESTION_WORDS = {"who": "wer", "what": "was", "where": "wo"}
