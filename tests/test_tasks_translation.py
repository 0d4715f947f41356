"""tasks/german.py, tasks/translation.py and tasks/ding.py: German grammar on hand-written examples, the
data, the task, and the Ding dictionary's real sentences where Debian installs them."""
import pathlib

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.tasks import ding, german, make_task, translation
from tinytransformer.tasks.german import Clause, NounPhrase, Sentence
from tinytransformer.vocabulary import BOS, EOS, PAD


def both(sentence):
    return german.english_text(german.english_words(sentence)), german.german_text(german.german_pieces(sentence))


def the(noun, **options):
    return NounPhrase(noun, **options)


# (what the sentence says, its English, its German): each line a fact of German grammar
HAND_WRITTEN = [
    # gender: der, die, das in the nominative
    (Sentence(Clause(the("dog"), "sleep")), "The dog sleeps.", "Der Hund schläft."),
    (Sentence(Clause(the("cat"), "sleep")), "The cat sleeps.", "Die Katze schläft."),
    (Sentence(Clause(the("girl"), "sleep")), "The girl sleeps.", "Das Mädchen schläft."),
    # the accusative changes der to den only; die and das stay
    (Sentence(Clause(the("cat"), "see", the("dog"))), "The cat sees the dog.", "Die Katze sieht den Hund."),
    (Sentence(Clause(the("dog"), "see", the("cat"))), "The dog sees the cat.", "Der Hund sieht die Katze."),
    (Sentence(Clause(the("dog"), "see", the("book"))), "The dog sees the book.", "Der Hund sieht das Buch."),
    # the dative: dem, der, dem, den (+ n on the plural noun); the receiver before the object
    (Sentence(Clause(the("man"), "give", the("ball"), the("child"))),
     "The man gives the ball to the child.", "Der Mann gibt dem Kind den Ball."),
    (Sentence(Clause(the("man"), "show", the("book"), the("woman"))),
     "The man shows the book to the woman.", "Der Mann zeigt der Frau das Buch."),
    (Sentence(Clause(the("dog"), "play", the("child", plural=True))),
     "The dog plays with the children.", "Der Hund spielt mit den Kindern."),
    (Sentence(Clause(the("bird"), "play", the("car", plural=True))),     # plural in -s: no dative n
     "The bird plays with the cars.", "Der Vogel spielt mit den Autos."),
    # adjective endings: weak after der/die/das, mixed after ein, strong with no article
    (Sentence(Clause(the("dog", adjective="old"), "see", the("cat", adjective="small"))),
     "The old dog sees the small cat.", "Der alte Hund sieht die kleine Katze."),
    (Sentence(Clause(the("cat"), "see", the("dog", adjective="old"))),
     "The cat sees the old dog.", "Die Katze sieht den alten Hund."),
    (Sentence(Clause(the("dog", article="a", adjective="old"), "sleep")), "An old dog sleeps.",
     "Ein alter Hund schläft."),
    (Sentence(Clause(the("child", article="a", adjective="small"), "sleep")), "A small child sleeps.",
     "Ein kleines Kind schläft."),
    (Sentence(Clause(the("woman"), "have", the("dog", article="a", adjective="black"))),
     "The woman has a black dog.", "Die Frau hat einen schwarzen Hund."),
    (Sentence(Clause(the("cat"), "play", the("ball", article="a", adjective="red"))),
     "The cat plays with a red ball.", "Die Katze spielt mit einem roten Ball."),
    (Sentence(Clause(the("dog", plural=True, article=None, adjective="big"), "run")), "Big dogs run.",
     "Große Hunde laufen."),
    (Sentence(Clause(the("dog", plural=True, adjective="big"), "run")), "The big dogs run.",
     "Die großen Hunde laufen."),
    # plural and agreement
    (Sentence(Clause(the("man", plural=True), "buy", the("apple", plural=True, article=None))),
     "The men buy apples.", "Die Männer kaufen Äpfel."),
    (Sentence(Clause(the("child", plural=True), "like", the("flower"))),
     "The children like the flower.", "Die Kinder mögen die Blume."),
    # the verb second: after an adverb, the subject follows the verb
    (Sentence(Clause(the("dog"), "see", the("cat"), adverb="today")),
     "Today the dog sees the cat.", "Heute sieht der Hund die Katze."),
    # the verb last after dass and weil, with a comma before them
    (Sentence(Clause(the("man"), "say"), "that", Clause(the("dog"), "see", the("cat"))),
     "The man says that the dog sees the cat.", "Der Mann sagt, dass der Hund die Katze sieht."),
    (Sentence(Clause(the("cat"), "sleep"), "because", Clause(the("bird", plural=True), "sing")),
     "The cat sleeps because the birds sing.", "Die Katze schläft, weil die Vögel singen."),
    (Sentence(Clause(the("woman"), "know"), "that", Clause(the("man"), "give", the("book"), the("child"))),
     "The woman knows that the man gives the book to the child.",
     "Die Frau weiß, dass der Mann dem Kind das Buch gibt."),
    # negation: nicht after a definite object, before mit, last in a clause; kein for "not a"
    (Sentence(Clause(the("dog"), "see", the("cat"), negated=True)),
     "The dog does not see the cat.", "Der Hund sieht die Katze nicht."),
    (Sentence(Clause(the("dog", plural=True), "sleep", negated=True)),
     "The dogs do not sleep.", "Die Hunde schlafen nicht."),
    (Sentence(Clause(the("dog"), "see", the("cat", article="a", negated=True), negated=True)),
     "The dog does not see a cat.", "Der Hund sieht keine Katze."),
    (Sentence(Clause(the("man"), "buy", the("ball", article="a", negated=True), negated=True)),
     "The man does not buy a ball.", "Der Mann kauft keinen Ball."),
    (Sentence(Clause(the("girl"), "have", the("book", plural=True, article=None, adjective="old", negated=True),
                     negated=True)),
     "The girl does not have old books.", "Das Mädchen hat keine alten Bücher."),
    (Sentence(Clause(the("child"), "play", the("dog"), negated=True)),
     "The child does not play with the dog.", "Das Kind spielt nicht mit dem Hund."),
    (Sentence(Clause(the("man"), "say"), "that", Clause(the("dog"), "see", the("cat"), negated=True)),
     "The man says that the dog does not see the cat.", "Der Mann sagt, dass der Hund die Katze nicht sieht."),
    # numbers: one word, the units before the tens
    (Sentence(Clause(the("man"), "have", the("book", plural=True, article=None, number=42))),
     "The man has forty-two books.", "Der Mann hat zweiundvierzig Bücher."),
    (Sentence(Clause(the("cat", plural=True, article=None, number=21, adjective="young"), "sleep")),
     "Twenty-one young cats sleep.", "Einundzwanzig junge Katzen schlafen."),
    (Sentence(Clause(the("dog"), "play", the("child", plural=True, article=None, number=17, adjective="small"))),
     "The dog plays with seventeen small children.", "Der Hund spielt mit siebzehn kleinen Kindern."),
]


