"""tasks/german/: each rule of the grammar on hand-written sentences in both languages, the selectional
restrictions on drawn sentences, the vocabularies and the listing by part of speech."""
import numpy as np
import pytest

from tinytransformer.tasks import german
from tinytransformer.tasks.german import Clause, NounPhrase, Place, Sentence, draws, lexicon, nouns, parse, verbs


def both(sentence):
    return german.english_text(german.english_words(sentence)), german.german_text(german.german_pieces(sentence))


def N(noun, **options):
    return NounPhrase(noun, **options)


# (what the sentence says, its English, its German): each line a rule of the grammar
HAND_WRITTEN = [
    # pronouns: subject, accusative, dative; "you" is du
    (Sentence(Clause(N("I"), "love", N("you"))), "I love you.", "Ich liebe dich."),
    (Sentence(Clause(N("we"), "see", N("they"))), "We see them.", "Wir sehen sie."),
    (Sentence(Clause(N("you"), "help", N("I"), tense="past")), "You helped me.", "Du hast mir geholfen."),
    (Sentence(Clause(N("she"), "visit", N("he"), negated=True)), "She does not visit him.",
     "Sie besucht ihn nicht."),
    # possessives end as ein does; their plural as kein's; an adjective after them is mixed, or weak in the plural
    (Sentence(Clause(N("mother", article="my"), "read", N("book", article="your"))),
     "My mother reads your book.", "Meine Mutter liest dein Buch."),
    (Sentence(Clause(N("he"), "wash", N("car", article="our", adjective="old"))),
     "He washes our old car.", "Er wäscht unser altes Auto."),
    (Sentence(Clause(N("they"), "play", N("dog", article="their", plural=True))),
     "They play with their dogs.", "Sie spielen mit ihren Hunden."),
    (Sentence(Clause(N("dog", article="her", adjective="big"), "sleep")), "Her big dog sleeps.",
     "Ihr großer Hund schläft."),
    # be and have: a predicate adjective has no ending; a profession no article; kein for "not a"
    (Sentence(Clause(N("house"), "be", predicate="big")), "The house is big.", "Das Haus ist groß."),
    (Sentence(Clause(N("I"), "be", predicate="tired", negated=True)), "I am not tired.", "Ich bin nicht müde."),
    (Sentence(Clause(N("child", plural=True), "be", predicate="hungry", tense="past")),
     "The children were hungry.", "Die Kinder waren hungrig."),
    (Sentence(Clause(N("woman"), "be", N("teacher", article="a"))), "The woman is a teacher.",
     "Die Frau ist Lehrerin."),
    (Sentence(Clause(N("man"), "be", N("doctor", article="a", negated=True), negated=True)),
     "The man is not a doctor.", "Der Mann ist kein Arzt."),
    (Sentence(Clause(N("this"), "be", N("book", article="a", negated=True), negated=True)),
     "This is not a book.", "Das ist kein Buch."),
    (Sentence(Clause(N("that"), "be", N("house", article="my"))), "That is my house.", "Das ist mein Haus."),
    (Sentence(Clause(N("I"), "have", N("dog", article="a", negated=True), negated=True)),
     "I do not have a dog.", "Ich habe keinen Hund."),
    (Sentence(Clause(N("she"), "have", N("cat", article="a"), tense="past")), "She had a cat.",
     "Sie hatte eine Katze."),
    # the present: the simple and the progressive are one German tense; verbs change their vowel for du and er
    (Sentence(Clause(N("child", plural=True), "eat", progressive=True)), "The children are eating.",
     "Die Kinder essen."),
    (Sentence(Clause(N("you"), "eat", N("apple", article="a"))), "You eat an apple.", "Du isst einen Apfel."),
    (Sentence(Clause(N("he"), "read", N("newspaper"), progressive=True, negated=True)),
     "He is not reading the newspaper.", "Er liest die Zeitung nicht."),
    # the perfect for the English past: haben or sein second, the participle last (the bracket)
    (Sentence(Clause(N("man"), "see", N("woman"), tense="past")), "The man saw the woman.",
     "Der Mann hat die Frau gesehen."),
    (Sentence(Clause(N("dog"), "run", tense="past")), "The dog ran.", "Der Hund ist gelaufen."),
    (Sentence(Clause(N("we"), "go", tense="past", negated=True)), "We did not go.", "Wir sind nicht gegangen."),
    (Sentence(Clause(N("cat"), "sit", place=Place("on", N("mat")), tense="past")),
     "The cat sat on the mat.", "Die Katze hat auf der Matte gesessen."),
    (Sentence(Clause(N("man"), "say"), "that", Clause(N("girl"), "visit", N("woman"), tense="past")),
     "The man says that the girl visited the woman.", "Der Mann sagt, dass das Mädchen die Frau besucht hat."),
    # questions: the verb first (yes/no), or second after wer, was, wo
    (Sentence(Clause(N("dog"), "sleep", question="yes")), "Does the dog sleep?", "Schläft der Hund?"),
    (Sentence(Clause(N("you"), "have", N("cat", article="a"), question="yes")), "Do you have a cat?",
     "Hast du eine Katze?"),
    (Sentence(Clause(N("boy"), "be", predicate="tired", tense="past", question="yes")), "Was the boy tired?",
     "War der Junge müde?"),
    (Sentence(Clause(N("who"), "see", N("dog"), tense="past", question="who")), "Who saw the dog?",
     "Wer hat den Hund gesehen?"),
    (Sentence(Clause(N("man"), "buy", N("what"), tense="past", question="what")), "What did the man buy?",
     "Was hat der Mann gekauft?"),
    (Sentence(Clause(N("girl"), "eat", N("what"), progressive=True, question="what")), "What is the girl eating?",
     "Was isst das Mädchen?"),
    (Sentence(Clause(N("cat"), "sleep", place=Place("in", N("house")), question="where")), "Where does the cat sleep?",
     "Wo schläft die Katze?"),
    (Sentence(Clause(N("cat"), "be", place=Place("under", N("table")), question="where")), "Where is the cat?",
     "Wo ist die Katze?"),
    # places: the dative after in, auf, unter, neben, an; in dem -> im, an dem -> am; nicht before the place
    (Sentence(Clause(N("child", plural=True), "play", place=Place("in", N("garden")))),
     "The children play in the garden.", "Die Kinder spielen im Garten."),
    (Sentence(Clause(N("we"), "eat", place=Place("at", N("table")))), "We eat at the table.", "Wir essen am Tisch."),
    (Sentence(Clause(N("dog"), "sleep", place=Place("under", N("bed", article="my")), negated=True)),
     "The dog does not sleep under my bed.", "Der Hund schläft nicht unter meinem Bett."),
    (Sentence(Clause(N("bike"), "be", place=Place("next to", N("car", article="a")))),
     "The bike is next to a car.", "Das Fahrrad ist neben einem Auto."),
    (Sentence(Clause(N("book"), "be", place=Place("in", N("bag", plural=True)))),
     "The book is in the bags.", "Das Buch ist in den Taschen."),
    # double objects and "to": the receiver (dative) first, unless the object is a pronoun
    (Sentence(Clause(N("man"), "give", N("book", article="a"), N("child"), double_object=True)),
     "The man gives the child a book.", "Der Mann gibt dem Kind ein Buch."),
    (Sentence(Clause(N("man"), "give", N("it"), N("child"))), "The man gives it to the child.",
     "Der Mann gibt es dem Kind."),
    (Sentence(Clause(N("I"), "give", N("book"), N("he"), double_object=True)), "I give him the book.",
     "Ich gebe ihm das Buch."),
    (Sentence(Clause(N("she"), "send", N("letter", article="a", negated=True), N("friend", article="her"),
                     negated=True, tense="past")),
     "She did not send a letter to her friend.", "Sie hat ihrem Freund keinen Brief geschickt."),
    # a mass noun has no article and no plural; an adjective before it ends as der would (strong)
    (Sentence(Clause(N("we"), "drink", N("water", article=None, adjective="cold", negated=True), negated=True)),
     "We do not drink cold water.", "Wir trinken kein kaltes Wasser."),
    (Sentence(Clause(N("she"), "drink", N("milk", article=None, adjective="hot"))), "She drinks hot milk.",
     "Sie trinkt heiße Milch."),
    # a weak noun adds -n outside the nominative; an adjective in -er or -e drops its e before an ending
    (Sentence(Clause(N("dog"), "see", N("boy"))), "The dog sees the boy.", "Der Hund sieht den Jungen."),
    (Sentence(Clause(N("I"), "help", N("student"))), "I help the student.", "Ich helfe dem Studenten."),
    (Sentence(Clause(N("he"), "buy", N("car", article="a", adjective="expensive"))), "He buys an expensive car.",
     "Er kauft ein teures Auto."),
    (Sentence(Clause(N("dog", adjective="tired"), "sleep")), "The tired dog sleeps.", "Der müde Hund schläft."),
]


