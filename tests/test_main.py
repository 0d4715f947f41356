"""__main__.py: the command line, `python -m tinytransformer train` for every task and its help."""
import contextlib
import json
import pathlib
import re

import pytest

import tinytransformer as tt
from tinytransformer import tasks
from tinytransformer.__main__ import main


TINY_REVERSE = ["--seq-len", "3", "--symbols", "3", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16",
                "--batch-size", "16", "--warmup", "10", "--eval-every", "10", "--seed", "1"]


def test_command_line_train_end_to_end(tmp_path, capsys):
    paths = {name: tmp_path / f"run.{name}" for name in ("json", "npz")}
    status = main(["train", "--task", "reverse", *TINY_REVERSE, "--steps", "20", "--dropout", "0.1",
                   "--json", str(paths["json"]), "--save", str(paths["npz"])])
    out = capsys.readouterr()
    result = json.loads(paths["json"].read_text())
    assert result["reached_target_at_step"] is None and result["exact_match"] < 0.99
    assert status == 1                               # the target was not reached in 20 steps
    assert "validation exact match" in out.out and "predicted" in out.out
    assert 0 <= result["test_exact_match"] <= 1 and result["test_size"] == 1000     # the test split, once
    assert f"test exact match {result['test_exact_match']:.1%} on 1000 sequences, touched once" in out.out
    assert "step 20/20" in out.err                   # the progress line
    assert {"task", "steps", "wall_seconds", "train_seconds", "ms_per_step", "exact_match", "final_loss",
            "reached_target_at_step", "losses"} <= set(result)
    assert result["task"] == "reverse" and len(result["losses"]) == result["steps"] == 20
    assert tt.load_checkpoint(paths["npz"]).config.dropout == 0.1


def test_command_line_exits_0_when_the_target_is_reached(tmp_path, capsys):
    path = tmp_path / "run.json"
    status = main(["train", "--task", "copy", *TINY_REVERSE, "--steps", "20", "--target-accuracy", "0",
                   "--json", str(path)])
    assert status == 0 and json.loads(path.read_text())["reached_target_at_step"] == 10


def test_command_line_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "run.png"
    main(["train", "--task", "reverse", *TINY_REVERSE, "--steps", "10", "--plot", str(path)])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_line_profile_prints_the_time_of_each_op(capsys):
    status = main(["train", "--profile", "--profile-steps", "3", "--seq-len", "3", "--symbols", "3",
                   "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16", "--batch-size", "8"])
    out = capsys.readouterr().out
    assert status == 0 and "exact match" not in out                   # profiles instead of training
    lines = out.splitlines()
    rules = [i for i, line in enumerate(lines) if line == "-" * 70]
    assert len(rules) == 2                                               # under the header, above the totals
    assert lines[rules[0] - 1].split() == "op calls forward ms backward ms total ms share".split()
    rows = {line.split()[0]: line.split()[1:] for line in lines[rules[0] + 1:rules[1]]}
    assert {"linear", "attention", "layer_norm", "embedding", "cross_entropy"} <= set(rows)
    for calls, forward, backward, total, _ in rows.values():
        assert int(calls) >= 1 and float(forward) >= 0 and float(backward) >= 0
        assert float(total) == pytest.approx(float(forward) + float(backward), abs=2e-3)
    assert int(rows["layer_norm"][0]) == 5                               # 2 in the encoder layer, 3 in the decoder's
    assert float(rows["linear"][1]) > 0 and float(rows["linear"][2]) > 0  # forward and backward both timed
    shares = {name: float(row[-1].rstrip("%")) for name, row in rows.items()}
    totals = {line[:20].strip(): line.split()[-1] for line in lines[rules[1] + 1:]}
    all_ops, rest = float(totals["all ops"].rstrip("%")), float(totals["optimiser + Python"].rstrip("%"))
    assert sum(shares.values()) == pytest.approx(all_ops, abs=0.05 * len(shares) + 0.05)   # each rounded to 0.1%
    assert sum(shares.values()) + rest == pytest.approx(100.0, abs=0.05 * len(shares) + 0.1)


