"""Nothing lost, fourth pass: signals in pairs and at the last moment, standard streams closed or full, --force,
a save path that changed during the run (tests/careless_user.py counts these cases with the others)."""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.__main__ import main
from tinytransformer.checkpoint import checkpoint_step, load_checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# assignment builds an edition from the instructor's git checkout; a student edition has none
from_a_checkout = pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, ".git")),
                                     reason="assignment needs the instructor's git checkout")
TINY = ["--task", "copy", "--seq-len", "3", "--symbols", "3", "--d-model", "16", "--heads", "2", "--layers", "1",
        "--d-ff", "16", "--batch-size", "8", "--warmup", "10", "--eval-every", "0"]
SLOW = ["--task", "reverse", "--d-model", "128", "--d-ff", "512", "--batch-size", "128", "--eval-every", "0"]
# what each case was on the code before it (careless_user.py counts)
KINDS = {35: "data loss", 36: "data loss", 37: "data loss", 38: "data loss", 39: "tracebacks", 40: "data loss",
         41: "data loss"}
ENV = {**os.environ, "PYTHONPATH": ROOT}


def command(*arguments):
    return [sys.executable, "-m", "tinytransformer", *arguments]


def kept_or_none_taken(err, path):
    """After signals at a random moment: the model of the last good step saved whole (its step), or, on a machine
    so loaded that no step had finished, a line saying so and no file (0)."""
    if "no step was completed; nothing saved" in err.strip().splitlines()[-1]:
        assert "Traceback" not in err and not path.exists()
        return 0
    return saved_step(err, path)


def saved_step(err, path):
    """The step the last line of err says was saved at path; that checkpoint must load whole and say that step."""
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err, err
    step = int(re.search(rf"the model of step (\d+) is saved in {re.escape(str(path))}$", last).group(1))
    assert step >= 1 and checkpoint_step(path) == step and type(load_checkpoint(path)) is tt.nn.Transformer
    return step


# ---- signals in pairs: an impatient user, a system shutting down, a terminal closed

@pytest.mark.parametrize("signals", [("SIGINT", "SIGINT"), ("SIGTERM", "SIGTERM"), ("SIGINT", "SIGTERM"),
                                     ("SIGHUP",), ("SIGHUP", "SIGINT"), ("SIGINT", "SIGINT", "SIGINT")])
def test_case_35_signals_in_a_row_save_the_last_good_step_whole(tmp_path, signals):
    path = tmp_path / "m.npz"
    child = subprocess.Popen(command("train", *SLOW, "--steps", "100000", "--save", str(path)), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=ENV)
    child.stdout.readline()                                    # the header: training starts
    time.sleep(3.0)                                            # several steps of about 0.3 s
    for name in signals:
        child.send_signal(getattr(signal, name))
        time.sleep(0.025)                                      # 25 ms apart: inside the step under way
    out, err = child.communicate(timeout=120)
    step = kept_or_none_taken(err, path)
    assert child.returncode == 130 and f"train: interrupted ({signals[0]}) after step {step}; " in err


@pytest.fixture
def own_signals():
    """Signals sent to this process by a test: its handlers restored afterwards (a command ignores late ones)."""
    saved = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield
    for number, handler in saved.items():
        signal.signal(number, handler)


def during_test_split(monkeypatch, *names):
    """Make the copy task's test split receive the signals names, as if sent just after the last step."""
    from tinytransformer.tasks.sequences import SequenceTask
    real_test = SequenceTask.test

    def test_then_signal(task, model):
        for name in names:
            os.kill(os.getpid(), getattr(signal, name))
        return real_test(task, model)
    monkeypatch.setattr(SequenceTask, "test", test_then_signal)