@pytest.mark.parametrize("sentence, english, german_sentence", HAND_WRITTEN)
def test_hand_written_sentences(sentence, english, german_sentence):
    assert both(sentence) == (english, german_sentence)


def test_numbers_equal_num2words():
    num2words = pytest.importorskip("num2words").num2words
    for n in german.NUMBERS:
        assert german.german_text(german.german_number(n)) == num2words(n, lang="de").capitalize() + "."
        assert german.english_number(n) == num2words(n, lang="en")


def test_numbers_outside_two_to_ninety_nine_are_refused():
    for n in (1, 100, 0):
        with pytest.raises(ValueError, match="numbers run from 2 to 99"):
            german.german_number(n)


def test_german_text_glues_number_pieces_and_commas():
    assert german.german_text(["ich", "weiß", ",", "dass", "sieben+", "und+", "dreißig"]) == \
        "Ich weiß, dass siebenunddreißig."
    assert german.german_text(["zwei+"]) == "Zwei."            # a model's unfinished number


def test_every_drawn_sentence_fits_the_vocabulary_and_max_tokens():
    rng = np.random.default_rng(0)
    for force in (None, 0, 1, 2):
        for _ in range(500):
            sentence = translation.draw_sentence(rng, force)
            words, pieces = german.english_words(sentence), german.german_pieces(sentence)
            assert set(translation.english_tokens(german.english_text(words))) <= set(german.english_vocabulary())
            assert set(pieces) <= set(german.german_vocabulary())
            assert max(len(translation.english_tokens(german.english_text(words))), len(pieces)) \
                <= translation.MAX_TOKENS


def test_the_longest_sentence_the_draws_allow_fits_max_tokens():
    """Numbers in the longest places (at most one per clause, none in the first clause of a long sentence)."""
    big = dict(plural=True, article=None, number=77, adjective="young")
    second = Clause(the("teacher", **big), "give", the("ball", adjective="red", article="a", negated=True),
                    the("child", adjective="small", article="my"), negated=True, tense="past")
    sentence = Sentence(Clause(the("woman", adjective="old"), "read", the("book", adjective="black"), negated=True,
                               adverb="today", place=german.Place("next to", the("table", adjective="small"))),
                        "because", second)
    english, pieces = translation.english_tokens(german.english_text(german.english_words(sentence))), \
        german.german_pieces(sentence)
    assert max(len(english), len(pieces)) <= translation.MAX_TOKENS