def test_cli_help_shows_the_defaults_train_uses(capsys):
    from tinytransformer.nn import TransformerConfig
    from tinytransformer.tasks import TASKS, TrainSettings, make_task
    by_rate = {}                                                 # each learning-rate scale and its tasks, in order
    for name, task in TASKS.items():
        by_rate.setdefault(task.settings.lr_scale, []).append(name)
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())          # undo the line wrapping
    shown = ", ".join(f"{'/'.join(names)} {rate}" for rate, names in by_rate.items())
    assert len(by_rate) > 1 and f"scale of the warmup learning-rate schedule (default: {shown})" in help_text
    assert f"steps of linear learning-rate warmup (default: {TrainSettings.warmup})" in help_text
    assert "(default 512)" in help_text and "MISSING" not in help_text   # text's BPE size, not TransformerConfig's
    modern = make_task("text", block="modern").config().d_ff
    assert f"hidden width of the feed-forward sublayers (default: {TransformerConfig.d_ff}; text --block modern: " \
           f"{modern})" in help_text and modern != TransformerConfig.d_ff      # a task option's own default


TINY_MODEL = ["--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16", "--batch-size", "8",
              "--steps", "4", "--eval-every", "2"]


@pytest.mark.parametrize("name, extra, model_class", [
    ("addition", ["--digits", "1"], tt.nn.GPT), ("text", ["--seq-len", "16"], tt.nn.GPT),
    ("mlm", ["--k-max", "3", "--symbols", "4"], tt.nn.BERT),
    ("classify", ["--labelled", "16"], tt.nn.BERT)])
def test_command_line_trains_every_task(tmp_path, capsys, name, extra, model_class):
    paths = {kind: tmp_path / f"run.{kind}" for kind in ("json", "npz")}
    status = main(["train", "--task", name, *TINY_MODEL, *extra, "--json", str(paths["json"]),
                   "--save", str(paths["npz"])])
    out = capsys.readouterr()
    result = json.loads(paths["json"].read_text())
    assert result["task"] == name and result["steps"] == len(result["losses"]) == 4
    assert "step 4/4" in out.err
    if name in ("addition", "classify"):                     # an exact answer: a target not reached in 4 steps
        assert result["exact_match"] < 0.99 and result["reached_target_at_step"] is None and status == 1
        assert f"validation {tt.tasks.TASKS[name].measure}" in out.out
        assert f"test {tt.tasks.TASKS[name].measure} {result['test_exact_match']:.1%}" in out.out
    else:                                                    # no target: the held-out loss, status 0
        assert result["exact_match"] is None and result["held_out_loss"] > 0 and status == 0
        assert result["test_exact_match"] is None                  # nothing chosen on the held-out loss
        assert "held-out loss" in out.out
    assert type(tt.load_checkpoint(paths["npz"])) is model_class


@pytest.mark.parametrize("name, extra, model_name", [
    ("addition", ["--digits", "1"], "GPT"), ("mlm", ["--k-max", "3", "--symbols", "4"], "BERT"),
    ("classify", ["--labelled", "16"], "BERT")])
def test_command_line_profiles_every_model(capsys, name, extra, model_name):
    status = main(["train", "--task", name, "--profile", "--profile-steps", "2", *TINY_MODEL, *extra])
    out = capsys.readouterr().out
    assert status == 0 and f"{model_name}, d_model 16" in out
    assert "exact match" not in out and "held-out loss" not in out               # profiles instead of training
    ops_timed = {line.split()[0] for line in out.splitlines()[3:] if line and not line.startswith("-")}
    assert {"attention", "layer_norm", "embedding", "cross_entropy"} <= ops_timed


def test_command_line_fine_tunes_a_pretrained_checkpoint(tmp_path, capsys):
    path = tmp_path / "mlm.npz"
    main(["train", "--task", "mlm", *TINY_MODEL, "--save", str(path)])
    status = main(["train", "--task", "classify", "--labelled", "16",
                   "--steps", "4", "--eval-every", "2", "--batch-size", "8", "--target-accuracy", "0",
                   "--pretrained", str(path)])
    out = capsys.readouterr().out
    assert status == 0 and f"from {path}" in out and "d_model 16" in out     # sizes from the checkpoint
    assert main(["train", "--task", "mlm", "--pretrained", str(path)]) == 2
    assert "--pretrained is not an option of the mlm task" in capsys.readouterr().err