@pytest.mark.parametrize("signals", [("SIGINT",), ("SIGTERM",), ("SIGINT", "SIGINT"), ("SIGHUP", "SIGTERM")])
def test_case_36_a_signal_after_the_last_step_during_the_test_split_saves_the_model(tmp_path, capsys, monkeypatch,
                                                                                      own_signals, signals):
    path = tmp_path / "m.npz"
    during_test_split(monkeypatch, *signals)
    assert main(["train", *TINY, "--steps", "4", "--save", str(path)]) == 130
    err = capsys.readouterr().err
    assert saved_step(err, path) == 4 and f"interrupted ({signals[0]}) after step 4" in err


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_case_36_a_signal_after_train_returns_and_before_the_save_saves_the_model(tmp_path, capsys, monkeypatch,
                                                                                   own_signals, name):
    from tinytransformer import train as train_module
    real_train = train_module.train

    def train_then_signal(*arguments, **options):
        result = real_train(*arguments, **options)
        os.kill(os.getpid(), getattr(signal, name))
        os.kill(os.getpid(), getattr(signal, name))
        return result
    monkeypatch.setattr(train_module, "train", train_then_signal)
    path = tmp_path / "m.npz"
    assert main(["train", *TINY, "--steps", "3", "--save", str(path)]) == 130
    err = capsys.readouterr().err
    assert saved_step(err, path) == 3 and f"interrupted ({name}) after step 3, the last" in err


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_case_36_signals_during_the_save_wait_for_the_file_to_be_written(tmp_path, capsys, monkeypatch, own_signals,
                                                                         name):
    from tinytransformer import checkpoint
    real_savez = np.savez

    def savez_with_signals(f, **arrays):
        f.write(b"PK")                                          # a part written, then two signals
        os.kill(os.getpid(), getattr(signal, name))
        os.kill(os.getpid(), getattr(signal, name))
        f.seek(0)
        real_savez(f, **arrays)
    monkeypatch.setattr(checkpoint.np, "savez", savez_with_signals)
    path = tmp_path / "m.npz"
    assert main(["train", *TINY, "--steps", "3", "--save", str(path)]) == 130
    err = capsys.readouterr().err
    assert saved_step(err, path) == 3 and f"interrupted ({name}) after step 3, the last" in err


def test_case_36_train_api_drops_the_work_under_way_on_a_second_signal_never_an_update(own_signals, monkeypatch):
    from tinytransformer.optim import AdamFast                 # the optimizer train() runs
    real_step, seen = AdamFast.step, []

    def step_then_two_signals(optimizer):                     # both signals arrive while the weights change
        real_step(optimizer)
        seen.append(optimizer.params[0].data.copy())
        if len(seen) == 3:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)
    monkeypatch.setattr(AdamFast, "step", step_then_two_signals)
    handler = signal.getsignal(signal.SIGINT)
    result = tt.train.train(None, "copy", steps=50, eval_every=0, progress=False)
    assert result.stopped == "interrupted (SIGINT) after step 3" and result.steps == 3
    assert np.array_equal(result.model.parameters()[0].data, seen[-1])     # the update of step 3 whole, no more
    assert all(p.data.flags.writeable for p in result.model.parameters())
    assert signal.getsignal(signal.SIGINT) is handler                  # the API leaves Ctrl-C as it was


# ---- standard streams: closed, full, a reader gone; progress lines are a courtesy

REDIRECTS = {"both into head -1": "2>&1 | head -1", "both into head -3": "2>&1 | head -3",
             "stderr full": "2>/dev/full", "stderr closed": "2>&- | cat", "stdout closed": ">&-",
             "both closed": ">&- 2>&-", "stderr's reader gone": "2>&1 >/dev/null | true"}


@pytest.mark.parametrize("redirect", REDIRECTS.values(), ids=REDIRECTS.keys())
def test_case_37_standard_streams_closed_or_full_never_cost_the_model(tmp_path, redirect):
    path = tmp_path / "m.npz"
    arguments = " ".join(TINY).replace("--eval-every 0", "--eval-every 10")
    done = subprocess.run(f"{sys.executable} -m tinytransformer train {arguments} --steps 300 --save {path} "
                          f"{redirect}", shell=True, capture_output=True, text=True, timeout=120, env=ENV)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    step = checkpoint_step(path)                  # saved whole: its last step, or the evaluation that reached 99%
    assert step in range(10, 301, 10) and type(load_checkpoint(path)) is tt.nn.Transformer


