"""Nothing hangs, nothing silent, fourth pass: untrusted tokenizer files and lists bounded in time, crafted
checkpoints and absurd sizes refused in one line, memory limits of the process honoured, a model kept when
memory runs out, Ctrl-C before any work one line (tests/careless_user.py counts these cases with the others)."""
import io
import os
import re
import resource
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.__main__ import main
from tinytransformer.checkpoint import checkpoint_step, load_checkpoint, save_checkpoint
from tinytransformer.tokenizer import BPE, CharTokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["--task", "copy", "--seq-len", "3", "--symbols", "3", "--d-model", "16", "--heads", "2", "--layers", "1",
        "--d-ff", "16", "--batch-size", "8", "--warmup", "10", "--eval-every", "0"]
# what each case was on the code before it (careless_user.py counts)
KINDS = {42: "hangs", 43: "hangs", 44: "silent", 45: "tracebacks", 46: "tracebacks", 47: "tracebacks",
         48: "data loss", 49: "hangs", 58: "tracebacks"}


def one_line_refusal(capsys, *arguments):
    """Run the command; it must stop with exit status 2 and one line on stderr, nothing on stdout -> that line."""
    status = main(list(arguments))
    out = capsys.readouterr()
    assert status == 2 and out.out == "" and len(out.err.strip().splitlines()) == 1, out
    return out.err.strip()


def tiny_model():
    return tt.nn.GPT(tt.nn.TransformerConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=1, d_ff=8, max_len=8), rng=0)


# ---- untrusted tokenizer files and special tokens: bounded in time

def test_case_42_two_hundred_thousand_special_tokens_are_refused_at_once(tmp_path):
    names = [f"<|s{i}|>" for i in range(200_000)]
    with pytest.raises(ValueError, match="BPE.train: expected at most 1024 special tokens, got 200000"):
        BPE.train("abc abc", 300, special_tokens=names)
    path = tmp_path / "tok.json"
    BPE.train("abc abc", 258).save(path)
    text = path.read_text().replace('"special_tokens": []', '"special_tokens": ' + str(names).replace("'", '"'))
    path.write_text(text)
    with pytest.raises(ValueError, match="expected at most 1024 special tokens, got 200000"):
        BPE.load(path)                                          # refused by their count, before any is checked


def test_case_42_duplicate_special_tokens_are_found_in_linear_time():
    names = [f"<|s{i}|>" for i in range(1023)] + ["<|s5|>"]
    with pytest.raises(ValueError, match=re.escape("special tokens must be distinct; ['<|s5|>'] repeated")):
        CharTokenizer.train("abc", special_tokens=names)
    with pytest.raises(ValueError, match="a special token's name is at most 256 characters, got one of 1000"):
        CharTokenizer.train("abc", special_tokens=["<" * 1000])


