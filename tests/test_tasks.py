"""Every task through the one training loop and the command line: GPT on addition and text, BERT on mlm and classify."""
import json

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import mlm, tasks, text
from tinytransformer.__main__ import main
from tinytransformer.train import train

TINY = dict(d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.0)
SHORT = dict(batch_size=8, steps=6, eval_every=3, progress=False)


@pytest.fixture(scope="module")
def small_tasks():
    return {"addition": tasks.AdditionTask(digits=2, n_held_out=20),
            "text": tasks.TextTask(seq_len=16),
            "mlm": tasks.MaskedLMTask(k_max=4, n_symbols=5, eval_size=20),
            "classify": tasks.ClassifyTask(k_max=4, n_symbols=5, n_labelled=32, eval_size=20)}


@pytest.mark.parametrize("name, model_class", [("addition", "GPT"), ("text", "GPT"), ("mlm", "BERT"),
                                               ("classify", "BERT")])
def test_each_task_trains_its_model_in_the_one_loop(small_tasks, name, model_class):
    task = small_tasks[name]
    first = train(task.config(**TINY), task, seed=2, **SHORT)
    again = train(task.config(**TINY), task, seed=2, **SHORT)
    assert type(first.model).__name__ == model_class == tasks.MODEL_NAMES[name]
    assert first.losses == again.losses and len(first.losses) == 6         # same seed, same losses
    assert [step for step, _ in first.eval_history] == [3, 6]
    if task.exact:
        assert 0 <= first.exact_match <= 1 and first.held_out_loss is None
    else:
        assert first.exact_match is None and first.held_out_loss == first.eval_history[-1][1] > 0
        assert first.reached_target_at_step is None
    json.dumps(first.summary())


def test_a_language_model_run_lowers_the_held_out_loss(small_tasks):
    task = small_tasks["text"]
    result = train(task.config(**TINY), task, batch_size=16, steps=60, eval_every=30, progress=False)
    (_, first), (_, last) = result.eval_history
    assert last < first


def test_train_refuses_a_config_or_model_that_does_not_fit_the_task(small_tasks):
    addition_task = small_tasks["addition"]
    with pytest.raises(ValueError, match="train: the config .* has no room for the addition task"):
        train(tt.TransformerConfig(vocab_size=15, max_len=5), addition_task, progress=False)
    with pytest.raises(ValueError, match="train: the addition task trains a GPT, got a BERT"):
        train(None, addition_task, model=tt.nn.BERT(small_tasks["mlm"].config(**TINY)), progress=False)
    with pytest.raises(ValueError, match="train: the classify task needs a config with n_classes=2"):
        train(small_tasks["mlm"].config(**TINY), small_tasks["classify"], progress=False)
    with pytest.raises(ValueError, match="a task by name is 'copy' or 'reverse'"):
        train(small_tasks["mlm"].config(**TINY), "mlm", progress=False)


def test_fine_tuning_starts_from_the_pretrained_weights_and_a_new_head(small_tasks):
    pretrained = train(small_tasks["mlm"].config(**TINY), small_tasks["mlm"], seed=0, **SHORT).model
    classifier = mlm.classifier_from(pretrained, 2, rng=0)
    mine = dict(pretrained.named_parameters())
    for name, param in classifier.named_parameters():
        if name.startswith("classifier."):
            assert name not in mine
        else:
            np.testing.assert_array_equal(param.data, mine[name].data)
    assert mlm.transfer_weights(pretrained, tt.nn.BERT(classifier.config, rng=1)) == \
        [name for name, _ in classifier.named_parameters() if name.startswith("classifier.")]
    result = train(None, small_tasks["classify"], model=classifier, seed=0, **SHORT)
    assert result.model is classifier


def test_classify_held_out_sequences_are_not_among_the_labelled():
    task = tasks.ClassifyTask(k_max=3, n_symbols=6, n_labelled=500, eval_size=200, data_seed=0)  # 360 in all
    held_out = {row.tobytes() for row in task.eval_set.ids}
    assert not any(row.tobytes() in held_out for row in task.labelled.ids)
    assert 0 < len(task.labelled.ids) < 500                    # with so few sequences some were dropped
    with pytest.raises(ValueError, match="ClassifyTask: every one of the 50 labelled sequences is held out"):
        tasks.ClassifyTask(k_max=3, n_symbols=3, n_labelled=50, eval_size=500)   # 36 sequences in all


