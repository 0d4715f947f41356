"""Wall time to 99% held-out exact match: tinytransformer against PyTorch eager.

Both train the classroom model (length 10, 10 symbols, d_model 64, 4 heads,
2+2 layers, d_ff 128, batch 64, float32) with Adam (0.9, 0.98, 1e-9) under the
paper's warmup schedule, evaluate greedy exact match on the same 1000 held-out
examples every 100 steps, and stop at the target. For each setting and seed
the two libraries run one after the other, so a busy machine slows both alike.
Run from the repository root:

    PYTHONPATH=. python benchmarks/time_to_accuracy.py [--task reverse --seeds 0 1 2 --threads 1]

By default the schedule is tasks.TrainSettings' (lr_scale, warmup). Give
--lr-scales and --warmups several values to run a grid instead: the steps
each setting needs do not depend on the machine, so the grid can choose the
setting for both libraries. Without torch installed it measures
tinytransformer alone.
"""
import argparse
import itertools
import statistics

from common import classroom_config, import_torch_reference, use_threads


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=["copy", "reverse"], default="reverse")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--lr-scales", type=float, nargs="+", help="default: TrainSettings.lr_scale")
    parser.add_argument("--warmups", type=int, nargs="+", help="default: TrainSettings.warmup")
    parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads")
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--max-steps", type=int, default=3000)
    parser.add_argument("--no-torch", action="store_true", help="measure tinytransformer alone")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    use_threads(args.threads)
    from tinytransformer.tasks import TrainSettings
    from tinytransformer.train import train

    config = classroom_config()

    def ours(lr_scale, warmup, seed):
        r = train(config, args.task, seq_len=10, n_symbols=10, batch_size=64, steps=args.max_steps,
                  lr_scale=lr_scale, warmup=warmup, seed=seed, eval_every=TrainSettings.eval_every,
                  target_accuracy=args.target, progress=False)
        return r.reached_target_at_step, r.wall_seconds, r.train_seconds, r.ms_per_step

    runners = {"tinytransformer": ours}
    reference = None if args.no_torch else import_torch_reference(args.threads)
    if reference is not None:
        import torch
        model = reference.CLASSROOM_MODEL
        task = dict(reference.CLASSROOM_TASK, task=args.task)

        def theirs(lr_scale, warmup, seed):
            setting = dict(lr_scale=lr_scale, warmup=warmup, label_smoothing=0.0)
            r = reference.time_to_accuracy(model, task, setting, target=args.target, eval_every=TrainSettings.eval_every,
                                           max_steps=args.max_steps, seed=seed)
            return r["reached_target_at_step"], r["wall_seconds"], r["train_seconds"], r["ms_per_step"]
        runners[f"PyTorch {torch.__version__} eager"] = theirs

    settings = list(itertools.product(args.lr_scales or [TrainSettings.lr_scale], args.warmups or [TrainSettings.warmup], args.seeds))
    print(f"task {args.task}, target {args.target:.0%}, eval every {TrainSettings.eval_every} steps on 1000 "
          f"held-out examples, at most {args.max_steps} steps, {args.threads} thread(s)")
    print(f"{'':<26}{'lr_scale':>9}{'warmup':>7}{'seed':>5}{'reached at':>11}{'wall s':>8}"
          f"{'train s':>8}{'ms/step':>8}")
    walls = {name: [] for name in runners}
    for lr_scale, warmup, seed in settings:
        for name, run in runners.items():
            reached, wall, train_s, ms = run(lr_scale, warmup, seed)
            walls[name].append(wall)
            print(f"{name:<26}{lr_scale:>9}{warmup:>7}{seed:>5}{str(reached):>11}{wall:>8.1f}"
                  f"{train_s:>8.1f}{ms:>8.2f}", flush=True)
    if len(walls) == 2:
        ours_wall, theirs_wall = (statistics.median(w) for w in walls.values())
        print(f"median wall seconds: tinytransformer {ours_wall:.1f}, PyTorch {theirs_wall:.1f}; "
              f"ratio {ours_wall / theirs_wall:.2f}")


if __name__ == "__main__":
    main()