@pytest.mark.parametrize("what, kind", [("fifo", "a FIFO (named pipe)"), ("/dev/zero", "a device")])
def test_case_43_assignment_files_naming_a_fifo_or_a_device_is_refused_without_blocking(tmp_path, what, kind):
    path = tmp_path / "list.txt"
    if what == "fifo":
        os.mkfifo(path)
    else:
        os.symlink(what, path)
    done = subprocess.run([sys.executable, "-m", "tinytransformer", "assignment", str(tmp_path / "week1"), "--files",
                           str(path)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(f"--files {path}: expected a text file of paths, one a line, got {kind}")


# ---- checkpoints: a step that is not a count, a header NumPy's parser chokes on

@pytest.mark.parametrize("step", [2.7, -5, "3", True, np.float64(2.0), 1e300])
def test_case_44_save_checkpoint_refuses_a_step_that_is_not_a_count(tmp_path, step):
    with pytest.raises(ValueError, match=re.escape(f"save_checkpoint: step must be None or an integer >= 0, got "
                                                   f"{step!r}")):
        save_checkpoint(tiny_model(), tmp_path / "m.npz", step=step)
    assert not (tmp_path / "m.npz").exists()


def with_entry(tmp_path, name, data):
    """A tiny GPT's checkpoint (step 3) with the entry name replaced by data (bytes)."""
    path = tmp_path / "m.npz"
    save_checkpoint(tiny_model(), path, step=3)
    with zipfile.ZipFile(path) as archive:
        members = {member: archive.read(member) for member in archive.namelist()}
    members[name] = data
    with zipfile.ZipFile(path, "w") as archive:
        for member, content in members.items():
            archive.writestr(member, content)
    return path


def npy(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("value", [np.array(-5), np.array(2.7), np.array("abc")])
def test_case_44_checkpoint_step_refuses_a_step_that_is_not_a_count(tmp_path, value):
    path = with_entry(tmp_path, "step.npy", npy(value))
    with pytest.raises(ValueError, match=re.escape(f"checkpoint_step: {path} is damaged: its step is {value.dtype} "
                                                   f"{value.item()!r}; expected an integer >= 0")):
        checkpoint_step(path)


def test_case_45_a_header_numpy_cannot_tokenize_is_one_value_error(tmp_path):
    data = npy(np.zeros((4, 8), dtype=np.float32))
    start = data.index(b"{")
    bad = b"{'descr': '<U3', 'fortran_order': False, 'shape': (), }\0"     # NumPy's tokenizer stops at the NUL
    path = with_entry(tmp_path, "embed.table.npy", data[:start] + bad + data[start + len(bad):])
    with pytest.raises(ValueError, match=re.escape(f"load_checkpoint: {path} is damaged: entry 'embed.table.npy' "
                                                   "has no readable .npy header (TokenError")):
        load_checkpoint(path)


# ---- absurd settings: refused in one line before any work

@pytest.mark.parametrize("arguments, message", [
    (["--clip-norm", "1e400"], "--clip-norm must be a finite number > 0, got inf"),
    (["--steps", "1000000000"], "--steps must be at most 10,000,000"),
    (["--profile", "--profile-steps", "1000000000"], "--profile-steps must be from 1 to 10,000"),
])
def test_case_46_absurd_settings_are_one_line_before_any_work(capsys, arguments, message):
    assert message in one_line_refusal(capsys, "train", *TINY, *arguments)


def test_case_46_train_api_refuses_an_infinite_clip_norm_before_any_step():
    with pytest.raises(ValueError, match="train: clip_norm must be a finite number > 0, got inf"):
        tt.train.train(None, "copy", steps=2, clip_norm=float("inf"), progress=False)


# ---- memory: the process's own limits, and a MemoryError that keeps the model

def run_limited(limit_bytes, *arguments):
    """python -m tinytransformer arguments under `ulimit -v` of limit_bytes."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    return subprocess.run([sys.executable, "-m", "tinytransformer", *arguments], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit, env={**os.environ, "PYTHONPATH": ROOT})


@pytest.mark.parametrize("arguments, what", [(["--batch-size", "1000000"], "a training step of this model and batch"),
                                             (["--d-ff", "100000"], "evaluating 1000 validation sequences at once")])
def test_case_47_sizes_are_checked_against_the_process_limit_not_only_the_machine(arguments, what):
    done = run_limited(1_500_000_000, "train", *TINY, *arguments)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert re.fullmatch(rf"python -m tinytransformer train: {what} needs about [\d.]+ GiB of memory; this machine "
                        r"has [\d.]+ GiB available", done.stderr.strip())


def test_case_47_available_memory_is_the_least_of_the_machine_and_the_limits(monkeypatch):
    from tinytransformer import memory
    monkeypatch.setattr(memory, "machine_bytes", lambda: 64 * 2**30)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    held = memory.status_bytes("VmSize:")
    resource.setrlimit(resource.RLIMIT_AS, (held + 2**30, hard))
    try:
        room = memory.available_bytes()
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert 0 < room <= 2**30


@pytest.mark.parametrize("where", ["evaluate", "test", "loss"])
def test_case_48_a_memory_error_keeps_the_model_of_the_last_good_step(tmp_path, capsys, monkeypatch, where):
    from tinytransformer.tasks.sequences import SequenceTask
    calls = []

    def out_of_memory(*arguments, **options):
        calls.append(1)
        if len(calls) >= 3 or where != "loss":
            raise MemoryError
        return real(*arguments, **options)
    real = getattr(SequenceTask, where)
    monkeypatch.setattr(SequenceTask, where, staticmethod(out_of_memory) if where == "loss" else out_of_memory)
    path = tmp_path / "m.npz"
    status = main(["train", *TINY, "--steps", "4", "--eval-every", "2", "--save", str(path)])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    step = {"evaluate": 2, "test": 4, "loss": 2}[where]
    assert status == 1 and "needed more memory than there is" in last
    assert last.endswith(f"the model of step {step} is saved in {path}") and checkpoint_step(path) == step


def test_case_49_a_long_run_refused_says_how_to_stop_one_instead():
    with pytest.raises(ValueError, match="Ctrl-C stops a long run and keeps its model"):
        tt.train.train(None, "copy", steps=10**8, progress=False)


# ---- Ctrl-C before any work: one line, exit status 130, nothing written

INTERRUPT_AT = """
import os, signal, sys
import tinytransformer.cli.common, tinytransformer.cli.train, tinytransformer.tasks
from tinytransformer.__main__ import main
owner, name = {where!r}
module = {{"parser": tinytransformer.cli.common.Parser, "task": tinytransformer.tasks,
          "sizes": tinytransformer.cli.train}}[owner]
real = getattr(module, name)
def interrupted(*arguments, **options):
    os.kill(os.getpid(), signal.SIGINT)      # the user's Ctrl-C, arriving while this stage runs
    return real(*arguments, **options)
setattr(module, name, interrupted)
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("where, command", [
    (("parser", "parse_args"), ["train", *TINY]), (("parser", "parse_args"), ["check", "--op", "softmax"]),
    (("parser", "add_subparsers"), ["generate", "--help"]), (("task", "make_task"), ["train", *TINY]),
    (("sizes", "describe_model"), ["train", *TINY])], ids=["parsing train", "parsing check",
                                                          "building the parser", "building the task",
                                                          "sizing the model"])
def test_case_58_ctrl_c_before_any_work_is_one_line_and_exit_status_130(tmp_path, where, command):
    save = tmp_path / "m.npz"
    done = subprocess.run([sys.executable, "-c", INTERRUPT_AT.format(where=where), *command,
                           *(["--save", str(save)] if command[0] == "train" else [])],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 130 and "Traceback" not in done.stderr, done.stderr
    assert re.fullmatch(r"python -m tinytransformer( \w+)?: interrupted \(Ctrl-C\) before it finished",
                        done.stderr.strip()), done.stderr
    assert list(tmp_path.iterdir()) == []
