"""A small grammar of German, the German of a first-year course: a sentence's description written in
English and in German, one file per idea.

    lexicon.py   the small words (pronouns, possessives, adverbs, conjunctions), genders and cases
    nouns.py     nouns (gender, plural, kinds), adjectives (the kinds each describes), places
    verbs.py     verbs (their forms, haben or sein), and who may do what to what
    numbers.py   2..99: zweiundvierzig
    phrases.py   noun phrases (articles, adjective endings, pronouns, possessives) and places (im Garten)
    clauses.py   clauses and sentences: verb second, verb first, verb last, the perfect's bracket, nicht, kein
    draws.py     descriptions drawn at random from a seed (np.random.Generator), sensible by construction
    parse.py     an English sentence read back into a description by generating (analysis by synthesis)
    words.py     the vocabularies of both languages, and the English words by part of speech

Every function but draws.py's is deterministic: a description in, its words out. German is written in
pieces, one per token: a word, a comma, a question mark, or a piece of a number that ends in "+" and is
glued to the next (zwei+ und+ vierzig -> zweiundvierzig); german_text joins the pieces into a sentence.
"you" is always du: one person, familiar, as a class speaks to a child or a friend.
"""
from .lexicon import *  # noqa: F401,F403  (the grammar's names, from the one package a reader imports)
from .nouns import *  # noqa: F401,F403
from .verbs import *  # noqa: F401,F403
from .numbers import *  # noqa: F401,F403
from .phrases import *  # noqa: F401,F403
from .clauses import *  # noqa: F401,F403
from .words import *  # noqa: F401,F403
