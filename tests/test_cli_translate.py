"""cli/translate.py: `python -m tinytransformer translate`, on a model `train --task translate` saved."""
import io
import json

import pytest

from tinytransformer.__main__ import main
from tinytransformer.cli.translate import closest_words, edit_distance, model_words, sentences_of
from tinytransformer.tasks.translation import COMPOSITIONAL_KINDS, VOCABULARY, TranslationTask

SMALL = ["--d-model", "32", "--d-ff", "64", "--layers", "1", "--steps", "150", "--eval-every", "0"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A small translate model trained and saved by the command line, with its --json report."""
    folder = tmp_path_factory.mktemp("translate")
    model, report = folder / "model.npz", folder / "run.json"
    status = main(["train", "--task", "translate", *SMALL, "--save", str(model), "--json", str(report)])
    assert status == 1                                         # 150 steps are far from the target
    return model, json.loads(report.read_text())


@pytest.mark.slow
def test_json_holds_bleu_chrf_exact_match_and_examples(trained):
    _, report = trained
    assert 0 < report["bleu"] < 100 and 0 < report["chrf"] < 100 and 0 <= report["exact_match"] < 1
    assert report["test_size"] == 500 and 0 <= report["test_exact_match"] < 1    # BLEU and chrF: the test's too
    assert set(report["compositional_bleu"]) == set(COMPOSITIONAL_KINDS)
    held_out = TranslationTask(n_compositional=1).held_out
    for example, source, reference in zip(report["examples"], held_out.english, held_out.german):
        assert example["source"] == source and example["reference"] == reference


def printed(example):
    """A held-out example of the training report as translate prints it: the model's German, and the grammar's
    (the example's reference) beside it where the two differ."""
    if example["output"] == example["reference"]:
        return example["output"]
    return f"{example['output']}    [the grammar: {example['reference']}]"


def test_translate_gives_the_training_reports_output(trained, capsys):
    model, report = trained
    capsys.readouterr()
    examples = report["examples"][:3]
    assert main(["translate", "--load", str(model), *(e["source"] for e in examples)]) == 0
    assert capsys.readouterr().out.splitlines() == [printed(e) for e in examples]
    assert main(["translate", "--load", str(model), "--no-check", *(e["source"] for e in examples)]) == 0
    assert capsys.readouterr().out.splitlines() == [e["output"] for e in examples]


def test_translate_reads_standard_input_and_beam_search(trained, capsys, monkeypatch):
    model, report = trained
    sources = [e["source"] for e in report["examples"][:2]]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(sources) + "\n"))
    capsys.readouterr()
    assert main(["translate", "--load", str(model)]) == 0
    assert capsys.readouterr().out.splitlines() == [printed(e) for e in report["examples"][:2]]
    assert main(["translate", "--load", str(model), "--beam", "1", sources[0]]) == 0      # width 1 is greedy
    assert capsys.readouterr().out.splitlines() == [printed(report["examples"][0])]
    assert main(["translate", "--load", str(model), "--beam", "3", *sources]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


@pytest.mark.parametrize("arguments, message", [
    (["--beam", "0", "The dog sleeps."], "--beam must be a width >= 1 (1 is greedy), got 0"),
    (["The purple dog sleeps."], "sentence 1: 'purple' (no known word is close) is not in the vocabulary of "
                                 f"{len(VOCABULARY.english)} English words (translate --words lists them)"),
    (["The dgo sleeps."], "sentence 1: 'dgo' (closest: dog"),
    (["The dgo sleps, the kat."], "sentence 1: " + ", ".join(f"{word!r} ({closest_words(word, VOCABULARY.english)})"
                                                             for word in ("dgo", "sleps", "kat"))
     + " are not in the vocabulary"),
    (["", " , . !"], "sentence 1: the sentence is empty; give an English sentence such as 'The old dog sees the "
                     "small cat.' (and 1 more cannot be translated)"),
    (["The purple dog. The dgo sleeps."], "argument 1, sentence 1: 'purple' (no known word is close) is not in the "
                                          "vocabulary"),
])
def test_bad_input_gets_one_line_before_any_work(arguments, message, tmp_path, capsys):
    missing = tmp_path / "never-read.npz"                        # never opened: the sentences fail first
    assert main(["translate", "--load", str(missing), *arguments]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_checkpoint_of_another_task_or_none_gets_one_line(tmp_path, capsys):
    other = tmp_path / "reverse.npz"
    main(["train", "--task", "reverse", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16",
          "--steps", "2", "--eval-every", "0", "--save", str(other)])
    capsys.readouterr()
    assert main(["translate", "--load", str(other), "The dog sleeps."]) == 2
    err = capsys.readouterr().err
    assert "a Transformer with vocab_size 13 and max_len 11 is not a model of the translate task's generated " \
        "pairs" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["translate", "--load", str(tmp_path / "missing.npz"), "The dog sleeps."]) == 2
    assert "no checkpoint file at" in capsys.readouterr().err


def test_one_bad_sentence_among_several_stops_only_itself(trained, capsys):
    model, report = trained
    sources, outputs = [e["source"] for e in report["examples"][:2]], [printed(e) for e in report["examples"][:2]]
    capsys.readouterr()
    assert main(["translate", "--load", str(model), sources[0], "The purple dog sleeps.", sources[1], ""]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [outputs[0], "", outputs[1], ""]                  # aligned with the arguments
    assert err.splitlines() == [
        "python -m tinytransformer translate: sentence 2: 'purple' (no known word is close) is not in the "
        f"vocabulary of {len(VOCABULARY.english)} English words (translate --words lists them)",
        "python -m tinytransformer translate: sentence 4: the sentence is empty; give an English sentence such as "
        "'The old dog sees the small cat.'"]


def test_two_sentences_on_one_line_are_translated_each_on_its_own(trained, capsys, monkeypatch):
    model, report = trained
    sources, outputs = [e["source"] for e in report["examples"][:2]], [printed(e) for e in report["examples"][:2]]
    capsys.readouterr()
    assert main(["translate", "--load", str(model), f"{sources[0]} {sources[1]}"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{outputs[0]}  {outputs[1]}"]
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{sources[0]}  The dgo sleeps! {sources[1]}\n{sources[1]}\n"))
    assert main(["translate", "--load", str(model)]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"{outputs[0]}  {outputs[1]}", outputs[1]]       # only the bad sentence is left out
    assert err.splitlines() == ["python -m tinytransformer translate: line 1 of standard input, sentence 2: 'dgo' "
                                f"({closest_words('dgo', VOCABULARY.english)}) is not in the vocabulary of "
                                f"{len(VOCABULARY.english)} English words (translate --words lists them)"]


def test_sentences_are_split_after_a_full_stop_an_exclamation_or_a_question_mark():
    assert sentences_of("The dog sleeps. The cat eats!  Does the cat eat? no") == [
        "The dog sleeps.", "The cat eats!", "Does the cat eat?", "no"]
    assert sentences_of("The dog has forty-two balls.") == ["The dog has forty-two balls."]
    assert sentences_of("The dog, the cat.") == ["The dog, the cat."] and sentences_of("3.5 dogs") == ["3.5 dogs"]
    assert sentences_of(" , . !") == [" , . !"] and sentences_of("") == [""]     # no sentence: said empty
    assert sentences_of("The dog sleeps. . ") == ["The dog sleeps."]


def test_a_sentence_longer_than_the_model_reads_gets_one_line(trained, capsys):
    model, _ = trained
    capsys.readouterr()
    assert main(["translate", "--load", str(model), "the dog sees the cat and " * 6 + "the dog"]) == 2
    err = capsys.readouterr().err
    assert "'and' (" in err and "is not in the vocabulary" in err      # the words are checked first
    assert main(["translate", "--load", str(model), "The old dog sees the old cat " * 5]) == 2
    assert "a sentence of 35 words is longer than the model reads (max_len 31)" in capsys.readouterr().err


def test_punctuation_is_split_off_before_the_words_are_looked_up(trained, capsys):
    model, report = trained
    source, output = report["examples"][0]["source"], printed(report["examples"][0])
    words = source.rstrip(".").split()
    punctuated = f'"{words[0]}, {" ".join(words[1:-1])}; ({words[-1]})!"'      # "The, old cat ...; (apple)!"
    capsys.readouterr()
    assert main(["translate", "--load", str(model), source, punctuated]) == 0
    assert capsys.readouterr().out.splitlines() == [output, output]


def test_the_words_the_model_reads():
    assert model_words("The dog, the cat.", None) == ("the dog the cat", None)
    assert model_words('"The dog" doesn\'t sleep; (now)!', None) == ("the dog does not sleep now", None)
    assert model_words("The dog doesn\u2019t sleep.", None) == ("the dog does not sleep", None)
    assert model_words("The dog has forty-two balls.", None) == ("the dog has forty two balls", None)
    assert model_words("The dog has forty-two balls.", 5) == (
        None, "a sentence of 6 words is longer than the model reads (max_len 5)")


def test_edit_distance_and_the_closest_words():
    assert edit_distance("kitten", "sitting") == 3 and edit_distance("", "abc") == edit_distance("abc", "") == 3
    assert edit_distance("dgo", "dog") == 1 and edit_distance("ab", "ba") == 1 and edit_distance("dog", "dog") == 0
    assert edit_distance("ca", "abc") == 3                        # a swap is of two neighbours, never edited again
    known = {"dog", "do", "dogs", "cat", "cats", "children"}
    assert closest_words("dgo", known) == "closest: dog, do"      # distance 1 each, the same length first
    assert closest_words("catz", known) == "closest: cats, cat"   # a third of 4 letters: 1 edit at most
    assert closest_words("catsss", known) == "closest: cats"      # 2 edits for 6 letters: not "cat" (3)
    assert closest_words("purple", known) == "" and closest_words("childs", known) == ""


def test_a_bad_line_of_standard_input_is_named_and_the_rest_translated(trained, capsys, monkeypatch):
    model, report = trained
    sources = [e["source"] for e in report["examples"][:3]]
    lines = [sources[0], "The dgo sleeps.", sources[1], "", sources[2]]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    capsys.readouterr()
    assert main(["translate", "--load", str(model)]) == 1                    # some lines failed
    out, err = capsys.readouterr()
    assert out.splitlines() == [printed(report["examples"][0]), "", printed(report["examples"][1]), "",
                                printed(report["examples"][2])]                # aligned with the input
    assert err.splitlines() == [
        "python -m tinytransformer translate: line 2 of standard input: 'dgo' "
        f"({closest_words('dgo', VOCABULARY.english)}) is not in the vocabulary of {len(VOCABULARY.english)} "
        "English words (translate --words lists them)",
        "python -m tinytransformer translate: line 4 of standard input: the sentence is empty; give an English "
        "sentence such as 'The old dog sees the small cat.'"]


def test_words_lists_the_vocabulary_by_part_of_speech_without_a_model(capsys):
    assert main(["translate", "--words"]) == 0
    *lines, phrases = capsys.readouterr().out.splitlines()
    parts = {line.split(" (")[0]: line.split(": ", 1)[1].split() for line in lines}
    assert {"nouns", "verbs", "adjectives", "pronouns", "prepositions", "question words"} <= set(parts)
    assert "mat" in parts["nouns"] and "sat" in parts["verbs"] and parts["nouns"] == sorted(parts["nouns"])
    assert "one" not in parts["numbers"] and "two" in parts["numbers"]     # "I have one dog" is not the grammar's
    assert parts["prepositions"] == ["at", "in", "on", "under"]             # nor "to the park", nor "with my friend"
    assert phrases.startswith("only in some phrases (4): one (in twenty-one to ninety-one; one thing alone is 'a'")
    assert all(f"{word} (" in phrases for word in ("one", "next", "to", "with"))
    listed = {word for words in parts.values() for word in words}
    assert listed | {"one", "next", "to", "with"} == VOCABULARY.english and not listed & {"one", "next", "to", "with"}


@pytest.mark.parametrize("arguments, given", [
    (["The dog sleeps.", "The cat."], "SENTENCE arguments"), (["--load", "nowhere.npz"], "--load"),
    (["--beam", "3", "--no-check"], "--beam, --no-check")])
def test_words_refuses_what_it_would_ignore(arguments, given, capsys):
    assert main(["translate", "--words", *arguments]) == 2
    err = capsys.readouterr().err
    assert f"--words lists the words the model knows and stops: it takes no sentence, --load, --beam or " \
        f"--no-check, got {given}" in one_line(err)


@pytest.mark.parametrize("options", [[], ["--beam", "2"]])
def test_the_grammars_german_stands_beside_the_models_unless_no_check(trained, capsys, monkeypatch, options):
    model, _ = trained                                # 150 steps: the model is often wrong
    sentences = ["The cat sat on the mat.", "The dog the cat."]      # the grammar says the first, not the second
    capsys.readouterr()
    assert main(["translate", "--load", str(model), *options, *sentences]) == 0
    checked = capsys.readouterr().out.splitlines()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(sentences) + "\n"))
    assert main(["translate", "--load", str(model), *options]) == 0
    assert capsys.readouterr().out.splitlines() == checked                   # standard input: the same
    assert main(["translate", "--load", str(model), *options, "--no-check", *sentences]) == 0
    plain = capsys.readouterr().out.splitlines()
    grammar = "Die Katze hat auf der Matte gesessen."
    assert plain[0] != grammar and "[" not in plain[0]                     # wrong, and --no-check does not say so
    assert checked[0] == f"{plain[0]}    [the grammar: {grammar}]"
    assert checked[1] == plain[1] and plain[1].endswith(f"    {OUTSIDE}")    # the warning stays with --no-check


OUTSIDE = "[not checked: outside the grammar the model was taught]"


@pytest.mark.parametrize("options", [[], ["--no-check"], ["--beam", "3"], ["--beam", "2", "--no-check"]])
def test_german_the_grammar_cannot_check_is_said_so_in_every_mode(trained, capsys, monkeypatch, options):
    model, _ = trained
    outside = ["The dog the cat.", "I play the guitar.", "The women are teachers.", "I am a teacher."]
    capsys.readouterr()
    assert main(["translate", "--load", str(model), *options, *outside]) == 0
    from_arguments = capsys.readouterr().out.splitlines()
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(outside) + "\n"))
    assert main(["translate", "--load", str(model), *options]) == 0
    assert capsys.readouterr().out.splitlines() == from_arguments and len(from_arguments) == len(outside)
    assert all(line.endswith(f"    {OUTSIDE}") and line.count("[") == 1 for line in from_arguments)
    assert main(["translate", "--load", str(model), *options, "The dog sleeps. The dog the cat."]) == 0
    first, second = capsys.readouterr().out.split("  ", 1)
    assert "[not checked" not in first and ("[" not in first or "--no-check" not in options)   # the grammar checks it
    assert second.strip().endswith(OUTSIDE)


