"""Nothing lost, nothing silent: each way a careless or unlucky user could lose a trained model or a file of
their own, hang the machine, or get a quiet wrong answer, tried once (tests/careless_user.py runs them all
and counts)."""
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.__main__ import main
from tinytransformer.checkpoint import checkpoint_step, load_checkpoint, save_checkpoint
from tinytransformer.files import OutputError, atomic_write, check_outputs
from tinytransformer.gradcheck import GradcheckError, gradcheck
from tinytransformer.tokenizer import BPE, CharTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HANG = 600             # seconds after which a child process counts as hung: far above any load's slowdown
TINY = ["--task", "copy", "--seq-len", "3", "--symbols", "3", "--d-model", "16", "--heads", "2", "--layers", "1",
        "--d-ff", "16", "--batch-size", "8", "--warmup", "10", "--eval-every", "0"]


def refused(capsys, *arguments, task=TINY):
    """Run train with arguments; it must stop before any work with exit status 2 and one line. -> that line."""
    status = main(["train", *task, "--steps", "2", *arguments])
    out = capsys.readouterr()
    assert status == 2 and out.out == "", out
    assert len(out.err.strip().splitlines()) == 1, out.err
    return out.err


def tiny_model():
    return tt.nn.GPT(tt.nn.TransformerConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=1, d_ff=8, max_len=8), rng=0)


def test_case_1_save_and_json_on_one_path_is_refused(tmp_path, capsys):
    path = tmp_path / "m.npz"
    assert f"--json {path}: expected a name ending in .json" in refused(capsys, "--save", str(path), "--json", str(path))
    assert not path.exists()                 # each writer has its own extension, so two outputs cannot coincide


def test_case_2_pretrained_and_save_on_one_path_is_refused(tmp_path, capsys):
    path = tmp_path / "mlm.npz"
    assert main(["train", "--task", "mlm", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16",
                 "--steps", "2", "--batch-size", "4", "--save", str(path)]) == 0
    before = path.read_bytes()
    capsys.readouterr()
    status = main(["train", "--task", "classify", "--steps", "2", "--pretrained", str(path), "--save", str(path)])
    err = capsys.readouterr().err
    assert status == 2 and "--save" in err and "the same file as --pretrained" in err
    assert path.read_bytes() == before


@pytest.mark.parametrize("flag", ["--save", "--json", "--plot"])
def test_case_3_a_folder_that_does_not_exist_or_a_trailing_slash_is_refused_up_front(tmp_path, capsys, flag):
    assert "expected a file name, got a folder" in refused(capsys, flag, str(tmp_path / "newdir") + "/")
    name = {"--save": "m.npz", "--json": "m.json", "--plot": "m.png"}[flag]
    assert "does not exist" in refused(capsys, flag, str(tmp_path / "newdir" / name))
    assert os.listdir(tmp_path) == []                       # no stray temporary file


@pytest.mark.parametrize("flag", ["--save", "--json", "--plot"])
def test_case_4_an_empty_path_is_refused(capsys, flag):
    assert "expected a file name, got ''" in refused(capsys, flag, "")