def test_training_never_draws_what_the_compositional_set_holds():
    rng = np.random.default_rng(1)
    for _ in range(3000):
        sentence = translation.draw_sentence(rng)
        phrases = [p for clause in (sentence.main, sentence.second) if clause
                   for p in (clause.subject, clause.object, clause.receiver) if p]
        assert not any((p.adjective, p.noun) in translation.UNSEEN_PAIRS for p in phrases)
        assert not any(p.number in translation.UNSEEN_NUMBERS for p in phrases)
        assert sentence.second is None or not sentence.second.negated
        assert not (sentence.main.verb in translation.UNSEEN_BRACKET and sentence.main.tense == "past")
        assert not (sentence.main.question == "where" and sentence.main.tense == "past")


def test_training_shows_the_unseen_bracket_verbs_in_the_past_at_the_end_of_a_clause():
    rng = np.random.default_rng(2)
    pieces = [german.german_pieces(translation.draw_sentence(rng)) for _ in range(5000)]
    for participle in ("gewaschen", "geschwommen"):
        assert any(participle in p and p.index(participle) == len(p) - 2 and "," in p for p in pieces)
        assert not any(participle in p and "," not in p for p in pieces)


def test_each_compositional_sentence_shows_its_kind():
    task = translation.TranslationTask(n_held_out=10, n_compositional=30)
    pairs, numbers, negations, brackets, wheres = task.compositional.values()
    unseen_adjectives = [f"{adjective} {noun}" for adjective, noun in translation.UNSEEN_PAIRS]
    assert all(any(a in e.lower() for a in unseen_adjectives) for e in pairs.english)
    assert all(any(german.english_number(n) in e.lower() for n in translation.UNSEEN_NUMBERS)
               for e in numbers.english)
    assert all(" not " in e.split(" that ")[-1].split(" because ")[-1] for e in negations.english)
    assert all(g.split()[-1].rstrip(".") in ("gewaschen", "geschwommen") for g in brackets.german)
    assert all(e.startswith("Where did ") or e.startswith("Where was ") or e.startswith("Where were ")
               for e in wheres.english)


def test_held_out_sentences_are_never_trained_on():
    task = translation.TranslationTask(n_held_out=300)
    assert len(set(task.held_out.english)) == 300
    rng = np.random.default_rng(0)
    held_out_ids = {tuple(row[row != PAD]) for row in task.held_out.batch.src}
    for _ in range(20):
        batch = task.batch(64, rng)
        assert not {tuple(row[row != PAD]) for row in batch.src} & held_out_ids


def test_batch_shapes_and_special_tokens():
    task = translation.TranslationTask(n_held_out=10)
    src, tgt_in, tgt_out = task.batch(8, np.random.default_rng(0))
    assert src.dtype == tgt_in.dtype == tgt_out.dtype == np.int64 and tgt_in.shape == tgt_out.shape
    np.testing.assert_array_equal(tgt_in[:, 0], BOS)
    assert ((tgt_out == EOS).sum(axis=1) == 1).all()
    np.testing.assert_array_equal(np.where(tgt_in[:, 1:] == PAD, PAD, tgt_out[:, :-1]), tgt_in[:, 1:])


def test_same_seed_same_data_and_the_split_seed_changes_the_held_out_set():
    a, b, c = (translation.TranslationTask(n_held_out=20, split_seed=s) for s in (0, 0, 1))
    assert a.held_out.english == b.held_out.english != c.held_out.english
    for x, y in zip(a.batch(16, np.random.default_rng(3)), b.batch(16, np.random.default_rng(3))):
        np.testing.assert_array_equal(x, y)


def test_vocabulary_is_shared_and_round_trips():
    vocabulary = translation.VOCABULARY
    assert vocabulary.tokens[:3] == ["<pad>", "<s>", "</s>"] and len(set(vocabulary.tokens)) == len(vocabulary)
    ids = vocabulary.encode_english("The dog has forty-two balls.")
    assert [vocabulary.tokens[i] for i in ids] == ["the", "dog", "has", "forty", "two", "balls"]
    pieces = ["der", "Hund", "hat", "zwei+", "und+", "vierzig", "Bälle"]
    assert vocabulary.german_text(list(vocabulary.german_ids(pieces)) + [EOS, PAD]) == \
        "Der Hund hat zweiundvierzig Bälle."