@pytest.mark.parametrize("sentence, english, german_sentence", HAND_WRITTEN)
def test_hand_written_sentences(sentence, english, german_sentence):
    assert both(sentence) == (english, german_sentence)


def drawn(n, seed=0, force=None):
    rng = np.random.default_rng(seed)
    return [draws.draw_sentence(rng, force) for _ in range(n)]


def clauses(sentence):
    return [clause for clause in (sentence.main, sentence.second) if clause is not None]


def test_same_seed_same_sentences():
    assert drawn(200, seed=4) == drawn(200, seed=4) != drawn(200, seed=5)


def test_things_do_not_act_and_people_do_what_only_people_do():
    for sentence in drawn(3000):
        for clause in clauses(sentence):
            subject = clause.subject.noun
            if clause.verb == "be" or subject in ("who", "it") or subject in lexicon.PRONOUNS:
                continue
            kinds = set(nouns.NOUNS[subject].kinds)
            assert kinds & set(verbs.SUBJECTS.get(clause.verb, "PA")), (subject, clause.verb)
            if clause.object is not None and clause.object.noun in nouns.NOUNS:
                assert set(nouns.NOUNS[clause.object.noun].kinds) & set(verbs.OBJECTS[clause.verb]), \
                    (clause.verb, clause.object.noun)