def cpu_seconds(pid):
    """The CPU time a running process has used (Linux's /proc): unlike the clock, it does not grow with the load."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")          # utime + stime


def interrupt_training(tmp_path, number, work=1.0):
    """Start train --save in a child process, send it signal number after `work` CPU seconds of training."""
    path = tmp_path / "m.npz"
    child = subprocess.Popen([sys.executable, "-m", "tinytransformer", "train", *TINY, "--steps", "100000",
                              "--save", str(path)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": ROOT})
    child.stdout.readline()                                 # the header: training has started
    started = cpu_seconds(child.pid)
    while cpu_seconds(child.pid) < started + work:          # a step takes about 10 ms of CPU
        time.sleep(0.05)
    child.send_signal(number)
    out, err = child.communicate(timeout=HANG)
    return child.returncode, err, path


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_case_5_ctrl_c_and_sigterm_save_the_model_and_name_the_step(tmp_path, number):
    status, err, path = interrupt_training(tmp_path, number)
    step = int(re.search(r"the model of step (\d+) is saved in", err).group(1))
    assert status == 130 and f"interrupted ({signal.Signals(number).name}) after step {step}" in err
    assert len(err.strip().splitlines()[-1:]) == 1 and "Traceback" not in err
    assert checkpoint_step(path) == step and type(load_checkpoint(path)) is tt.nn.Transformer


def test_case_6_no_writer_replaces_a_file_it_did_not_make(tmp_path, capsys):
    precious = tmp_path / "precious.txt"
    precious.write_text("my notes")
    with pytest.raises(OutputError, match="exists and was not written by tinytransformer"):
        CharTokenizer.train("abc").save(precious)
    with pytest.raises(OutputError, match="exists and was not written by tinytransformer"):
        BPE.train("abc abc", 257).save(precious)
    assert precious.read_text() == "my notes"
    for flag, name in [("--json", "notes.json"), ("--plot", "photo.png")]:
        (tmp_path / name).write_text("mine")
        assert "exists and was not written by tinytransformer" in refused(capsys, flag, str(tmp_path / name))
        assert (tmp_path / name).read_text() == "mine"
    CharTokenizer.train("abc").save(precious, force=True)     # asked for in so many words
    assert CharTokenizer.load(precious).vocab_size == 3


def test_case_6_a_write_that_fails_leaves_the_old_file(tmp_path):
    path = tmp_path / "tok.json"
    CharTokenizer.train("abc").save(path)
    before = path.read_bytes()

    def fail(f):
        f.write(b"half a fi")
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, fail)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["tok.json"]


def test_case_7_a_tokenizer_file_with_its_own_pattern_is_refused_unless_trusted(tmp_path):
    path = tmp_path / "tok.json"
    BPE.train("aaab aab", 258, pattern=None).save(path)
    saved = json.loads(path.read_text())
    saved["pattern"] = "(a+)+$"
    path.write_text(json.dumps(saved))
    start = time.process_time()                             # CPU time: the load does not stretch it
    with pytest.raises(ValueError, match="has its own pre-split pattern"):
        BPE.load(path)
    assert time.process_time() - start < 0.5
    assert BPE.load(path, trust_pattern=True).pattern == "(a+)+$"


@pytest.mark.parametrize("field, value", [("vocab_size", 10**11), ("n_layers", 10**6), ("max_len", 10**11)])
def test_case_8_a_checkpoint_config_is_checked_before_the_model_is_built(tmp_path, field, value):
    path = tmp_path / "m.npz"
    save_checkpoint(tiny_model(), path)
    with np.load(path) as archive:
        arrays = dict(archive)
    config = json.loads(str(arrays["config"]))
    config[field] = value
    arrays["config"] = np.array(json.dumps(config))
    np.savez(path, **arrays)
    start = time.process_time()
    with pytest.raises(ValueError, match="does not match its config|needs about .* GiB of memory"):
        load_checkpoint(path)
    assert time.process_time() - start < 1


@pytest.mark.parametrize("command", [["train", *TINY], ["check", "--ops", "linear"]])
def test_case_9_a_negative_seed_is_one_line(capsys, command):
    with pytest.raises(SystemExit):
        main([*command, "--seed", "-1"])
    err = capsys.readouterr().err
    assert "--seed: expected an integer >= 0, got -1" in err and len(err.strip().splitlines()) == 1


def test_case_11_a_pretrained_model_that_does_not_fit_the_task_is_refused_before_the_header(tmp_path, capsys):
    path = tmp_path / "gpt.npz"
    save_checkpoint(tiny_model(), path)
    err = refused(capsys, "--pretrained", str(path), task=["--task", "classify"])
    assert "--pretrained needs a BERT checkpoint" in err


def test_case_12_a_plot_extension_matplotlib_cannot_write_is_refused(tmp_path, capsys):
    assert "expected a name ending in .png or .svg or .pdf" in refused(capsys, "--plot", str(tmp_path / "out.xyz"))


def test_case_14_a_summary_that_cannot_be_written_at_the_end_is_one_line(tmp_path, capsys, monkeypatch):
    from tinytransformer import files

    def full_disk(path, write, *options):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(files, "atomic_write", full_disk)
    status = main(["train", *TINY, "--steps", "2", "--json", str(tmp_path / "run.json")])
    err = capsys.readouterr().err
    assert status == 2 and err.strip().splitlines()[-1].endswith(
        "could not write it: the disk is full (No space left on device); nothing was written")


def test_case_15_an_infinite_learning_rate_is_refused(capsys):
    assert "--lr-scale must be a finite number > 0, got inf" in refused(capsys, "--lr-scale", "inf")


def test_case_15_a_nan_loss_stops_training_and_keeps_the_last_good_model(tmp_path, capsys, monkeypatch):
    from tinytransformer.tasks import sequences
    calls = []

    def loss_nan_at_step_3(model, batch, label_smoothing=0.0):
        calls.append(1)
        value = sequences.transformer_loss(model, batch, label_smoothing)
        return value * np.nan if len(calls) == 3 else value
    monkeypatch.setattr(sequences.CopyTask, "loss", staticmethod(loss_nan_at_step_3))
    path, summary = tmp_path / "m.npz", tmp_path / "m.json"
    status = main(["train", *TINY, "--steps", "10", "--save", str(path), "--json", str(summary)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and err[-1] == f"train: the loss was nan at step 3; the model of step 2 is saved in {path}"
    assert checkpoint_step(path) == 2 and np.isfinite(json.loads(summary.read_text())["losses"]).all()


def test_case_15_save_checkpoint_refuses_nan_weights(tmp_path):
    model = tiny_model()
    model.embed.table.data[0, 0] = np.nan
    with pytest.raises(ValueError, match="parameter embed.table holds NaN or infinite values"):
        save_checkpoint(model, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("arguments, message", [
    (["--profile", "--save", "m.npz"], "--save would be ignored with --profile"),
    (["--profile-steps", "3"], "--profile-steps (it times --profile) would be ignored"),
    (["--target-accuracy", "0.5"], "--target-accuracy (the text task has no exact answer"),
])
def test_case_22_an_option_that_would_be_ignored_is_refused(capsys, arguments, message):
    task = ["--task", "text"] if "--target-accuracy" in arguments else TINY
    assert message in refused(capsys, *arguments, task=task)


def test_case_22_model_sizes_with_pretrained_are_refused(tmp_path, capsys):
    path = tmp_path / "mlm.npz"
    main(["train", "--task", "mlm", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16", "--steps", "1",
          "--batch-size", "4", "--save", str(path)])
    capsys.readouterr()
    status = main(["train", "--task", "classify", "--pretrained", str(path), "--d-model", "32"])
    err = capsys.readouterr().err
    assert status == 2 and "--d-model (the sizes are the --pretrained model's) would be ignored" in err


def test_case_23_checkpoint_paths(tmp_path):
    with pytest.raises(ValueError, match=f"save_checkpoint {tmp_path / 'no' / 'm.npz'}: the folder .* does not exist"):
        save_checkpoint(tiny_model(), tmp_path / "no" / "m.npz")
    with pytest.raises(TypeError, match="load_checkpoint: expected a path \\(str\\), got NoneType"):
        load_checkpoint(None)


@pytest.mark.parametrize("arguments, names", [(["--ops", "linear", "--ops", "softmax"], ["linear", "softmax"]),
                                              (["--ops", "linear,"], ["linear"]),
                                              (["--op", "linear", "--op", "linear"], ["linear"])])
def test_case_23_check_ops_repeated_or_with_a_trailing_comma(capsys, monkeypatch, arguments, names):
    from tinytransformer.cli import check
    graded = []
    monkeypatch.setattr(check, "grade", lambda ops, seed: graded.append(ops) or [])
    monkeypatch.setattr(check, "report", lambda grades: [])
    main(["check", *arguments])
    assert graded == [names]


def test_case_24_files_are_written_with_ordinary_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        save_checkpoint(tiny_model(), tmp_path / "m.npz")
        CharTokenizer.train("abc").save(tmp_path / "tok.json")
    finally:
        os.umask(umask)
    for name in ("m.npz", "tok.json"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o644


def test_the_rule_output_paths_distinct_from_each_other_and_from_inputs(tmp_path):
    with pytest.raises(OutputError, match="--b .*the same file as --a"):
        check_outputs({"--a": str(tmp_path / "x.npz"), "--b": str(tmp_path / "." / "x.npz")})
    check_outputs({"--a": str(tmp_path / "x.npz"), "--b": None}, inputs={"--in": str(tmp_path / "y.npz")})


def tiny_transformer():
    return tt.nn.Transformer(tt.nn.TransformerConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=1, d_ff=8,
                                                     max_len=8), rng=0)


@pytest.mark.parametrize("temperature", [np.nan, np.inf])
def test_case_16_a_nan_or_infinite_temperature_is_refused(temperature):
    with pytest.raises(ValueError, match="sample: temperature must be a finite number"):
        tt.decode.sample(tiny_model(), np.array([[3, 4]]), 3, rng=0, temperature=temperature)


def test_case_17_generate_text_refuses_a_negative_length():
    from tinytransformer.tasks.text import generate_text
    with pytest.raises(ValueError, match="generate_text: n_tokens must be an integer >= 0, got -2"):
        generate_text(tiny_model(), None, "The boy", -2, rng=0)


def test_case_18_a_nan_attention_scale_is_refused():
    q = np.ones((2, 3, 4))
    with pytest.raises(ValueError, match="attention: scale must be a finite number, got nan"):
        tt.functional.attention(q, q, q, scale=np.nan)


@pytest.mark.parametrize("fn, message", [
    (lambda a: 3, "fn must return one Tensor, got int"),
    (lambda a: True, "fn must return one Tensor, got bool"),
    (lambda a: tt.Tensor(a.data.astype(np.float16)), "does not depend on any input through the tape"),
    (lambda a: tt.Tensor(a.data.astype(complex)), "fn must return a Tensor of floating-point numbers, got dtype complex128"),
    (lambda a: tt.Tensor(np.array("x")), "got dtype <U1"),
])
def test_case_19_gradcheck_refuses_what_it_cannot_check(fn, message):
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        gradcheck(fn, np.ones(3))


def test_case_19_gradcheck_says_float64_when_given_float32():
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    with pytest.raises(GradcheckError,
                       match=r"input 0 is float32: .* check in float64"):
        gradcheck(tt.functional.softmax, x)


def test_case_19_gradcheck_of_a_function_reading_data_is_checked():
    """fn reads a.data to build a constant: the numeric pass gives it Tensors too, as the taped one."""
    results = gradcheck(lambda a: a * float(a.data.sum() > 0), np.arange(1.0, 4.0))
    assert all(r.passed for r in results)


def test_case_20_an_in_place_change_between_forward_and_backward_is_an_error():
    a = tt.Tensor(np.array([1.0]), requires_grad=True)
    with tt.Tape() as tape:
        loss = (a * a).sum()
    with pytest.raises(ValueError, match="read-only"):
        a.data[...] = 5
    tape.backward(loss)
    assert a.grad.tolist() == [2.0]             # d(a^2)/da at the a the forward pass saw
    a.data[...] = 5                              # after backward: writeable again (the optimizer's update)


@pytest.mark.parametrize("call, message", [
    (lambda m, ids: tt.decode.sample(m, ids, 3, rng=0, top_k=2.5), "top_k must be an integer >= 1, got 2.5"),
    (lambda m, ids: tt.decode.greedy(m, ids, 2.0), "max_len must be an integer >= 1, got 2.0"),
    (lambda m, ids: tt.decode.greedy(tiny_transformer(), np.zeros((1, 0), dtype=np.int64), 3),
     "the source is empty"),
    (lambda m, ids: tt.decode.beam_search(m, ids, 3, length_penalty=np.nan), "length_penalty must be a finite number"),
    (lambda m, ids: tt.decode.sample(m, ids, 3, rng=-1), "sample: rng (a seed) must be an integer >= 0, got -1"),
])
def test_case_21_decoding_arguments_are_one_clear_line(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call(tiny_model(), np.array([[3, 4]]))


def test_case_21_a_kv_cache_reused_with_another_batch_size_is_refused():
    model, cache = tiny_model(), None
    cache = model.new_cache()
    model.decode(np.array([[3, 4]]), cache)
    with pytest.raises(ValueError, match="KVCache: this cache holds a batch of 1 rows, the input has 2"):
        model.decode(np.array([[3], [4]]), cache)


@pytest.mark.parametrize("call, message", [
    (lambda: tt.functional.causal_mask(2.5), "causal_mask: T must be an integer >= 1, got 2.5"),
    (lambda: tt.functional.causal_mask(-1), "causal_mask: T must be an integer >= 1, got -1"),
    (lambda: tt.functional.positional_encoding(np.ones((1, 2, 4)), offset=-5),
     "positional_encoding: offset must be an integer >= 0, got -5"),
])
def test_case_23_op_arguments(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_case_10_sizes_that_cannot_fit_are_one_line_up_front(capsys):
    err = refused(capsys, "--seq-len", "5000", task=["--task", "copy"])
    assert re.search(r"(a training step of this model and batch|the held-out set \(1,000 sequences of 5,001 tokens\) "
                     r"and one attention map over it) needs about [\d.]+ GiB of memory; this machine "
                     r"has [\d.]+ GiB available", err)
    assert "GiB of memory" in refused(capsys, "--d-ff", str(10**11), task=["--task", "copy"])


def test_case_13_an_edition_inside_the_project_is_refused(capsys):
    status = main(["assignment", os.path.join(ROOT, "tinytransformer", "edition")])
    err = capsys.readouterr().err
    assert status == 2 and "is inside the project" in err and len(err.strip().splitlines()) == 1
    assert not os.path.exists(os.path.join(ROOT, "tinytransformer", "edition"))
    assert not os.path.exists(os.path.join(ROOT, "tinytransformer", ".edition.building"))


def test_case_8_the_check_counts_no_embedding_for_a_vision_transformer(tmp_path):
    """A VisionTransformer's config has no vocabulary: the check counts no token embedding for it."""
    config = tt.nn.VisionConfig(d_model=8, n_heads=2, n_layers=1, d_ff=8, max_len=5, n_classes=3, patch_pixels=5,
                                positions="learned")
    save_checkpoint(tt.nn.VisionTransformer(config, rng=0), tmp_path / "vit.npz")
    assert type(load_checkpoint(tmp_path / "vit.npz")) is tt.nn.VisionTransformer


