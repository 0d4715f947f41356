"""benchmarks/floor.py times the matrix products of one training step: they must be exactly those.

The products it takes from a recorded tape are checked against the arithmetic
of the classroom model worked out by hand from its configuration.
"""
import pathlib
import sys

import numpy as np
import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
from common import classroom_config          # noqa: E402
from floor import flops, step_products      # noqa: E402

import tinytransformer as tt                 # noqa: E402
from tinytransformer.tasks.sequences import make_batch  # noqa: E402


def test_the_floor_times_every_product_of_a_step_forward_and_backward():
    config = classroom_config()
    B, L = 64, 10
    src_rows, tgt_rows = B * L, B * (L + 1)          # the target starts with BOS: 11 positions
    d, d_ff, V, h = config.d_model, config.d_ff, config.vocab_size, config.n_heads
    model = tt.nn.Transformer(config, rng=0)
    pairs = step_products(model, make_batch("reverse", B, L, 10, np.random.default_rng(0)))

    # multiply-adds of one forward pass through the linear layers
    encoder = src_rows * (4 * d * d + 2 * d * d_ff)                      # q, k, v, o; feed-forward
    decoder = tgt_rows * (4 * d * d + 2 * d * d + 2 * d * d_ff) + src_rows * 2 * d * d  # cross k, v read the memory
    output = tgt_rows * d * V
    forward = config.n_layers * (encoder + decoder) + output
    # backward does two products (dx, dW) of the same size as the forward one
    assert flops(pairs["linear"]) == 3 * 2 * forward
    assert len(pairs["linear"]) == 3 * (config.n_layers * (6 + 10) + 1)

    def attention(T_q, T_k):
        return B * h * T_q * T_k * config.d_k              # multiply-adds of one of its products
    per_call = {"encoder self": attention(L, L), "decoder self": attention(L + 1, L + 1),
                "decoder cross": attention(L + 1, L)}
    # two products forward (q k.T, weights v), four backward
    assert flops(pairs["attention"]) == 6 * 2 * config.n_layers * sum(per_call.values())
    for a, b in pairs["linear"] + pairs["attention"]:
        assert a.flags.c_contiguous and b.flags.c_contiguous and a.dtype == b.dtype == np.float32


def test_with_two_threads_the_benchmarks_time_one_library_per_process(capsys):
    import floor
    import step_time
    for parse, argv in ((floor.parse_args, ["--threads", "2"]), (step_time.parse_args, ["--threads", "2"])):
        with pytest.raises(SystemExit):
            parse(argv)
        assert "idle threads slow the other down" in capsys.readouterr().err
    assert floor.parse_args(["--threads", "2", "--no-torch"]).threads == 2
    assert step_time.parse_args(["--threads", "2", "--torch-only"]).torch_only
    assert step_time.parse_args(["--threads", "1"]).threads == 1      # one thread each: both in one run
