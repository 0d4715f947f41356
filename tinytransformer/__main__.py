"""Command line: `python -m tinytransformer train | gradcheck`."""
import argparse
import json
import os
import sys

import numpy as np

from .speed_settings import use_speed_settings


def gradcheck_command(args):
    """Check every op's backward against finite differences and print a table."""
    from .gradcheck import gradcheck
    from .gradcheck_every_op import CHECKS

    rng = np.random.default_rng(args.seed)
    print("Gradient check of every op: float64, central differences (eps=1e-6), random upstream "
          "gradient,\npass = allclose(analytic, numeric, atol=1e-5, rtol=1e-3)\n")
    print(f"{'op':<28}{'input':<10}{'max rel error':>15}  result")
    print("-" * 62)
    failures = total = 0
    for check in CHECKS:
        inputs = check.make_inputs(rng)
        results = gradcheck(check.fn, *inputs.values(), names=list(inputs), rng=rng, raise_on_failure=False)
        total += len(results)
        for r in results:
            failures += not r.passed
            print(f"{check.name:<28}{r.name:<10}{r.max_rel_error:>15.2e}  {'pass' if r.passed else 'FAIL'}")
    print("-" * 62)
    print(f"{total - failures} of {total} gradients agree with finite differences"
          + ("" if not failures else f"; {failures} FAILED"))
    return 1 if failures else 0


def train_command(args):
    """Train the classroom Transformer on copy or reverse; print, and optionally save, the result.

    With --profile, time a few training steps op by op instead (profile_command).
    """
    from .checkpoint import save_checkpoint
    from .data import make_batch, token_names, vocab_size
    from .decode import greedy
    from .nn import TransformerConfig
    from .train import EVAL_SEED_OFFSET, train

    config = TransformerConfig(vocab_size=vocab_size(args.vocab), d_model=args.d_model, n_heads=args.heads,
                               n_layers=args.layers, d_ff=args.d_ff, max_len=args.seq_len + 1,
                               dropout=args.dropout)
    if args.profile:
        return profile_command(args, config)
    print(f"{args.task} task: {args.vocab} symbols, length {args.seq_len}"
          f"{' (variable)' if args.variable_length else ''}; d_model {config.d_model}, {config.n_heads} heads, "
          f"{config.n_layers}+{config.n_layers} layers, d_ff {config.d_ff}; batch {args.batch_size}, "
          f"Adam, warmup {args.warmup}, lr scale {args.lr}, seed {args.seed}")
    result = train(config, args.task, seq_len=args.seq_len, n_symbols=args.vocab, batch_size=args.batch_size,
                   steps=args.steps, lr_scale=args.lr, warmup=args.warmup, clip_norm=args.clip_norm,
                   label_smoothing=args.label_smoothing, variable_length=args.variable_length,
                   seed=args.seed, eval_every=args.eval_every, target_accuracy=args.target_accuracy)
    reached = result.reached_target_at_step
    print(f"held-out exact match {result.exact_match:.1%} after {result.steps} steps; "
          + (f"reached {args.target_accuracy:.0%} at step {reached}" if reached
             else f"did not reach {args.target_accuracy:.0%}"))
    print(f"{result.wall_seconds:.1f} s wall, {result.train_seconds:.1f} s in training steps, "
          f"{result.ms_per_step:.1f} ms/step")

    examples = make_batch(args.task, 3, args.seq_len, args.vocab, args.seed + EVAL_SEED_OFFSET,
                          args.variable_length)
    predicted = greedy(result.model, examples.src, max_len=args.seq_len + 1)
    print("\nheld-out examples (symbols as 0, 1, ..., . for PAD):")
    for rows in zip(examples.src, examples.tgt_out, predicted):
        source, target, prediction = (" ".join(token_names(ids)) for ids in rows)
        print(f"  source     {source}\n  target     {target}\n  predicted  {prediction}\n")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({key: value for key, value in result.summary().items() if key != "eval_history"},
                      f, indent=1)
    if args.save:
        save_checkpoint(result.model, args.save)
    if args.plot:
        plot_training(result, examples, args.plot)
    return 0 if reached or args.target_accuracy is None else 1


def profile_command(args, config):
    """Time --profile-steps training steps of the configured model on one batch, op by op, and print
    the table: milliseconds per step in each op's forward and backward, and each op's share of the step."""
    from .data import make_batch
    from .nn import Transformer
    from .optim import Adam, WarmupSchedule
    from .profile import profile_steps, profile_table

    if args.profile_steps < 1:
        raise SystemExit(f"train: --profile-steps must be >= 1, got {args.profile_steps}")
    model = Transformer(config, rng=args.seed)
    batch = make_batch(args.task, args.batch_size, args.seq_len, args.vocab, args.seed, args.variable_length)
    optimizer = Adam(model.parameters(), lr=WarmupSchedule(config.d_model, args.warmup, args.lr)(1))
    profile_steps(model, batch, optimizer, steps=1)          # not timed: the first step allocates Adam's state
    totals, step_seconds = profile_steps(model, batch, optimizer, args.profile_steps)
    print(f"profile of {args.profile_steps} training steps ({args.task}, batch {args.batch_size}, length "
          f"{args.seq_len}; d_model {config.d_model}, {config.n_heads} heads, {config.n_layers}+{config.n_layers} "
          f"layers, d_ff {config.d_ff}),\ntimed op by op by the tape: milliseconds per step, share of the step\n")
    print(profile_table(totals, step_seconds, args.profile_steps))
    return 0