@pytest.mark.parametrize("readout", ["cloze", "cls"])
def test_command_line_fine_tunes_a_sentence_objective_checkpoint_the_same_way_twice(tmp_path, capsys, readout):
    path = tmp_path / "mlm.npz"
    assert main(["train", "--task", "mlm", "--sentence-objective", *TINY_MODEL, "--save", str(path)]) == 0
    assert tt.load_checkpoint(path).config.n_classes == 2                # it has a [CLS] head
    runs = []
    for run in range(2):
        out = tmp_path / f"{run}.json"
        main(["train", "--task", "classify", "--labelled", "32", "--readout", readout, "--steps", "3", "--batch-size", "8", "--pretrained", str(path), "--json", str(out)])
        runs.append(json.loads(out.read_text()))
    assert runs[0]["losses"] == runs[1]["losses"] and runs[0]["exact_match"] == runs[1]["exact_match"]  # same seed
    assert f"{readout} readout" in capsys.readouterr().out


def test_command_line_plot_of_a_gpt_task(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "run.png"
    main(["train", "--task", "addition", "--digits", "1", *TINY_MODEL, "--plot", str(path)])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_help_lists_the_three_models_and_every_task(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert all(model in top for model in ("Transformer", "GPT", "BERT"))
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for name in tuple(tasks.TASKS):
        assert f"{name} ({tasks.TASKS[name].model_class.__name__})" in help_text
    assert "at most this many steps (default: copy/reverse/" in help_text        # per-task defaults are shown


@pytest.mark.parametrize("arguments, message", [
    ("--steps -5", "--steps must be a positive integer, got -5"),
    ("--heads 0", "--heads must be a positive integer, got 0"),
    ("--d-model 65 --heads 4", "--d-model=65 is not divisible by --heads=4"),
    ("--seq-len 0", "reverse: --seq-len must be an integer >= 1, got 0"),
    ("--dropout 1.5", "--dropout must be in [0, 1), got 1.5"),
    ("--batch-size 0", "--batch-size must be a positive integer, got 0"),
    ("--symbols 0", "reverse: --symbols must be an integer >= 1, got 0"),
    ("--target-accuracy 2", "--target-accuracy must be in [0, 1] (a share of exact matches), got 2.0"),
    ("--lr-scale 0", "--lr-scale must be a finite number > 0, got 0.0"),
    ("--task addition --digits 0", "addition: --digits must be an integer from 1 to 6, got 0"),
    ("--task text --seq-len 1", "text: --seq-len must be an integer from 2 to 610, got 1"),
    ("--task text --seq-len 100000", "text: --seq-len must be an integer from 2 to 610, got 100000"),
    ("--task text --seq-len 700", "text: --seq-len must be an integer from 2 to 610, got 700"),
    ("--task mlm --k-max 1", "mlm: --k-max must be an integer >= 2, got 1"),
    ("--task classify --labelled 0", "classify: --labelled must be an integer >= 1, got 0"),
    ("--task classify --labelled 100000000000", "classify: --labelled = 100000000000 needs about"),
    ("--task classify --readout CLS", "classify: --readout must be one of cloze, cls, got 'CLS'"),
    ("--task mlm --k-max 2 --sentence-objective", "mlm: the sentence objective needs halves of at least 3"),
    ("--task classify --sentence-objective", "--sentence-objective is not an option of the classify task"),
    ("--task copy --digits 3", "--digits is not an option of the copy task"),
    ("--task text --tokenizer char --bpe-size 300", "TextCorpus: --bpe-size is for --tokenizer='bpe'"),
    ("--task text --tokenizer bpe --bpe-size 100", "TextCorpus: --bpe-size must be at least 256 (the byte values), got 100"),
    ("--task text --tokenizer bpe --seq-len 300", "text: --seq-len must be an integer from 2 to 215, got 300"),
    ("--task reverse --tokenizer bpe", "--tokenizer is not an option of the reverse task"),
    ("--task addition --block modern", "--block is not an option of the addition task"),
    ("--task addition --bpe-size 300", "--bpe-size is not an option of the addition task"),
    ("--task classify --pretrained /no/such.npz", "load_checkpoint: no checkpoint file at /no/such.npz"),
    ("--save /no/such/folder/model.npz", "--save /no/such/folder/model.npz: the folder /no/such/folder does not exist"),
    ("--json /no/such/folder/run.json", "the folder /no/such/folder does not exist"),
    ("--save README.md", "--save README.md: expected a name ending in .npz"),
    ("--steps x", "argument --steps: invalid int value: 'x' (see python -m tinytransformer train --help)"),
])
def test_a_bad_value_is_one_line_before_any_work(arguments, message, capsys, monkeypatch):
    monkeypatch.chdir(pathlib.Path(__file__).resolve().parent.parent)         # README.md is a file that is there
    with pytest.raises(SystemExit) if arguments.endswith("x") else contextlib.nullcontext():
        status = main(["train", *arguments.split()])
        assert status == 2
    out = capsys.readouterr()
    assert out.out == "" and message in out.err                 # nothing ran: not even the header
    assert len(out.err.strip().splitlines()) == 1, out.err


def test_a_model_that_cannot_be_written_at_the_end_is_saved_elsewhere(tmp_path, capsys, monkeypatch):
    """The folder was there when training started and is gone when it ends: the model is not lost."""
    from tinytransformer import checkpoint
    real_save, failed = checkpoint.save_checkpoint, []

    def save_once_failing(model, path, step=None, force=False):
        if not failed:
            failed.append(path)
            raise OSError("No space left on device")
        real_save(model, path, step, force)

    monkeypatch.setattr(checkpoint, "save_checkpoint", save_once_failing)
    main(["train", "--task", "copy", *TINY_REVERSE, "--steps", "2", "--save", str(tmp_path / "model.npz")])
    err = capsys.readouterr().err
    kept = re.search(r"the trained model is saved in (\S+\.npz)", err).group(1)
    assert f"could not write {tmp_path / 'model.npz'} (No space left on device)" in err
    assert type(tt.load_checkpoint(kept)) is tt.nn.Transformer
    pathlib.Path(kept).unlink()
    pathlib.Path(kept).parent.rmdir()


TINY_TEXT = ["--task", "text", "--seq-len", "16", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16",
             "--batch-size", "8", "--steps", "4", "--eval-every", "2"]


@pytest.mark.parametrize("options, per_token", [(["--tokenizer", "bpe", "--bpe-size", "300"], "BPE of 300 tokens"),
                                                ([], "characters as tokens"),
                                                (["--text", "python-docs"], "'s language reference (pydoc_data.topics)")])
def test_command_line_text_task_reports_the_loss_per_character(tmp_path, capsys, options, per_token):
    path = tmp_path / "run.json"
    assert main(["train", *TINY_TEXT, *options, "--json", str(path)]) == 0
    out = capsys.readouterr().out
    result = json.loads(path.read_text())
    assert per_token in out.splitlines()[0]
    loss, per_character, characters_per_token = (result[key] for key in (
        "held_out_loss", "held_out_nats_per_character", "characters_per_token"))
    assert per_character == pytest.approx(loss / characters_per_token)
    assert (characters_per_token > 1.5) if "bpe" in options else (characters_per_token == 1)
    assert f"held out nats per character {per_character:.4f}" in out


def test_command_line_tokenizer_choices(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--task", "text", "--tokenizer", "words"])
    assert "invalid choice: 'words' (choose from 'char', 'bpe')" in capsys.readouterr().err


def test_train_help_gives_each_default_once_and_none_that_is_not_one(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: None)" not in help_text and "(default: False)" not in help_text
    assert help_text.endswith("steps timed by --profile (default: 20)")        # once: the last option
    assert "seed of the weights and the training data (default: 0)" in help_text