def test_the_warning_says_what_may_have_put_a_sentence_outside_the_grammar(trained, capsys):
    model, _ = trained
    capsys.readouterr()
    assert main(["translate", "--load", str(model), "The boy is sleeping now.", "I go to school!"]) == 0
    now, school = capsys.readouterr().out.splitlines()
    assert now.endswith("    [not checked: outside the grammar the model was taught (it says 'now' first: 'now the "
                        "boy is sleeping')]")
    assert school.endswith("    [not checked: outside the grammar the model was taught ('to' only in 'next to', and "
                           "after give, show, bring, send: gives the ball to the child)]")


def test_the_python_api_says_which_german_was_checked(trained):
    from tinytransformer.checkpoint import load_checkpoint
    from tinytransformer.tasks.translation import Checked, translate, translate_checked
    model = load_checkpoint(str(trained[0]))
    sentences = ["The cat sat on the mat.", "The dog the cat."]
    checked = translate_checked(model, sentences, beam=2)
    assert [c.german for c in checked] == translate(model, sentences, beam=2)
    assert checked[0].grammar == "Die Katze hat auf der Matte gesessen." and checked[0].outside is None
    assert checked[1].grammar is None and checked[1].outside == "outside the grammar the model was taught"
    assert str(checked[1]) == f"{checked[1].german}    {OUTSIDE}"
    assert Checked("Der Hund.", "Der Hund schläft.", None).line() == "Der Hund.    [the grammar: Der Hund schläft.]"
    assert Checked("Der Hund.", "Der Hund schläft.", None).line(compare=False) == "Der Hund."
    assert Checked("Der Hund schläft.", "Der Hund schläft.", None).line() == "Der Hund schläft."


