"""What each speed-up buys: the classroom training step with and without it, in one process, alternating.

Each comparison swaps one piece for its plain version (the plain per-parameter optim.Adam
for its flat-vector twin, optim.AdamFast; the sorting embedding backward for the one-hot product)
and times blocks of training steps of the same model, plain and fast in turn,
alternating which goes first. Prints the median ms per step of each and the
median of the per-round differences (what the speed-up buys). One BLAS thread.

    PYTHONPATH=. python benchmarks/ab_speedups.py [--rounds 15 --steps 10]
"""
import argparse
import contextlib
import statistics
import time

from common import classroom_config, use_threads


def plain_versions():
    """name -> a context manager that swaps the fast piece for its plain version."""
    import numpy as np

    from tinytransformer import ops

    def swapped(module, name, replacement):
        @contextlib.contextmanager
        def swap():
            original = getattr(module, name)
            setattr(module, name, replacement)
            try:
                yield
            finally:
                setattr(module, name, original)
        return swap

    def embedding_backward_by_sorting(dout, cache):
        ids, table_shape = cache
        flat_ids = ids.reshape(-1)
        flat_dout = dout.reshape(flat_ids.size, -1)
        order = np.argsort(flat_ids, kind="stable")
        sorted_ids = flat_ids[order]
        run_starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
        dtable = np.zeros(table_shape, dtype=dout.dtype)
        dtable[sorted_ids[run_starts]] = np.add.reduceat(flat_dout[order], run_starts, axis=0)
        return None, dtable

    return {
        "embedding backward: one-hot product": swapped(ops, "embedding_backward", embedding_backward_by_sorting),
        "Adam over one flat vector": "per-parameter Adam",
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=10, help="steps per block")
    args = parser.parse_args(argv)
    use_threads(1)
    import numpy as np

    import tinytransformer as tt
    from tinytransformer.tasks.sequences import make_batch, transformer_loss
    from tinytransformer.train import train_step

    config = classroom_config()
    rng = np.random.default_rng(0)
    batches = [make_batch("reverse", 64, 10, 10, rng) for _ in range(50)]
    model = tt.nn.Transformer(config, rng=0)
    flat_adam = tt.optim.AdamFast(model.parameters(), lr=1e-4)             # what train runs
    per_parameter_adam = tt.optim.Adam(model.parameters(), lr=1e-4)        # its plain twin
    comparisons = plain_versions()

    def block(optimizer):
        times = []
        for i in range(args.steps):
            start = time.perf_counter()
            train_step(model, optimizer, batches[i % len(batches)], transformer_loss)
            times.append(1e3 * (time.perf_counter() - start))
        return times

    for _ in range(20):
        train_step(model, flat_adam, batches[0], transformer_loss)     # warm up
    print(f"classroom training step, 1 BLAS thread, {args.rounds} rounds of {args.steps} steps each way, "
          "alternating; ms per step (medians)")
    print(f"{'speed-up':<40}{'plain':>8}{'fast':>8}{'buys':>8}")
    for name, plain in comparisons.items():
        fast_ms, plain_ms, gains = [], [], []
        for round_ in range(args.rounds):
            def run_plain():
                if plain == "per-parameter Adam":
                    return block(per_parameter_adam)
                with plain():
                    return block(flat_adam)
            order = [("fast", lambda: block(flat_adam)), ("plain", run_plain)]
            results = dict((label, run()) for label, run in (order if round_ % 2 else order[::-1]))
            fast_ms += results["fast"]
            plain_ms += results["plain"]
            gains.append(statistics.median(results["plain"]) - statistics.median(results["fast"]))
        print(f"{name:<40}{statistics.median(plain_ms):>8.2f}{statistics.median(fast_ms):>8.2f}"
              f"{statistics.median(gains):>8.2f}")


if __name__ == "__main__":
    main()