# ---- third pass: outputs that are not regular files, found late, replaced meanwhile, a full disk, a closed pipe

def run_command(*arguments, unprivileged=False, stdout=subprocess.PIPE, timeout=HANG):
    """python -m tinytransformer arguments in a child process -> CompletedProcess. unprivileged: as root
    without its power over permissions (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), so that
    a file's mode applies to it as to any user."""
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if unprivileged else []
    return subprocess.run([*drop, sys.executable, "-m", "tinytransformer", *arguments], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": ROOT})


def one_line(err):
    """The one line of err (stderr), with no traceback."""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("flag, name", [("--save", "m.npz"), ("--json", "m.json"), ("--plot", "m.png")])
@pytest.mark.parametrize("what", ["fifo", "device", "link to /dev/full"])
def test_case_25_an_output_that_is_not_a_regular_file_is_refused_at_once(tmp_path, flag, name, what):
    path = tmp_path / name
    if what == "fifo":
        os.mkfifo(path)
    else:
        os.symlink("/dev/full" if what == "link to /dev/full" else "/dev/null", path)
    done = run_command("train", *TINY, "--steps", "2", flag, str(path))    # a hang is a failure
    kind = "a FIFO (named pipe)" if what == "fifo" else "a device"
    assert done.returncode == 2 and done.stdout == ""
    assert f"{flag} {path}: expected a regular file, got {kind}" in one_line(done.stderr)


def test_case_25_save_checkpoint_into_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "m.npz")
    with pytest.raises(ValueError, match="expected a regular file, got a FIFO"):
        save_checkpoint(tiny_model(), tmp_path / "m.npz")