def test_unknown_words_and_empty_sentences_get_one_clear_line():
    with pytest.raises(ValueError, match=r"'purple', 'giraffe' are not in the vocabulary; it knows \d+ English"):
        translation.VOCABULARY.encode_english("The purple giraffe sees the purple cat.")
    with pytest.raises(ValueError, match="'42' is not in the vocabulary"):
        translation.VOCABULARY.encode_english("The dog has 42 balls.")
    with pytest.raises(ValueError, match="the sentence is empty"):
        translation.VOCABULARY.encode_english("  . ")


def test_make_task_and_the_model_it_trains():
    task = make_task("translate", n_held_out=5)
    config = task.config()
    assert isinstance(task, translation.TranslationTask) and task.model_class is tt.nn.Transformer
    assert config.vocab_size == len(translation.VOCABULARY) and config.positions == "sinusoidal"
    assert not config.norm_first                                        # the paper's post-LN
    with pytest.raises(ValueError, match="n_held_out must be an integer >= 1"):
        make_task("translate", n_held_out=0)


@pytest.mark.slow
def test_a_short_training_run_is_measured_honestly():
    """A small model trained briefly: BLEU and exact match between 0 and 100, the report and --json agree."""
    task = translation.TranslationTask(n_held_out=50, n_compositional=10)
    result = tt.train.train(task.config(d_model=32, d_ff=64, n_layers=1), task, steps=150, eval_every=0,
                            progress=False)
    measures = task.model_measures(result.model)
    assert 0 < measures["bleu"] < 100 and 0 < measures["chrf"] < 100
    assert measures["exact_match"] == pytest.approx(result.test_exact_match)  # strings and ids agree
    assert result.test_size == 50 and not set(task.validation.english) & set(task.held_out.english)
    outputs = translation.translate(result.model, task.held_out.english)
    assert measures["bleu"] == tt.metrics.bleu(outputs, task.held_out.german)
    example = measures["examples"][0]
    assert example["source"] == task.held_out.english[0] and example["reference"] == task.held_out.german[0]
    assert example["output"] == translation.translate(result.model, [example["source"]])[0]
    assert f"BLEU {measures['bleu']:.1f}" in "\n".join(task.show(result.model))


def test_pairs_must_be_generated_or_ding():
    with pytest.raises(ValueError, match=r"pairs must be one of \('generated', 'ding'\), got 'wmt'"):
        translation.TranslationTask(pairs="wmt")


def test_ding_pairs_absent_get_one_clear_line(tmp_path):
    with pytest.raises(ValueError, match="not installed here"):
        ding.read_pairs(tmp_path / "de-en")


def test_ding_reading_keeps_plain_sentence_pairs(tmp_path):
    path = tmp_path / "de-en"
    path.write_text("# a comment :: not a pair\n"
                    "Hund {m} | Hunde {pl} :: dog | dogs\n"                        # words, not sentences
                    "Der Hund schläft. | Die Hunde schlafen. :: The dog sleeps. | The dogs sleep.\n"
                    "Er sah ihn / sie. :: He saw him.\n"                           # an alternative inside
                    "Das ist gut [ugs.]. :: That is good.\n"                       # a note inside
                    "Der Hund schläft. :: The dog sleeps.\n", encoding="utf-8")   # seen already
    assert ding.read_pairs(path) == [("The dog sleeps.", "Der Hund schläft."),
                                     ("The dogs sleep.", "Die Hunde schlafen.")]


@pytest.mark.skipif(not pathlib.Path(ding.DING_PATH).is_file(), reason="Debian's trans-de-en is not installed")
def test_ding_task_splits_and_encodes_the_installed_dictionary():
    task = translation.TranslationTask(pairs="ding", n_held_out=50)
    english, german_texts, src_rows, tgt_rows = task.corpus.training
    assert not set(zip(english, german_texts)) & set(zip(task.held_out.english, task.held_out.german))
    assert task.vocabulary.german_text(list(tgt_rows[0]) + [EOS]) == german_texts[0]     # BPE round trip
    assert task.room() == {"vocab_size": len(task.vocabulary), "max_len": task.corpus.max_tokens + 1}
    src, tgt_in, tgt_out = task.batch(8, np.random.default_rng(0))
    assert src.shape[0] == 8 and tgt_in.shape == tgt_out.shape and (tgt_in[:, 0] == BOS).all()
    assert task.compositional == {} and "Ding" in task.describe()
