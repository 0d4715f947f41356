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


def option(args, name):
    """An option of train as given, or else the task's default (tasks.DEFAULTS)."""
    from .tasks import DEFAULTS
    return getattr(args, name, DEFAULTS[args.task].get(name))


def fine_tuning_model(args, task):
    """classify --pretrained: a BERT with a new [CLS] head whose other weights come from a masked-LM
    checkpoint (sizes from the checkpoint, dropout from the options)."""
    from .checkpoint import load_checkpoint
    from .mlm import classifier_from
    from .nn import BERT

    if args.task != "classify":
        raise SystemExit(f"train: --pretrained is for --task classify, not {args.task}")
    pretrained = load_checkpoint(args.pretrained)
    if not isinstance(pretrained, BERT):
        raise SystemExit(f"train: --pretrained needs a BERT checkpoint (train --task mlm --save), "
                         f"got a {type(pretrained).__name__}")
    model = classifier_from(pretrained, 2, rng=args.seed, dropout=option(args, "dropout"))
    task.check(model.config)
    return model


def train_command(args):
    """Train the task's model (Transformer, GPT or BERT); print, and optionally save, the result.

    With --profile, time a few training steps op by op instead (profile_command).
    """
    from .checkpoint import save_checkpoint
    from .tasks import make_task, new_model
    from .train import EVAL_SEED_OFFSET, train

    task_options = {name: option(args, name) for name in ("seq_len", "vocab", "digits", "labelled")
                    if option(args, name) is not None}
    task = make_task(args.task, seed=args.seed + EVAL_SEED_OFFSET, variable_length=args.variable_length,
                     **task_options)
    if args.pretrained:
        model = fine_tuning_model(args, task)
        config = model.config
    else:
        model, config = None, task.config(d_model=option(args, "d_model"), n_heads=option(args, "heads"),
                                          n_layers=option(args, "layers"), d_ff=option(args, "d_ff"),
                                          dropout=option(args, "dropout"))
    if args.profile:
        return profile_command(args, task, model or new_model(task, config, rng=args.seed))
    target = option(args, "target_accuracy") if task.exact else None
    steps, lr, warmup, batch_size = (option(args, name) for name in ("steps", "lr", "warmup", "batch_size"))
    print(f"{args.task} task ({task.model_name}): {describe(task)}; {describe_model(task, config)}; "
          f"batch {batch_size}, Adam, warmup {warmup}, lr scale {lr}, seed {args.seed}"
          + (f", from {args.pretrained}" if args.pretrained else ""))
    result = train(None if model else config, task, batch_size=batch_size, steps=steps, lr_scale=lr, warmup=warmup,
                   clip_norm=args.clip_norm, label_smoothing=args.label_smoothing, seed=args.seed,
                   eval_every=option(args, "eval_every"), target_accuracy=target, model=model)
    reached = result.reached_target_at_step
    if task.exact:
        print(f"held-out exact match {result.exact_match:.1%} after {result.steps} steps; "
              + (f"reached {target:.0%} at step {reached}" if reached
                 else f"did not reach {target:.0%}" if target is not None else "no target"))
    else:
        print(f"held-out loss {result.held_out_loss:.4f} after {result.steps} steps "
              f"(training loss {result.final_loss:.4f})")
    print(f"{result.wall_seconds:.1f} s wall, {result.train_seconds:.1f} s in training steps, "
          f"{result.ms_per_step:.1f} ms/step")
    print("\n" + "\n".join(task.show(result.model)))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({key: value for key, value in result.summary().items() if key != "eval_history"},
                      f, indent=1)
    if args.save:
        save_checkpoint(result.model, args.save)
    if args.plot:
        plot_training(result, task, args.plot)
    return 0 if reached or target is None else 1


def describe(task):
    """The task's sizes in a few words, for the first line of train's output."""
    from .tasks import SequenceTask
    if isinstance(task, SequenceTask):
        return (f"{task.n_symbols} symbols, length {task.seq_len}"
                + (" (variable)" if task.variable_length else ""))
    if task.name == "addition":
        return f"{task.digits}-digit numbers, {len(task.split.held_out)} held-out problems"
    if task.name == "text":
        return f"{len(task.corpus.text)} characters, {task.seq_len} of context"
    halves = f"{task.k_min} to {task.k_max}" if task.variable_length else f"{task.k_max}"
    return f"{task.n_symbols} symbols, halves of {halves}"


def describe_model(task, c):
    """The model's sizes in a few words; the encoder-decoder's layers as encoder+decoder."""
    layers = f"{c.n_layers}+{c.n_layers}" if task.model_name == "Transformer" else f"{c.n_layers}"
    return f"d_model {c.d_model}, {c.n_heads} heads, {layers} layers, d_ff {c.d_ff}"


def profile_command(args, task, model):
    """Time --profile-steps training steps of the task's model on one batch, op by op, and print
    the table: milliseconds per step in each op's forward and backward, and each op's share of the step."""
    from .optim import Adam, WarmupSchedule
    from .profile import profile_steps, profile_table

    if args.profile_steps < 1:
        raise SystemExit(f"train: --profile-steps must be >= 1, got {args.profile_steps}")
    batch = task.batch(option(args, "batch_size"), np.random.default_rng(args.seed))
    optimizer = Adam(model.parameters(),
                     lr=WarmupSchedule(model.config.d_model, option(args, "warmup"), option(args, "lr"))(1))
    profile_steps(model, batch, optimizer, 1, task.loss)     # not timed: the first step allocates Adam's state
    totals, step_seconds = profile_steps(model, batch, optimizer, args.profile_steps, task.loss)
    print(f"profile of {args.profile_steps} training steps ({args.task}, batch {option(args, 'batch_size')}, "
          f"{describe(task)}; {task.model_name}, {describe_model(task, model.config)}),\n"
          "timed op by op by the tape: milliseconds per step, share of the step\n")
    print(profile_table(totals, step_seconds, args.profile_steps))
    return 0