@pytest.mark.parametrize("flag, name", [("--save", "m.npz"), ("--json", "m.json"), ("--plot", "m.png")])
def test_case_26_a_name_too_long_is_found_before_training(tmp_path, capsys, flag, name):
    path = tmp_path / ("x" * 300 + name)
    assert f"{flag} {path}: a file cannot be created there: File name too long" in refused(capsys, flag, str(path))
    assert os.listdir(tmp_path) == []


@pytest.fixture
def as_a_user():
    """Skip unless root with setpriv: permissions are tested on root without its power over them."""
    import shutil
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv, to drop root's power over permissions")


NOBODY = 65534


@pytest.mark.parametrize("flag, name", [("--save", "m.npz"), ("--json", "m.json"), ("--plot", "m.png")])
def test_case_26_a_folder_writable_but_not_searchable_is_found_before_training(tmp_path, as_a_user, flag, name):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o200)                                       # write, but no search (x): nothing can be created
    done = run_command("train", *TINY, "--steps", "2", flag, str(locked / name), unprivileged=True)
    locked.chmod(0o700)
    assert done.returncode == 2 and done.stdout == ""          # not even the header: no training
    assert "a file cannot be created there: Permission denied" in one_line(done.stderr)


def test_case_26_an_unwritable_folder_is_found_before_training(tmp_path, as_a_user):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)                          # another user's folder, 0755
    done = run_command("train", *TINY, "--steps", "2", "--save", str(theirs / "m.npz"), unprivileged=True)
    assert done.returncode == 2 and f"the folder {theirs} cannot be written" in one_line(done.stderr)