def test_a_missing_load_gets_one_line(capsys):
    assert main(["translate", "The dog sleeps."]) == 2
    assert "--load MODEL.npz is required" in capsys.readouterr().err


def one_line(err):
    """The one line of err (a traceback or a second line fails the test)."""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


# ---- untrusted input: bounded in time, refused in one line

def test_a_long_unknown_word_costs_no_edit_distance_and_is_named_short(monkeypatch):
    from tinytransformer.cli import translate
    compared = []
    monkeypatch.setattr(translate, "edit_distance", lambda a, b: compared.append((a, b)) or 99)
    translate.suggestions.cache_clear()
    words, problem = model_words("The " + "x" * 1_000_000 + " sleeps.", None)
    assert words is None and compared == []              # no known word is within a third of its length
    assert problem.startswith(f"{'x' * 40!r}... (1,000,000 characters) (no known word is close) is not in") \
        and len(problem) < 200


def test_an_unknown_word_is_searched_for_once_and_few_are_named(monkeypatch):
    from tinytransformer.cli import translate
    searched = []
    real = translate.closest_words
    monkeypatch.setattr(translate, "closest_words", lambda word, known: searched.append(word) or real(word, known))
    translate.suggestions.cache_clear()
    for _ in range(1000):                                 # 1000 lines of standard input with the same unknown word
        assert model_words("The dgo sleeps.", None)[0] is None
    assert searched == ["dgo"]
    _, problem = model_words(" ".join(f"zz{k}" for k in range(1000)), None)
    assert problem.startswith("'zz0' (no known word is close), 'zz1'") and " and 995 more words are not in " in problem
    assert searched == ["dgo", "zz0", "zz1", "zz2", "zz3", "zz4"]          # only the words named


