"""Steps to 99% from the same start: both libraries, the same weights, batches and held-out set.

time_to_accuracy.py lets each library draw its own weights and data, as a
user would. Here tinytransformer's initial weights are copied into the PyTorch
reference and both train on one stream of batches, so the only difference
left is the arithmetic (float32 rounding, order of sums). Needs torch. Run
from the repository root:

    PYTHONPATH=. python benchmarks/twin_runs.py [--seeds 0 1 2 3 4 5 --lr-scale 1 --warmup 100 --dtype float64]
"""
import argparse

from common import classroom_config, import_torch_reference, use_threads


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4, 5])
    parser.add_argument("--lr-scale", type=float, default=1.0)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--max-steps", type=int, default=1500)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    use_threads(args.threads)
    import dataclasses

    import numpy as np

    import tinytransformer as tt
    from tinytransformer.tasks.sequences import evaluate_sequences, make_batch, transformer_loss
    from tinytransformer.optim import Adam, WarmupSchedule
    from tinytransformer.tasks import TrainSettings
    from tinytransformer.train import train_step

    reference = import_torch_reference(args.threads)
    if reference is None:
        raise SystemExit("twin_runs.py needs torch")
    import torch
    print(f"reverse, {args.dtype}, schedule scale {args.lr_scale} warmup {args.warmup}: "
          f"steps to 99% held-out exact match")
    print(f"{'seed':>4}{'tinytransformer':>17}{'PyTorch':>9}")
    for seed in args.seeds:
        ours = tt.nn.Transformer(dataclasses.replace(classroom_config(), dtype=args.dtype), rng=seed)
        theirs = reference.build_model(reference.CLASSROOM_MODEL, seed=seed).to(getattr(torch, args.dtype))
        reference.copy_weights(ours, theirs)
        ours_optimizer, theirs_optimizer = Adam(ours.parameters(), lr=0.0), reference.make_optimizer(theirs)
        schedule = WarmupSchedule(ours.config.d_model, args.warmup, args.lr_scale)
        rng = np.random.default_rng(seed)
        held_out = make_batch("reverse", 1000, 10, 10, np.random.default_rng(seed + 999))
        reached = {"ours": None, "theirs": None}
        for step in range(1, args.max_steps + 1):
            batch = make_batch("reverse", 64, 10, 10, rng)
            if reached["ours"] is None:
                ours_optimizer.lr = schedule(step)
                train_step(ours, ours_optimizer, batch, transformer_loss)
            if reached["theirs"] is None:
                reference.train_step(theirs, theirs_optimizer, *reference.to_tensors(batch), lr=schedule(step))
            if step % TrainSettings.eval_every == 0:
                if reached["ours"] is None and evaluate_sequences(ours, held_out) >= 0.99:
                    reached["ours"] = step
                if reached["theirs"] is None and reference.evaluate_sequences(theirs, held_out) >= 0.99:
                    reached["theirs"] = step
                if None not in reached.values():
                    break
        print(f"{seed:>4}{str(reached['ours']):>17}{str(reached['theirs']):>9}", flush=True)


if __name__ == "__main__":
    main()