def plot_training(result, task, path):
    """A PNG: the loss curve, and the last layer's attention on one held-out example (mean over heads):
    cross-attention for the encoder-decoder, self-attention for GPT and BERT.

    Row t of the heatmap is the position whose query attends (for the encoder-decoder, the decoder
    position that predicts the t-th target token).
    """
    from . import plot

    model = result.model.eval()
    inputs, key_labels, query_labels = task.plot_example()
    model(*inputs)                                                      # fills each layer's .probs
    probs_by_layer = model.attention_probs()
    names = list(probs_by_layer)
    last = ([name for name in names if name.endswith("cross_attn")] or names)[-1]
    probs = probs_by_layer[last][0].mean(axis=0)                         # (h, T_q, T_k) -> (T_q, T_k)
    figure, (ax_loss, ax_attention) = plot.plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    plot.loss_curve(result.losses, ax=ax_loss, steps=range(1, len(result.losses) + 1), log_scale=True,
                    title=f"{result.task}: training loss")
    plot.attention_heatmap(probs, x_labels=key_labels, y_labels=query_labels,
                           ax=ax_attention, title=f"{last}, mean over heads")
    figure.savefig(path, dpi=100)
    plot.plt.close(figure)


def per_task(name, fmt=str):
    """ "(default: copy/reverse 10, text 32, mlm/classify 6)": option `name`'s default for each task that has one."""
    from .tasks import DEFAULTS, NAMES
    groups = {}
    for task in NAMES:
        if DEFAULTS[task].get(name) is not None:
            groups.setdefault(fmt(DEFAULTS[task][name]), []).append(task)
    if len(groups) == 1 and sum(map(len, groups.values())) == len(NAMES):
        return f"(default: {next(iter(groups))})"
    return "(default: " + ", ".join(f"{'/'.join(tasks)} {value}" for value, tasks in groups.items()) + ")"


def add_train_parser(commands):
    from .tasks import MODEL_NAMES, NAMES

    models = ", ".join(f"{name} ({MODEL_NAMES[name]})" for name in NAMES)
    train = commands.add_parser("train", help="train a Transformer, GPT or BERT on one of the tasks",
                                description=f"Train a model on a task: {models}. The tasks with an exact "
                                            "answer train until held-out exact match reaches "
                                            "--target-accuracy (exit status 1 if it does not); text and mlm "
                                            "run all their steps and report the held-out loss.",
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    task_default = argparse.SUPPRESS          # the default depends on the task: per_task() says which

    def per_task_option(flag, help, type=int, fmt=str):
        name = flag[2:].replace("-", "_")
        train.add_argument(flag, type=type, default=task_default, help=f"{help} {per_task(name, fmt)}")

    train.add_argument("--task", choices=NAMES, default="reverse", help="the task (and so the model)")
    per_task_option("--seq-len", "copy/reverse: symbols per sequence; text: characters of context; "
                                 "mlm/classify: symbols in each half of a sequence")
    per_task_option("--vocab", "number of distinct symbols (copy, reverse, mlm, classify)")
    train.add_argument("--variable-length", action="store_true",
                       help="copy/reverse: lengths 1..seq-len; mlm/classify: halves of 3..seq-len; "
                            "padded with PAD")
    per_task_option("--digits", "addition: digits of each number")
    per_task_option("--labelled", "classify: labelled training sequences")
    train.add_argument("--pretrained", metavar="PATH",
                       help="classify: start from this masked-LM checkpoint (train --task mlm --save PATH)")
    per_task_option("--d-model", "width of every token vector")
    per_task_option("--heads", "attention heads (n_heads)")
    per_task_option("--layers", "layers (the encoder-decoder: encoder layers, and as many decoder layers)")
    per_task_option("--d-ff", "hidden width of the feed-forward sublayers")
    per_task_option("--dropout", "dropout probability", type=float)
    per_task_option("--batch-size", "sequences per step")
    per_task_option("--steps", "at most this many steps")
    per_task_option("--lr", "scale of the warmup learning-rate schedule", type=float)
    per_task_option("--warmup", "steps of linear learning-rate warmup")
    train.add_argument("--clip-norm", type=float, default=None, help="clip the gradient norm to this")
    train.add_argument("--label-smoothing", type=float, default=0.0, help="label smoothing of the cross-entropy")
    train.add_argument("--seed", type=int, default=0, help="seed of the weights and the training data")
    per_task_option("--eval-every", "steps between held-out evaluations (0 = only at the end)")
    per_task_option("--target-accuracy", "stop once held-out exact match reaches this", type=float)
    train.add_argument("--json", metavar="PATH", help="write the result (steps, times, losses, ...) as JSON")
    train.add_argument("--save", metavar="PATH", help="save the trained model as an .npz checkpoint")
    train.add_argument("--plot", metavar="PATH", help="save a PNG of the loss curve and an attention map")
    train.add_argument("--profile", action="store_true",
                       help="instead of training, time --profile-steps steps op by op (forward and backward) "
                            "and print the table")
    train.add_argument("--profile-steps", type=int, default=20, metavar="N", help="steps timed by --profile")
    train.set_defaults(run=train_command)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinytransformer",
                                     description="A Transformer in NumPy, with hand-derived backward passes: the "
                                                 "encoder-decoder (Transformer), the decoder-only GPT and "
                                                 "the encoder-only BERT. "
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