def train_then(monkeypatch, meanwhile):
    """Make train() call meanwhile() once training is done, as a user who acts while it runs."""
    from tinytransformer import train as train_module
    real_train = train_module.train

    def train_and_act(*arguments, **options):
        result = real_train(*arguments, **options)
        meanwhile()
        return result
    monkeypatch.setattr(train_module, "train", train_and_act)


@pytest.mark.parametrize("flag, name", [("--json", "out.json"), ("--plot", "out.png")])
def test_case_27_a_file_made_at_an_output_path_during_training_is_kept(tmp_path, capsys, monkeypatch, flag, name):
    path = tmp_path / name
    train_then(monkeypatch, lambda: path.write_text("made by the user while training ran"))
    status = main(["train", *TINY, "--steps", "2", flag, str(path)])
    err = capsys.readouterr().err
    assert path.read_text() == "made by the user while training ran"
    assert status == 2 and "the file exists and was not written by tinytransformer" in err.splitlines()[-1]
    assert "Traceback" not in err and sorted(os.listdir(tmp_path)) == [name]    # no temporary file left


def test_case_27_the_model_is_kept_when_its_path_was_taken_during_training(tmp_path, capsys, monkeypatch):
    path = tmp_path / "m.npz"
    train_then(monkeypatch, lambda: path.write_text("mine"))
    main(["train", *TINY, "--steps", "2", "--save", str(path)])
    kept = re.search(r"the trained model is saved in (\S+\.npz)", capsys.readouterr().err).group(1)
    assert path.read_text() == "mine" and type(load_checkpoint(kept)) is tt.nn.Transformer
    os.remove(kept)
    os.rmdir(os.path.dirname(kept))


def test_case_27_force_is_honoured_for_save(tmp_path, capsys):
    path = tmp_path / "m.npz"
    path.write_text("old notes the user chose to replace")
    assert main(["train", *TINY, "--steps", "2", "--save", str(path), "--force"]) in (0, 1)
    assert "saved in" not in capsys.readouterr().err                # no fallback: the model is where it was asked
    assert checkpoint_step(path) == 2


def fill(folder):
    """Write a file called filler into folder, as large as the disk has room for."""
    room = os.statvfs(folder)
    (folder / "filler").write_bytes(b"\0" * room.f_bavail * room.f_bsize)


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a 1 MiB tmpfs, full (an empty file can still be made); unmounted afterwards. Root only."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root, to mount a small tmpfs")
    try:
        fill(folder)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("flag, name", [("--save", "m.npz"), ("--json", "m.json"), ("--plot", "m.png")])
def test_case_28_a_full_disk_is_one_line_and_loses_nothing(small_disk, capsys, flag, name):
    path = small_disk / name
    status = main(["train", *TINY, "--d-model", "32", "--d-ff", "64", "--steps", "2", flag, str(path)])
    err = capsys.readouterr().err
    assert "Traceback" not in err and sorted(os.listdir(small_disk)) == ["filler"]   # no partial file
    last = err.strip().splitlines()[-1]
    if flag == "--save":                                        # the model is kept elsewhere, and said where
        kept = re.search(r"could not write .*\(the disk is full \(No space left on device\)\); the trained model "
                         r"is saved in (\S+\.npz)", last).group(1)
        assert type(load_checkpoint(kept)) is tt.nn.Transformer
        os.remove(kept)
        os.rmdir(os.path.dirname(kept))
    else:
        assert status == 2 and f"{flag} {path}: could not write it: the disk is full" in last


def test_case_28_save_checkpoint_on_a_full_disk_leaves_the_old_checkpoint(small_disk):
    path = small_disk / "m.npz"
    os.remove(small_disk / "filler")
    save_checkpoint(tiny_model(), path)
    before = path.read_bytes()
    fill(small_disk)
    big = tt.nn.GPT(tt.nn.TransformerConfig(vocab_size=7, d_model=64, n_heads=2, n_layers=2, d_ff=64, max_len=8))
    with pytest.raises(OSError, match="No space left on device"):
        save_checkpoint(big, path)
    assert path.read_bytes() == before and sorted(os.listdir(small_disk)) == ["filler", "m.npz"]


