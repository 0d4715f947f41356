"""Milliseconds per training step: tinytransformer against PyTorch eager, alternating.

Both train the same classroom model (length 10, 10 symbols, d_model 64, 4 heads,
2+2 layers, d_ff 128, batch 64, float32, Adam) on the same pre-drawn batches.
The two libraries take turns, a block of steps each, so that whatever else
the machine is doing falls on both alike. Run from the repository root:

    PYTHONPATH=. python benchmarks/step_time.py [--rounds 10 --steps-per-round 20 --threads 1]

Without torch installed it times tinytransformer alone. Also prints the
tape's profile of one step: where the time goes, op by op.

With more than one thread, time one library per run (--no-torch, then
--torch-only): in one process the idle library's threads keep spinning while
the other works, and each slows the other down.
"""
import argparse
import statistics
import time

from common import classroom_config, import_torch_reference, use_threads


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="turns each library takes")
    parser.add_argument("--steps-per-round", type=int, default=20)
    parser.add_argument("--warmup-steps", type=int, default=20, help="untimed steps first, for each")
    parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads")
    parser.add_argument("--no-torch", action="store_true", help="time tinytransformer alone")
    parser.add_argument("--torch-only", action="store_true", help="time PyTorch alone")
    parser.add_argument("--profile", action="store_true", help="also print the op-by-op profile")
    args = parser.parse_args(argv)
    if args.threads > 1 and not (args.no_torch or args.torch_only):
        parser.error(f"--threads {args.threads}: time one library per run (--no-torch or --torch-only); "
                     "in one process each library's idle threads slow the other down")
    return args


def main(argv=None):
    args = parse_args(argv)
    use_threads(args.threads)
    import numpy as np

    import tinytransformer as tt
    from tinytransformer.tasks.sequences import make_batch, transformer_loss
    from tinytransformer.optim import Adam
    from tinytransformer.tools.profile import profile_steps, profile_table
    from tinytransformer.train import train_step

    config = classroom_config()
    rng = np.random.default_rng(0)
    n_steps = args.warmup_steps + args.rounds * args.steps_per_round
    batches = [make_batch("reverse", 64, 10, 10, rng) for _ in range(n_steps)]

    model = tt.nn.Transformer(config, rng=0)
    optimizer = Adam(model.parameters(), lr=1e-3)
    runners = {} if args.torch_only else {"tinytransformer": lambda batch: train_step(model, optimizer, batch, transformer_loss)}

    torch_reference = None if args.no_torch else import_torch_reference(args.threads)
    if torch_reference is not None:
        import torch
        torch_model = torch_reference.build_model(torch_reference.CLASSROOM_MODEL, seed=0)
        torch_optimizer = torch_reference.make_optimizer(torch_model)

        def torch_step(batch):
            src, tgt_in, tgt_out = torch_reference.to_tensors(batch)
            torch_reference.train_step(torch_model, torch_optimizer, src, tgt_in, tgt_out, lr=1e-3)
        runners[f"PyTorch {torch.__version__} eager"] = torch_step

    for run in runners.values():
        for batch in batches[:args.warmup_steps]:
            run(batch)
    times = {name: [] for name in runners}
    for round_ in range(args.rounds):
        block = batches[args.warmup_steps + round_ * args.steps_per_round:][:args.steps_per_round]
        for name, run in runners.items():
            for batch in block:
                start = time.perf_counter()
                run(batch)
                times[name].append(1e3 * (time.perf_counter() - start))

    print(f"ms per training step, classroom model, {args.threads} threads, "
          f"{args.rounds} alternating rounds of {args.steps_per_round} steps each")
    print(f"{'':<28}{'median':>8}{'mean':>8}{'min':>8}")
    for name, ms in times.items():
        print(f"{name:<28}{statistics.median(ms):>8.2f}{statistics.mean(ms):>8.2f}{min(ms):>8.2f}")
    if len(times) == 2:
        ours, theirs = (statistics.median(ms) for ms in times.values())
        print(f"ratio (tinytransformer / PyTorch), medians: {ours / theirs:.2f}")

    if args.profile:
        totals, step_seconds = profile_steps(model, batches[0], optimizer, transformer_loss, steps=50)
        print("\nWhere a tinytransformer step goes (the tape's profile, 50 steps):")
        print(profile_table(totals, step_seconds, 50))



if __name__ == "__main__":
    main()