def test_a_checkpoint_of_another_family_or_a_crafted_one_gets_one_line(tmp_path, capsys):
    import zipfile

    import numpy as np

    from tinytransformer import nn
    from tinytransformer.checkpoint import save_checkpoint
    vision = tmp_path / "digits.npz"
    save_checkpoint(nn.VisionTransformer(nn.VisionConfig(d_model=8, n_heads=2, n_layers=1, d_ff=8, max_len=5,
                                                         patch_pixels=4, n_classes=3)), vision)
    assert main(["translate", "--load", str(vision), "The dog sleeps."]) == 2
    assert "a VisionTransformer is not a model of the translate task's generated pairs" in one_line(
        capsys.readouterr().err)
    nul = tmp_path / "nul.npz"                       # a Transformer whose saved name ends in a NUL
    save_checkpoint(nn.Transformer(nn.TransformerConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=1, d_ff=8)), nul)
    with zipfile.ZipFile(nul) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    buffer = io.BytesIO()
    np.save(buffer, np.array("Transformer\0"))
    members["model.npy"] = buffer.getvalue()
    with zipfile.ZipFile(nul, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    assert main(["translate", "--load", str(nul), "The dog sleeps."]) == 2
    assert "is damaged: its model name 'Transformer' is followed by NUL characters" in one_line(
        capsys.readouterr().err)