def plot_training(result, examples, path):
    """A PNG: the loss curve, and the cross-attention of the first example (mean over heads).

    Row t of the heatmap is the decoder position that predicts the t-th target token.
    """
    from . import plot
    from .data import token_names

    model = result.model.eval()
    src, tgt_in, tgt_out = (ids[:1] for ids in examples)                # one example, (1, T)
    model(src, tgt_in)                                                  # fills each layer's .probs  
    last = f"decoder.{model.config.n_layers - 1}.cross_attn"
    probs = model.attention_probs()[last][0].mean(axis=0)                # (T_tgt, T_src)
    figure, (ax_loss, ax_attention) = plot.plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    plot.loss_curve(result.losses, ax=ax_loss, steps=range(1, len(result.losses) + 1), log_scale=True,
                    title=f"{result.task}: training loss")
    plot.attention_heatmap(probs, x_labels=token_names(src[0]), y_labels=token_names(tgt_out[0]),
                           ax=ax_attention, title=f"{last}, mean over heads")
    figure.savefig(path, dpi=100)
    plot.plt.close(figure)


def add_train_parser(commands):
    from .train import EVAL_EVERY, LR_SCALE, WARMUP

    train = commands.add_parser("train", help="train a Transformer on the copy or reverse task",
                                description="Train the classroom Transformer until held-out exact match "
                                            "reaches --target-accuracy (exit status 1 if it does not).",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    train.add_argument("--task", choices=["copy", "reverse"], default="reverse", help="the toy task")
    train.add_argument("--seq-len", type=int, default=10, help="symbols per sequence")
    train.add_argument("--vocab", type=int, default=10, help="number of distinct symbols")
    train.add_argument("--variable-length", action="store_true", help="lengths 1..seq-len, padded with PAD")
    train.add_argument("--d-model", type=int, default=64, help="width of every token vector")
    train.add_argument("--heads", type=int, default=4, help="attention heads (n_heads)")
    train.add_argument("--layers", type=int, default=2, help="encoder layers, and as many decoder layers")
    train.add_argument("--d-ff", type=int, default=128, help="hidden width of the feed-forward sublayers")
    train.add_argument("--dropout", type=float, default=0.0, help="dropout probability")
    train.add_argument("--batch-size", type=int, default=64, help="sequences per step")
    train.add_argument("--steps", type=int, default=3000, help="at most this many steps")
    train.add_argument("--lr", type=float, default=LR_SCALE, help="scale of the warmup learning-rate schedule")
    train.add_argument("--warmup", type=int, default=WARMUP, help="steps of linear learning-rate warmup")
    train.add_argument("--clip-norm", type=float, default=None, help="clip the gradient norm to this")
    train.add_argument("--label-smoothing", type=float, default=0.0, help="label smoothing of the cross-entropy")
    train.add_argument("--seed", type=int, default=0, help="seed of the weights and the training data")
    train.add_argument("--eval-every", type=int, default=EVAL_EVERY,
                       help="steps between held-out evaluations (0 = only at the end)")
    train.add_argument("--target-accuracy", type=float, default=0.99, help="stop once exact match reaches this")
    train.add_argument("--json", metavar="PATH", help="write the result (steps, times, losses, ...) as JSON")
    train.add_argument("--save", metavar="PATH", help="save the trained model as an .npz checkpoint")
    train.add_argument("--plot", metavar="PATH", help="save a PNG of the loss curve and a cross-attention map")
    train.add_argument("--profile", action="store_true",
                       help="instead of training, time --profile-steps steps op by op (forward and backward) "
                            "and print the table")
    train.add_argument("--profile-steps", type=int, default=20, metavar="N", help="steps timed by --profile")
    train.set_defaults(run=train_command)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinytransformer",
                                     description="A Transformer in NumPy, with hand-derived backward passes. "
                                                 "At start-up the command line calls tt.use_speed_settings(): "
                                                 "one OpenBLAS thread (unless OPENBLAS_NUM_THREADS or "
                                                 "OMP_NUM_THREADS is set) and glibc keeping freed memory "
                                                 "for reuse. Importing the library sets neither.")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("gradcheck", help="check every op's backward pass against finite differences")
    check.add_argument("--seed", type=int, default=0, help="seed of the random inputs and upstream gradients")
    check.set_defaults(run=gradcheck_command)
    add_train_parser(commands)
    args = parser.parse_args(argv)
    user_chose_threads = any(name in os.environ for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))
    use_speed_settings(blas_threads=None if user_chose_threads else 1)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