@from_a_checkout
def test_case_37_assignment_with_standard_output_closed_is_not_a_traceback(tmp_path):
    done = subprocess.run(f"{sys.executable} -m tinytransformer assignment {tmp_path / 'week1'} --ops relu >&-",
                          shell=True, capture_output=True, text=True, timeout=300, env=ENV)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "week1" / "tinytransformer" / "ops").is_dir() and (tmp_path / "week1.points.json").exists()


# ---- the save path: replaced with --force only whole, changed during the run, a fallback named

def test_case_38_force_replaces_a_file_only_once_the_new_one_is_whole(tmp_path, capsys, monkeypatch):
    from tinytransformer import checkpoint
    path = tmp_path / "m.npz"
    path.write_text("the user's old file, replaced on purpose")
    real_savez, calls = np.savez, []

    def fail_once_half_written(f, **arrays):
        calls.append(1)
        if len(calls) == 1:
            f.write(b"PK\x03\x04half a checkpoint")
            raise OSError(5, "Input/output error")
        real_savez(f, **arrays)
    monkeypatch.setattr(checkpoint.np, "savez", fail_once_half_written)
    main(["train", *TINY, "--steps", "3", "--save", str(path), "--force"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert path.read_text() == "the user's old file, replaced on purpose"        # never half replaced
    kept = re.search(rf"could not write {re.escape(str(path))} \(Input/output error\); the trained model is saved "
                     r"in (\S+\.npz)$", last).group(1)
    assert checkpoint_step(kept) == 3


def test_case_38_a_stopped_run_whose_save_fell_back_names_the_real_path_last(tmp_path, capsys, monkeypatch,
                                                                             own_signals):
    import shutil
    folder = tmp_path / "gone"
    folder.mkdir()
    during_test_split(monkeypatch, "SIGTERM")
    from tinytransformer.tasks.sequences import SequenceTask
    test_and_signal = SequenceTask.test

    def remove_folder_too(task, model):
        shutil.rmtree(folder)                                   # the --save folder removed during the run
        return test_and_signal(task, model)
    monkeypatch.setattr(SequenceTask, "test", remove_folder_too)
    assert main(["train", *TINY, "--steps", "3", "--save", str(folder / "m.npz")]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    kept = re.search(r"the trained model is saved in (\S+\.npz)$", err[-2]).group(1)
    assert "does not exist" in err[-2] and saved_step(err[-1], kept) == 3        # the last line: where it is


def test_case_39_a_dangling_symlink_at_save_is_refused_up_front_with_its_reason(tmp_path):
    path = tmp_path / "m.npz"
    os.symlink(tmp_path / "nowhere" / "m.npz", path)
    done = subprocess.run(command("train", *TINY, "--steps", "2", "--save", str(path)), capture_output=True, text=True,
                          timeout=120, env=ENV)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.strip() == (f"python -m tinytransformer train: --save {path}: a symbolic link to "
                                   f"{tmp_path / 'nowhere' / 'm.npz'}, which does not exist; expected a file name")


# ---- the autograder: an interrupted assignment leaves nothing half made

@from_a_checkout
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_case_40_an_interrupted_assignment_leaves_no_edition_without_its_zip(tmp_path, monkeypatch, own_signals, capsys,
                                                                             name):
    from tinytransformer.cli import assignment
    real_build = assignment.build_autograder

    def interrupted(*arguments, **options):
        os.kill(os.getpid(), getattr(signal, name))
        return real_build(*arguments, **options)
    monkeypatch.setattr(assignment, "build_autograder", interrupted)
    status = main(["assignment", str(tmp_path / "week1"), "--ops", "relu", "--autograder"])
    err = capsys.readouterr().err
    assert status == 130 and "Traceback" not in err
    assert err.strip() == (f"python -m tinytransformer assignment: interrupted ({name}); nothing was written "
                           f"(the edition {tmp_path / 'week1'} was removed)")
    assert os.listdir(tmp_path) == []


def test_case_41_sighup_stops_training_and_says_so(tmp_path):
    path = tmp_path / "m.npz"
    child = subprocess.Popen(command("train", *TINY, "--steps", "100000", "--save", str(path)),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    child.stdout.readline()
    time.sleep(1.0)
    child.send_signal(signal.SIGHUP)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130 and "interrupted (SIGHUP)" in err and kept_or_none_taken(err, path) >= 0