def test_mlm_and_classify_halves_have_one_length_unless_variable_length_is_asked():
    def half_lengths(ids):                                     # (B, T) -> the set of k over the rows
        return set((np.count_nonzero(ids[:, 1:] != tt.PAD, axis=1) // 2).tolist())

    assert half_lengths(tasks.ClassifyTask(k_max=5, n_labelled=200, eval_size=200).eval_set.ids) == {5}
    assert half_lengths(tasks.MaskedLMTask(k_max=5, eval_size=200).eval_set.ids) == {5}   # corruption keeps PAD
    assert half_lengths(tasks.ClassifyTask(k_max=5, variable_length=True, n_labelled=200,
                                           eval_size=200).eval_set.ids) == {3, 4, 5}
    assert half_lengths(tasks.MaskedLMTask(k_max=5, variable_length=True, eval_size=200).eval_set.ids) == {3, 4, 5}


def test_text_generation_goes_past_the_models_max_len(small_tasks):
    task = small_tasks["text"]
    model = tt.nn.GPT(task.config(**TINY), rng=0)
    sample = text.generate(model, task.corpus, "The", 40, rng=0)     # max_len 16: 40 characters need chunks
    assert sample.startswith("The") and len(sample) == 43
    assert sample == text.generate(model, task.corpus, "The", 40, rng=0)
    with pytest.raises(ValueError, match="text.generate: the prompt must have 1 to 8 characters"):
        text.generate(model, task.corpus, "The keeper climbed", 10, rng=0)


def test_make_task_builds_every_task_by_name():
    for name in tasks.NAMES:
        if name != "text":
            assert tasks.make_task(name, seq_len=4, vocab=5, digits=1, labelled=16, eval_size=10).name == name
    with pytest.raises(ValueError, match="make_task: name must be one of"):
        tasks.make_task("sort")


CLI_TINY = ["--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16", "--batch-size", "8",
            "--steps", "4", "--eval-every", "2"]


@pytest.mark.parametrize("name, extra, model_class", [
    ("addition", ["--digits", "1"], tt.nn.GPT), ("text", ["--seq-len", "16"], tt.nn.GPT),
    ("mlm", ["--seq-len", "3", "--vocab", "4"], tt.nn.BERT),
    ("classify", ["--labelled", "16"], tt.nn.BERT)])
def test_command_line_trains_every_task(tmp_path, capsys, name, extra, model_class):
    paths = {kind: tmp_path / f"run.{kind}" for kind in ("json", "npz")}
    status = main(["train", "--task", name, *CLI_TINY, *extra, "--json", str(paths["json"]),
                   "--save", str(paths["npz"])])
    out = capsys.readouterr()
    result = json.loads(paths["json"].read_text())
    assert result["task"] == name and result["steps"] == len(result["losses"]) == 4
    assert "step 4/4" in out.err
    if name in ("addition", "classify"):                     # an exact answer: a target not reached in 4 steps
        assert result["exact_match"] < 0.99 and result["reached_target_at_step"] is None and status == 1
        assert "held-out exact match" in out.out
    else:                                                    # no target: the held-out loss, status 0
        assert result["exact_match"] is None and result["held_out_loss"] > 0 and status == 0
        assert "held-out loss" in out.out
    assert type(tt.load_checkpoint(paths["npz"])) is model_class


@pytest.mark.parametrize("name, extra, model_name", [
    ("addition", ["--digits", "1"], "GPT"), ("mlm", ["--seq-len", "3", "--vocab", "4"], "BERT"),
    ("classify", ["--labelled", "16"], "BERT")])
def test_command_line_profiles_every_model(capsys, name, extra, model_name):
    status = main(["train", "--task", name, "--profile", "--profile-steps", "2", *CLI_TINY, *extra])
    out = capsys.readouterr().out
    assert status == 0 and f"{model_name}, d_model 16" in out
    assert "held-out exact match" not in out and "held-out loss" not in out      # profiles instead of training
    ops_timed = {line.split()[0] for line in out.splitlines()[3:] if line and not line.startswith("-")}
    assert {"attention", "layer_norm", "embedding", "cross_entropy"} <= ops_timed


def test_command_line_fine_tunes_a_pretrained_checkpoint(tmp_path, capsys):
    path = tmp_path / "mlm.npz"
    main(["train", "--task", "mlm", *CLI_TINY, "--save", str(path)])
    status = main(["train", "--task", "classify", "--labelled", "16",
                   "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--target-accuracy", "0",
                   "--pretrained", str(path)])
    out = capsys.readouterr().out
    assert status == 0 and f"from {path}" in out and "d_model 16" in out     # sizes from the checkpoint
    with pytest.raises(SystemExit, match="--pretrained is for --task classify"):
        main(["train", "--task", "mlm", "--pretrained", str(path)])


def test_command_line_plot_of_a_gpt_task(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "run.png"
    main(["train", "--task", "addition", "--digits", "1", *CLI_TINY, "--plot", str(path)])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_help_lists_the_three_models_and_every_task(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert all(model in top for model in ("Transformer", "GPT", "BERT"))
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for name in tasks.NAMES:
        assert f"{name} ({tasks.MODEL_NAMES[name]})" in help_text
    assert "at most this many steps (default: copy/reverse/" in help_text        # per-task defaults are shown