def test_case_29_a_closed_pipe_never_costs_the_model(tmp_path):
    path = tmp_path / "m.npz"
    child = subprocess.Popen(f"{sys.executable} -u -m tinytransformer train {' '.join(TINY)} --steps 20 "
                             f"--save {path} | head -1", shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": ROOT})
    out, err = child.communicate(timeout=HANG)
    assert out.startswith("copy task") and "Traceback" not in err and "Broken pipe" not in err, err
    assert checkpoint_step(path) == 20                       # saved before any result was printed


def test_case_29_standard_output_on_a_full_device_is_one_line_before_training(tmp_path):
    with open("/dev/full", "w") as full:
        done = run_command("train", *TINY, "--steps", "2", "--save", str(tmp_path / "m.npz"), stdout=full)
    assert done.returncode == 2
    assert "standard output cannot be written: the disk is full" in one_line(done.stderr)
    assert not (tmp_path / "m.npz").exists()


def test_case_29_any_command_on_a_full_standard_output_is_one_line():
    with open("/dev/full", "w") as full:
        done = run_command("check", "--ops", "linear", stdout=full)
    assert done.returncode == 2
    assert one_line(done.stderr) == "python -m tinytransformer check: the disk is full (No space left on device)"


def test_case_30_an_update_that_overflows_the_weights_keeps_the_last_good_model(tmp_path, capsys, monkeypatch):
    from tinytransformer.optim import AdamFast                 # the Adam training runs: the plain one's twin
    real_step, calls = AdamFast.step, []

    def infinite_gradient_at_step_3(optimizer):
        calls.append(1)
        if len(calls) == 3:                                   # a finite loss, an infinite gradient: m/sqrt(v) is nan
            optimizer.params[0].grad = np.full_like(optimizer.params[0].grad, np.inf)
        real_step(optimizer)
    monkeypatch.setattr(AdamFast, "step", infinite_gradient_at_step_3)
    path = tmp_path / "m.npz"
    status = main(["train", *TINY, "--steps", "10", "--save", str(path)])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert status == 1 and last == (f"train: the update of step 3 would make weights NaN or infinite; the model of "
                                    f"step 2 is saved in {path}")
    model = load_checkpoint(path)
    assert checkpoint_step(path) == 2 and all(np.isfinite(p.data).all() for p in model.parameters())


@pytest.mark.parametrize("name", ["Adam", "AdamFast"])
def test_case_30_adam_refuses_an_update_that_overflows_and_keeps_the_weights(name):
    w = tt.Tensor(np.array([3.0e38], dtype=np.float32), requires_grad=True)
    optimizer = getattr(tt.optim, name)([w], lr=1e37)
    with pytest.raises(FloatingPointError, match=f"{name}: the update of step \\d+ would make weights NaN or infinite"):
        for _ in range(10):
            w.grad = np.array([-1.0], dtype=np.float32)         # each step adds about lr to the weight
            before = w.data.copy()
            optimizer.step()
    assert w.data == before and np.isfinite(w.data).all()


def test_case_30_an_overflow_at_the_first_step_says_nothing_was_saved(tmp_path, capsys):
    status = main(["train", *TINY, "--lr-scale", "1e300", "--warmup", "1", "--steps", "3",
                   "--save", str(tmp_path / "m.npz")])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert status == 1 and "the update of step 1 would make weights NaN or infinite" in last
    assert "no step was completed; nothing saved" in last and "lost" not in last


@pytest.mark.parametrize("task", [["--task", "mlm", "--k-max", "1000000"], ["--task", "classify", "--k-max", "1000000"],
                                  ["--task", "copy", "--seq-len", "1000000000"],
                                  ["--task", "reverse", "--seq-len", "1000000000"]])
def test_case_31_sizes_that_cannot_fit_are_one_line_up_front(capsys, task):
    start = time.process_time()
    assert "GiB of memory" in refused(capsys, task=task)
    assert time.process_time() - start < 10


def test_case_31_an_empty_pretrained_path_is_one_line(capsys):
    assert "--pretrained: expected a checkpoint's path, got ''" in refused(capsys, "--pretrained", "",
                                                                           task=["--task", "classify"])


# ---- the untrusted checkpoint: every entry's header checked before any array is read

def crafted(tmp_path, change):
    """A tiny GPT's checkpoint, rewritten entry by entry (deflated) through change({name: bytes}) -> {name: bytes}."""
    import zipfile
    path = tmp_path / "crafted.npz"
    save_checkpoint(tiny_model(), path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in change(members).items():
            archive.writestr(name, data)
    return path


def npy_bytes(array):
    import io
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def claims_5e9_elements(members):
    header = npy_bytes(np.zeros(3, dtype=np.float32))
    fake = header.replace(b"(3,)", b"(5000000000,)").replace(b"  \n", b"\n", 1)   # same header length
    return {**members, "embed.table.npy": fake}


def encrypted(path):
    """Set the zip's 'encrypted' flag on every entry of the archive at path."""
    data = bytearray(path.read_bytes())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            data[start + flag_at] |= 1
            start += 4
    path.write_bytes(bytes(data))
    return path


def config_of(members, change):
    """members with the config entry's JSON text replaced by change(its fields) (a string)."""
    fields = json.loads(str(np.load(__import__("io").BytesIO(members["config.npy"]))))
    return {**members, "config.npy": npy_bytes(np.array(change(fields)))}


@pytest.mark.parametrize("make, message", [
    (lambda p: crafted(p, lambda m: {**m, "notes.txt": b"hello"}), "entry 'notes.txt' is not an .npy array"),
    (lambda p: crafted(p, claims_5e9_elements), "its header claims 5,000,000,000 elements of float32 but it holds"),
    (lambda p: encrypted(crafted(p, lambda m: m)), "is encrypted; a checkpoint never is"),
    (lambda p: crafted(p, lambda m: config_of(m, lambda f: "[" * 100_000 + "]" * 100_000)),
     "entry 'config' is <U200000 () of 800,128 bytes; expected one short value"),
    (lambda p: crafted(p, lambda m: config_of(m, lambda f: "[" * 4000 + "]" * 4000)), "invalid config (nested too deep)"),
    (lambda p: crafted(p, lambda m: config_of(m, lambda f: json.dumps({**f, "tie_embeddings": "false"}))),
     "invalid config (TransformerConfig: tie_embeddings must be True or False, got 'false')"),
    (lambda p: crafted(p, lambda m: {**m, "embed.table.npy": npy_bytes(np.zeros(2**20, dtype=np.float32))}),
     "entry 'embed.table.npy' inflates from"),
    (lambda p: crafted(p, lambda m: {**m, "model.npy": npy_bytes(np.random.default_rng(0).random((1000, 1000)))}),
     "entry 'model' is float64 (1000, 1000) of 8,000,128 bytes; expected one short value"),
])
def test_case_32_a_crafted_checkpoint_is_one_value_error_naming_the_file(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        load_checkpoint(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_case_32_a_crafted_checkpoint_is_one_line_from_translate_and_train(tmp_path, capsys):
    path = crafted(tmp_path, claims_5e9_elements)
    assert main(["translate", "--load", str(path), "The dog sleeps."]) == 2
    assert "its header claims 5,000,000,000 elements" in one_line(capsys.readouterr().err)
    assert "its header claims 5,000,000,000 elements" in refused(capsys, "--pretrained", str(path),
                                                                 task=["--task", "classify"])


def test_case_32_a_checkpoint_another_user_may_not_read_is_permission_denied(tmp_path, as_a_user):
    path = tmp_path / "m.npz"
    save_checkpoint(tiny_transformer(), path)
    os.chown(path, NOBODY, NOBODY)
    path.chmod(0o600)                                          # only its owner may read it
    done = run_command("translate", "--load", str(path), "The dog sleeps.", unprivileged=True)
    assert done.returncode == 2 and f"{path}: permission denied" in one_line(done.stderr)
    assert "damaged" not in done.stderr


def test_case_32_a_fifo_as_a_checkpoint_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "m.npz")
    done = run_command("translate", "--load", str(tmp_path / "m.npz"), "The dog sleeps.")
    assert done.returncode == 2 and "is not a regular file" in one_line(done.stderr)


def test_case_32_a_config_field_that_must_be_a_bool_is_a_real_bool():
    for name in ("norm_first", "tie_embeddings"):
        with pytest.raises(TypeError, match=f"TransformerConfig: {name} must be True or False, got 'no'"):
            tt.nn.TransformerConfig(vocab_size=7, **{name: "no"})


# ---- translate: a huge beam, bytes that are not UTF-8, a closed pipe, a long standard input

@pytest.fixture(scope="module")
def translate_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("translate") / "m.npz"
    assert main(["train", "--task", "translate", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "16",
                 "--steps", "1", "--eval-every", "0", "--save", str(path)]) == 1
    return path


def test_case_33_a_beam_too_wide_for_memory_is_one_line(translate_model, capsys):
    capsys.readouterr()
    from tinytransformer.cli.translate import BATCH
    assert main(["translate", "--load", str(translate_model), "--beam", "1000000000000", "The dog sleeps."]) == 2
    assert re.search(rf"--beam 1000000000000 \(of {BATCH} sentences at a time\) needs about [\d.]+ GiB of memory",
                     one_line(capsys.readouterr().err))


def test_case_33_lines_that_are_not_utf8_are_answered_on_stderr_and_the_rest_translated(translate_model):
    lines = [b"The dog sleeps.", b"The caf\xe9 sleeps.", b"\xff\xfe\x00", "The cat sleeps.".encode(), b"The purple dog."]
    done = subprocess.run([sys.executable, "-m", "tinytransformer", "translate", "--load", str(translate_model)],
                          input=b"\n".join(lines) + b"\n", capture_output=True, timeout=HANG,
                          env={**os.environ, "PYTHONPATH": ROOT})
    out, err = done.stdout.decode().splitlines(), done.stderr.decode().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr.decode()
    assert len(out) == 5 and out[0] and out[3] and out[1] == out[2] == out[4] == ""      # aligned with the input
    assert err[:2] == ["python -m tinytransformer translate: line 2 of standard input: not UTF-8 text (byte 0xe9 "
                       "at position 7)",
                       "python -m tinytransformer translate: line 3 of standard input: not UTF-8 text (byte 0xff "
                       "at position 0)"]
    assert len(err) == 3 and err[2].startswith("python -m tinytransformer translate: line 5 of standard input: "
                                               "'purple' (no known word is close) is not in the vocabulary")


def test_case_33_translate_into_a_closed_pipe_ends_quietly(translate_model, tmp_path):
    (tmp_path / "in.txt").write_text("The dog sleeps.\n" * 500)
    done = subprocess.run(f"{sys.executable} -m tinytransformer translate --load {translate_model} < in.txt | head -1",
                          shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=HANG,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert len(done.stdout.splitlines()) == 1 and done.stderr == ""


def test_case_33_standard_input_is_translated_a_batch_at_a_time(translate_model, capsys, monkeypatch):
    from tinytransformer.cli import translate
    read = []

    class Lines:
        """Standard input that records, as each line is read, how many lines were printed since the last one."""
        def __iter__(self):
            for number in range(1, 3 * translate.BATCH + 1):
                read.append(len(capsys.readouterr().out.splitlines()))
                yield b"The dog sleeps.\n"
        buffer = property(lambda self: self)
    monkeypatch.setattr("sys.stdin", Lines())
    assert main(["translate", "--load", str(translate_model)]) == 0
    B = translate.BATCH                 # read[i]: lines printed between reading line i and line i + 1
    assert len(read) == 3 * B and read[B] == read[2 * B] == B and sum(read) == 2 * B   # a batch, printed at once


# ---- the API's argument checks: one ValueError/TypeError naming what was expected and what came

def another_tapes_tensor():
    x = tt.Tensor(np.ones(3), requires_grad=True)
    with tt.Tape():
        y = x * 2.0
    with tt.Tape():
        return (y * 3.0).sum()


def loss_of_another_tape():
    x = tt.Tensor(np.ones(3), requires_grad=True)
    with tt.Tape() as t1:
        (x * 2.0).sum()
    with tt.Tape():
        loss = (x * 3.0).sum()
    t1.backward(loss)


def params():
    return [tt.Tensor(np.ones(3), requires_grad=True)]


def clip_an_infinite_gradient():
    p = params()
    p[0].grad = np.array([np.inf, 1.0, 1.0])
    tt.optim.clip_grad_norm(p, 1.0)


ONES = np.ones((2, 4))


@pytest.mark.parametrize("call, error, message", [
    (lambda: tt.functional.layer_norm(ONES, np.ones(4), np.zeros(4), eps=np.nan), ValueError,
     "layer_norm: eps must be a finite number > 0, got nan"),
    (lambda: tt.functional.layer_norm(np.array(1.0), np.ones(1), np.zeros(1)), ValueError,
     "layer_norm: x must have at least one axis (..., D), got a 0-d array"),
    (lambda: tt.Tensor(ONES).transpose(0, 5), ValueError,
     "transpose: axes must each be an axis of x in [-2, 2) (x is (2, 4)), got (0, 5)"),
    (lambda: tt.functional.sinusoidal_positions(2.5, 4), ValueError, "sinusoidal_positions: T must be an integer >= 0, got 2.5"),
    (another_tapes_tensor, ValueError, "mul: an input was computed inside another `with Tape()` block, now closed"),
    (loss_of_another_tape, ValueError, "backward: output was not recorded on this tape"),
    (lambda: tt.nn.TransformerConfig(vocab_size=7, norm_first="no"), TypeError,
     "TransformerConfig: norm_first must be True or False, got 'no'"),
    (lambda: tt.nn.TransformerConfig(vocab_size=7, tie_embeddings="false"), TypeError,
     "TransformerConfig: tie_embeddings must be True or False, got 'false'"),
    (lambda: tt.optim.Adam(params(), lr=np.nan), ValueError, "Adam: lr must be a finite number >= 0, got nan"),
    (lambda: tt.optim.Adam(params(), lr=1e-3, betas=(1.5, 0.9)), ValueError,
     "Adam: betas[0] must be a finite number in [0, 1), got 1.5"),
    (lambda: tt.optim.SGD(params(), lr=0.1, momentum=-1), ValueError, "SGD: momentum must be a finite number >= 0, got -1"),
    (lambda: tt.optim.clip_grad_norm(params(), max_norm=np.nan), ValueError,
     "clip_grad_norm: max_norm must be a finite number > 0, got nan"),
    (clip_an_infinite_gradient, FloatingPointError, "clip_grad_norm: the gradients' joint norm is inf"),
    (lambda: tt.optim.WarmupSchedule(64, 2.5), ValueError, "WarmupSchedule: warmup must be an integer >= 1, got 2.5"),
])
def test_case_34_api_arguments_are_one_clear_error(call, error, message):
    with pytest.raises(error, match=re.escape(message)) as caught:
        call()
    assert "\n" not in str(caught.value)


def test_case_34_an_infinite_gradient_is_not_clipped_into_nan():
    p = params()
    p[0].grad = np.array([np.inf, 1.0, 1.0])
    with pytest.raises(FloatingPointError):
        tt.optim.clip_grad_norm(p, 1.0)
    assert p[0].grad.tolist() == [np.inf, 1.0, 1.0]                # unchanged, never NaN
