"""The PyTorch model the speed benchmarks race against is the same model (skipped without torch).

benchmarks/torch_reference.py rebuilds the classroom Transformer in torch. With
tinytransformer's weights copied into it, the same batches and the same
learning rates must give the same losses, step after step: otherwise the
benchmark would compare two different models.
"""
import pathlib
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import torch_reference as reference        # noqa: E402
from common import classroom_config         # noqa: E402

import tinytransformer as tt                # noqa: E402
from tinytransformer.tasks.sequences import make_batch, transformer_loss  # noqa: E402
from tinytransformer.optim import Adam, WarmupSchedule  # noqa: E402
from tinytransformer.train import train_step  # noqa: E402


def twin_models(seed):
    """A tinytransformer classroom model and the torch reference holding the same weights."""
    ours = tt.nn.Transformer(classroom_config(), rng=seed)
    return ours, reference.copy_weights(ours, reference.build_model(reference.CLASSROOM_MODEL, seed=seed))


@pytest.mark.slow
def test_same_weights_same_batches_give_the_same_losses():
    torch.set_num_threads(1)
    ours, theirs = twin_models(seed=0)
    ours_optimizer, theirs_optimizer = Adam(ours.parameters(), lr=0.0), reference.make_optimizer(theirs)
    schedule = WarmupSchedule(64, warmup=200, scale=2.0)
    rng = np.random.default_rng(1)
    ours_losses, theirs_losses = [], []
    for step in range(1, 16):
        batch = make_batch("reverse", 64, 10, 10, rng)
        ours_optimizer.lr = schedule(step)
        ours_losses.append(train_step(ours, ours_optimizer, batch, transformer_loss))
        src, tgt_in, tgt_out = reference.to_tensors(batch)
        theirs_losses.append(reference.train_step(theirs, theirs_optimizer, src, tgt_in, tgt_out,
                                                  lr=reference.warmup_lr(step, 64, 200, 2.0)))
    # float32 in both: rounding differs in the last bits, and the losses still agree to 1e-4
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-4)
    assert ours_losses[-1] < ours_losses[0] - 0.3       # and it is training, not standing still


def test_greedy_decoding_agrees():
    ours, theirs = twin_models(seed=6)
    batch = make_batch("copy", 16, 10, 10, np.random.default_rng(2))
    ours_ids = tt.decode.greedy(ours, batch.src, max_len=11)                          # (16, <= 11)
    theirs_ids = reference.greedy(theirs, torch.from_numpy(batch.src), 11).numpy()    # (16, 11)
    assert len(np.unique(ours_ids)) >= 3             # an untrained model, but not one that only says EOS
    np.testing.assert_array_equal(ours_ids, theirs_ids[:, :ours_ids.shape[1]])


def test_the_gpt_reference_gives_the_same_losses():
    """The text task's GPT (GPT-2's block) and torch_reference.GPT, same weights and batches, 5 steps."""
    from tinytransformer.tasks import make_task
    torch.set_num_threads(1)
    task = make_task("text")
    ours = task.new_model(task.config(), rng=3)
    theirs = reference.copy_weights(ours, reference.build_model(reference.config_of(ours), seed=3))
    ours_optimizer, theirs_optimizer = Adam(ours.parameters(), lr=1e-3), reference.make_optimizer(theirs)
    rng = np.random.default_rng(4)
    ours_losses, theirs_losses = [], []
    for _ in range(5):
        batch = task.batch(16, rng)
        ours_losses.append(train_step(ours, ours_optimizer, batch, task.loss))
        theirs_losses.append(reference.lm_train_step(theirs, theirs_optimizer, *reference.to_tensors(batch), lr=1e-3))
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-4)
    assert ours_losses[-1] < ours_losses[0] - 0.1