def test_no_person_is_described_by_a_colour():
    colours = {"red", "black", "white", "blue", "green", "brown", "yellow"}
    for sentence in drawn(3000, seed=1):
        for clause in clauses(sentence):
            phrases = [clause.subject, clause.object, clause.receiver, clause.place and clause.place.where]
            for phrase in filter(None, phrases):
                if phrase.noun in nouns.PEOPLE:
                    assert phrase.adjective not in colours
            person = clause.subject.noun in nouns.PEOPLE or clause.subject.noun in draws.SUBJECT_PRONOUNS
            if clause.predicate and person:
                assert clause.predicate not in colours
    assert not {"black", "white", "brown"} & set(nouns.adjectives_for("man"))


def test_a_place_fits_its_preposition():
    for sentence in drawn(2000, seed=2):
        for clause in clauses(sentence):
            if clause.place is not None:
                assert clause.place.where.noun in nouns.PLACES[clause.place.preposition]


def test_drawn_sentences_show_every_construction():
    sentences = drawn(3000, seed=3)
    seen = {kind: any(test(c) for s in sentences for c in clauses(s)) for kind, test in {
        "perfect": lambda c: c.tense == "past" and c.verb not in verbs.PRETERITE,
        "progressive": lambda c: c.progressive, "place": lambda c: c.place is not None,
        "double object": lambda c: c.double_object, "be": lambda c: c.verb == "be",
        "kein": lambda c: c.object is not None and c.object.negated,
        "pronoun object": lambda c: c.object is not None and c.object.noun in lexicon.PRONOUNS,
        "possessive": lambda c: c.subject.article in lexicon.POSSESSIVES,
        **{f"{q} question": (lambda q: lambda c: c.question == q)(q) for q in ("yes", "who", "what", "where")}}.items()}
    assert all(seen.values()), seen


def test_vocabulary_listing_by_part_of_speech():
    parts = german.english_parts_of_speech()
    assert {"nouns", "verbs", "adjectives", "pronouns", "prepositions", "question words", "numbers"} <= set(parts)
    assert all(words == sorted(words) for words in parts.values())
    assert {"cat", "cats", "mat", "children"} <= set(parts["nouns"])
    assert {"sit", "sat", "sits", "sitting"} <= set(parts["verbs"])
    assert {"i", "me", "you", "him"} <= set(parts["pronouns"])
    assert german.english_vocabulary() == sorted({w for words in parts.values() for w in words})
    assert len(nouns.NOUNS) >= 90 and sum(map(len, verbs.VERB_TABLES.values())) >= 50


def test_every_drawn_word_is_in_the_vocabularies():
    english, pieces = set(german.english_vocabulary()), set(german.german_vocabulary())
    for force in (None, 0, 1, 2, 3, 4):
        for sentence in drawn(400, seed=6, force=force):
            words = " ".join(german.english_words(sentence)).lower().replace("-", " ").replace("?", "").split()
            assert set(words) <= english
            assert set(german.german_pieces(sentence)) <= pieces


@pytest.mark.parametrize("english, german_sentence", [
    ("the cat sat on the mat", "Die Katze hat auf der Matte gesessen."),
    ("i love you", "Ich liebe dich."),
    ("the woman believes that the man does not sleep", "Die Frau glaubt, dass der Mann nicht schläft."),
    ("the teacher gives the children a book", "Der Lehrer gibt den Kindern ein Buch."),
    ("where did the dog sleep", "Wo hat der Hund geschlafen?"),
    ("this is not a book", "Das ist kein Buch."),
    ("the man says that forty two dogs are sleeping", "Der Mann sagt, dass zweiundvierzig Hunde schlafen."),
])
def test_parse_finds_the_grammars_own_translation(english, german_sentence):
    assert german.german_text(parse.german_of(english.split())) == german_sentence


@pytest.mark.parametrize("english", ["the man has one book", "the dog sleeps and the cat sleeps", "sleeps the dog",
                                     "the the dog sleeps", "the dog"])
def test_parse_refuses_what_the_grammar_cannot_say(english):
    assert parse.german_of(english.split()) is None


def test_parse_reads_back_what_the_grammar_draws():
    for sentence in drawn(40, seed=8):
        words = " ".join(german.english_words(sentence)).lower().replace("-", " ").replace(" ?", "").split()
        assert parse.german_of(words) == german.german_pieces(sentence)
