"""`python -m tinytransformer train`: train a task's model; print, and optionally save, the result.

Every option sets one field: of the task's dataclass (tasks/), of its TransformerConfig, or of
tasks.TrainSettings. Each is declared beside its field, with its flag and help (tasks/options.py), and read from
there; its default is the task's own. Every value is checked before training starts.
"""
import argparse
import dataclasses
import json
import os
import re
import sys
import tempfile

import numpy as np

from .common import BadInput, say, seed


def declared_flags():
    """Every option of train, read from where it is declared (tasks/options.py: option(), MODEL_OPTIONS):
    {"task": {flag: Flag}, "model": {flag: Flag}, "training": {flag: Flag}}, and for each task flag the
    tasks that declare it with their help: {flag: [(task name, help), ...]}."""
    from ..tasks import TASKS, TrainSettings
    from ..tasks.options import flags_of, model_flags
    task_flags, declared_by = {}, {}
    for name, task_class in TASKS.items():
        for flag in flags_of(task_class):
            first = task_flags.setdefault(flag.flag, flag)
            if (first.field, first.type, first.choices) != (flag.field, flag.type, flag.choices):
                raise TypeError(f"{flag.flag} is declared for different fields or types: {first.field} "
                                f"({first.type.__name__}) and, in the {name} task, {flag.field} ({flag.type.__name__})")
            declared_by.setdefault(flag.flag, []).append((name, flag.help))
    flags = {"task": task_flags, "model": {f.flag: f for f in model_flags()},
             "settings": {f.flag: f for f in flags_of(TrainSettings)}}
    return flags, declared_by


def given(args, flags):
    """{field: value} of the options in flags ({flag: Flag}) given on the command line."""
    return {f.field: getattr(args, f.field) for f in flags.values() if hasattr(args, f.field)}


def as_flags(message, flags):
    """An error message from the library, with each option's field name written as its flag (n_heads -> --heads)."""
    for group in flags.values():
        for flag in group.values():
            message = re.sub(rf"(?<![\w-]){flag.field}(?!\w)", flag.flag, message)
    return message.removeprefix("train: ")


OUTPUT_EXTENSIONS = {"--save": (".npz",), "--json": (".json",), "--plot": (".png", ".svg", ".pdf")}


def check_train_outputs(args, pretrained):
    """Every file train will write must be writable before training starts (files.check_outputs): a trained
    model is never lost to a missing folder, a taken name or a missing plotting library."""
    from ..checkpoint import is_checkpoint
    from ..files import OutputError, check_outputs as check
    outputs = {flag: getattr(args, flag[2:]) for flag in OUTPUT_EXTENSIONS}
    try:
        check(outputs, OUTPUT_EXTENSIONS, inputs={"--pretrained": pretrained}, force=args.force,
              is_ours={"--save": is_checkpoint, "--json": is_summary, "--plot": is_plot})
    except OutputError as error:
        raise BadInput(str(error)) from None
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BadInput("--plot needs matplotlib: pip install 'tinytransformer[plot]'") from None


def is_summary(path):
    """True if path holds a summary train --json wrote."""
    from ..files import json_keys
    return {"task", "steps", "losses"} <= json_keys(path)


def is_plot(path):
    """True if path holds an image matplotlib wrote (it signs its PNG, SVG and PDF files)."""
    try:
        with open(path, "rb") as f:
            return b"matplotlib" in f.read(4096).lower()
    except OSError:
        return False


def save_or_keep(model, path, step, force=False):
    """Save the trained model to path (replacing a file that is not a checkpoint only if force); should that
    fail now (a full disk, a file put there during training), save it in a new temporary file instead and say
    where. A first Ctrl-C or SIGTERM while saving waits for the file to be written."""
    from .. import checkpoint
    from ..files import reason as why
    from ..train import StopSignals
    try:
        with StopSignals():
            checkpoint.save_checkpoint(model, path, step=step, force=force)
        return
    except ValueError as error:
        reason = error
    except OSError as error:
        reason = why(error) if error.errno else error
    fallback = os.path.join(tempfile.mkdtemp(prefix="tinytransformer-"), os.path.basename(path) or "model.npz")
    try:
        checkpoint.save_checkpoint(model, fallback, step=step)
    except (OSError, ValueError) as error:
        raise BadInput(f"could not write {path} ({reason}) nor {fallback} ({error}); the model is lost") from None
    print(f"train: could not write {path} ({reason}); the trained model is saved in {fallback}", file=sys.stderr)


def write_summary(path, summary, force):
    """The --json summary, written atomically (files.write_output: checked again now); a NaN or infinity is
    written as null (JSON has neither)."""
    from ..files import OutputError, write_output
    summary = {key: None if isinstance(value, float) and not np.isfinite(value) else value
               for key, value in summary.items()}
    text = json.dumps(summary, indent=1, allow_nan=False)
    try:
        write_output("--json", path, lambda f: f.write(text.encode("utf-8")), is_ours=is_summary, force=force)
    except OutputError as error:
        raise BadInput(str(error)) from None


def train_command(args):
    """Train the task's model (Transformer, GPT or BERT); print, and optionally save, the result.

    With --profile, time a few training steps op by op instead (profile_command).
    """
    from ..memory import check_fits, training_floor
    from ..tasks import make_task
    from ..train import EVAL_SEED_OFFSET, train

    flags, declared_by = declared_flags()
    task_options = given(args, flags["task"])
    if task_options.get("pretrained") == "":
        raise BadInput("--pretrained: expected a checkpoint's path, got '' (an unset shell variable?)")
    foreign = [flag.flag for flag in flags["task"].values()
               if flag.field in task_options and args.task not in [name for name, _ in declared_by[flag.flag]]]
    if foreign:
        raise BadInput(f"{', '.join(foreign)} is not an option of the {args.task} task")
    try:                                       # every value checked here, before any work starts
        task = make_task(args.task, seed=args.seed + EVAL_SEED_OFFSET, **task_options)
        config = task.config(**given(args, flags["model"]))
        task.check(config)
        settings = dataclasses.replace(task.settings, **given(args, flags["settings"]))
        pretrained = task_options.get("pretrained")
        if pretrained:                         # the checkpoint must be a model the task can start from
            config_used = task.new_model(config, np.random.default_rng(args.seed)).config
            task.check(config_used)
        sizes = describe_model(task, config_used if pretrained else config)
        check_fits(training_floor(config_used if pretrained else config, settings.batch_size),
                   "a training step of this model and batch", "train")
    except (ValueError, TypeError, OSError) as error:
        raise BadInput(as_flags(str(error), flags)) from None
    check_ignored(args, task, flags, pretrained)
    if args.profile:
        return profile_command(args, task, settings, task.new_model(config, np.random.default_rng(args.seed)))
    check_train_outputs(args, pretrained)
    say(f"{args.task} task ({task.model_class.__name__}): {task.describe()}; {sizes}; "     # a closed or full
        f"batch {settings.batch_size}, Adam, warmup {settings.warmup}, lr scale {settings.lr_scale}, seed {args.seed}"
        + (f", from {pretrained}" if pretrained else ""))                                  # stdout: found now
    result = train(config, task, seed=args.seed, **given(args, flags["settings"]))
    if result.stopped:
        return stopped_early(args, result)
    if args.save:          # first, before any line is printed: the trained model is what took the time
        save_or_keep(result.model, args.save, result.steps, args.force)
    reached = result.reached_target_at_step
    target = settings.target_accuracy if task.exact else None
    measures = {} if task.exact else task.held_out_measures(result.held_out_loss)     # text: per character
    if args.json:
        summary = {key: value for key, value in result.summary().items() if key != "eval_history"}
        summary.update(measures)                                            # text: per character
        summary.update({name: value for name, value in task.model_measures(result.model).items()
                        if name not in summary})      # translate: BLEU, chrF, examples; exact_match stays validation's
        write_summary(args.json, summary, args.force)
    if args.plot:
        plot_training(result, task, args.plot, args.force)
    if task.exact:
        say(f"validation {task.measure} {result.exact_match:.1%} "
            + (f"at step {reached} (stopped there: it reached {target:.0%})" if reached
               else f"after {result.steps} steps (" + (f"did not reach {target:.0%})" if target is not None
                                                       else "no target)"))
            + f"; test {task.measure} {result.test_exact_match:.1%} on {result.test_size} {task.examples}, "
            "touched once")
    else:
        say(f"held-out loss {result.held_out_loss:.4f} after {result.steps} steps "
            f"(training loss {result.final_loss:.4f})"
            + "".join(f"; {name.replace('_', ' ')} {value:.4f}" for name, value in measures.items()))
    say(f"{result.wall_seconds:.1f} s wall, {result.train_seconds:.1f} s in training steps, "
        f"{result.ms_per_step:.1f} ms/step")
    say("\n" + "\n".join(task.show(result.model)))
    return 0 if reached or target is None else 1


def check_ignored(args, task, flags, pretrained):
    """An option given where it would be ignored is refused, in one line: better than a silent no-op."""
    ignored = []
    if args.profile:
        ignored += [f"--{name}" for name in ("save", "json", "plot") if getattr(args, name) is not None]
    elif args.profile_steps is not None:
        ignored.append("--profile-steps (it times --profile)")
    if not task.exact and hasattr(args, "target_accuracy"):
        ignored.append(f"--target-accuracy (the {args.task} task has no exact answer to reach)")
    if pretrained:
        ignored += [f"{flag.flag} (the sizes are the --pretrained model's)" for flag in flags["model"].values()
                    if hasattr(args, flag.field) and flag.field != "dropout"]
    if ignored:
        what = "with --profile" if args.profile else "here"
        raise BadInput(f"{ignored[0]} would be ignored {what}; leave it out" if len(ignored) == 1 else
                       f"{', '.join(ignored)} would be ignored {what}; leave them out")


def stopped_early(args, result):
    """Training stopped by Ctrl-C, SIGTERM or a NaN loss: save the model of the last good step, say so in one
    line (exit status 130 for a signal, 1 for a NaN loss)."""
    if args.save and result.steps:
        save_or_keep(result.model, args.save, result.steps, args.force)
        kept = f"the model of step {result.steps} is saved in {args.save}"
    else:
        kept = "nothing saved (no --save)" if result.steps else "no step was completed; nothing saved"
    if args.json:
        write_summary(args.json, {key: value for key, value in result.summary().items() if key != "eval_history"},
                      args.force)
    print(f"train: {result.stopped}; {kept}", file=sys.stderr)
    return 130 if result.stopped.startswith("interrupted") else 1


def describe_model(task, c):
    """The model's sizes in a few words; the encoder-decoder's layers as encoder+decoder."""
    from ..nn import Transformer
    layers = f"{c.n_layers}+{c.n_layers}" if task.model_class is Transformer else f"{c.n_layers}"
    parts = [("RMSNorm", c.norm == "rms"), ("SwiGLU", c.activation == "swiglu"),
             ("rotary positions", c.positions == "rope"), ("no biases", not c.bias)]
    modern = ", ".join(name for name, chosen in parts if chosen)
    return f"d_model {c.d_model}, {c.n_heads} heads, {layers} layers, d_ff {c.d_ff}" + (f"; {modern}" if modern else "")


def profile_command(args, task, settings, model):
    """Time --profile-steps training steps of the task's model on one batch, op by op, and print
    the table: milliseconds per step in each op's forward and backward, and each op's share of the step."""
    from ..optim import Adam, WarmupSchedule
    from ..tools.profile import profile_steps, profile_table

    args.profile_steps = 20 if args.profile_steps is None else args.profile_steps
    if args.profile_steps < 1:
        raise BadInput(f"--profile-steps must be >= 1, got {args.profile_steps}")
    batch = task.batch(settings.batch_size, np.random.default_rng(args.seed))
    optimizer = Adam(model.parameters(), lr=WarmupSchedule(model.config.d_model, settings.warmup, settings.lr_scale)(1))
    profile_steps(model, batch, optimizer, task.loss, 1)     # not timed: the first step allocates Adam's state
    totals, step_seconds = profile_steps(model, batch, optimizer, task.loss, args.profile_steps)
    print(f"profile of {args.profile_steps} training steps ({args.task}, batch {settings.batch_size}, "
          f"{task.describe()}; {task.model_class.__name__}, {describe_model(task, model.config)}),\n"
          "timed op by op by the tape: milliseconds per step, share of the step\n")
    print(profile_table(totals, step_seconds, args.profile_steps))
    return 0


def plot_training(result, task, path, force=False):
    """A PNG: the loss curve, and the last layer's attention on one held-out example (mean over heads):
    cross-attention for the encoder-decoder, self-attention for GPT and BERT; the loss curve alone for a
    task without an example to plot (its plot_example gives None).

    Row t of the heatmap is the position whose query attends (for the encoder-decoder, the decoder
    position that predicts the t-th target token).
    """
    from ..tools import plot

    example = task.plot_example()
    figure, axes = plot.plt.subplots(1, 1 if example is None else 2, figsize=(6 if example is None else 12, 4.5),
                                     layout="constrained", squeeze=False)
    plot.loss_curve(result.losses, ax=axes[0, 0], steps=range(1, len(result.losses) + 1), log_scale=True,
                    title=f"{result.task}: training loss")
    if example is not None:
        inputs, key_labels, query_labels = example
        model = result.model.eval()
        model(*inputs)                                                  # fills each layer's .probs
        probs_by_layer = model.attention_probs()
        names = list(probs_by_layer)
        last = ([name for name in names if name.endswith("cross_attn")] or names)[-1]
        probs = probs_by_layer[last][0].mean(axis=0)                     # (h, T_q, T_k) -> (T_q, T_k)
        plot.attention_heatmap(probs, x_labels=key_labels, y_labels=query_labels,
                               ax=axes[0, 1], title=f"{last}, mean over heads")
    from ..files import OutputError, write_output
    try:
        write_output("--plot", path, lambda f: figure.savefig(f, format=os.path.splitext(path)[1][1:].lower(), dpi=100),
                     is_ours=is_plot, force=force)
    except OutputError as error:
        raise BadInput(str(error)) from None
    finally:
        plot.plt.close(figure)


def per_task_defaults(field):
    """ "(default: copy/reverse 10, text 32, mlm/classify 6)": field's default for each task that has it."""
    from ..nn import TransformerConfig
    from ..tasks import CLASSROOM_MODEL, TASKS, options_of
    model_defaults = {**{f.name: f.default for f in dataclasses.fields(TransformerConfig)
                         if f.default is not dataclasses.MISSING}, **CLASSROOM_MODEL}     # vocab_size has none
    groups = {}
    for name, task_class in TASKS.items():
        defaults = {**model_defaults, **options_of(task_class), **dataclasses.asdict(task_class.settings)}
        if defaults.get(field) is not None:
            groups.setdefault(str(defaults[field]), []).append(name)
    if not groups:
        return ""
    if len(groups) == 1 and sum(map(len, groups.values())) == len(TASKS):
        return f"(default: {next(iter(groups))})"
    return "(default: " + ", ".join(f"{'/'.join(names)} {value}" for value, names in groups.items()) + ")"


def task_help(declared):
    """One help for a flag several tasks declare ([(task name, help), ...]): "copy/reverse: symbols per
    sequence; text: tokens per sequence"."""
    from ..tasks import TASKS
    by_help = {}
    for name, help in declared:
        by_help.setdefault(help, []).append(name)
    if len(by_help) == 1 and len(declared) == len(TASKS):
        return next(iter(by_help))
    return "; ".join(f"{'/'.join(names)}: {help}" for help, names in by_help.items())


def add_argument(parser, flag, help):
    """The argparse option of one Flag, its default left out (the task's own: per_task_defaults)."""
    if flag.type is bool:
        parser.add_argument(flag.flag, dest=flag.field, action="store_true", default=argparse.SUPPRESS, help=help)
    else:
        parser.add_argument(flag.flag, dest=flag.field, type=flag.type, choices=flag.choices,
                            default=argparse.SUPPRESS, help=f"{help} {per_task_defaults(flag.field)}",
                            metavar=None if flag.choices else flag.metavar or flag.flag[2:].upper().replace("-", "_"))


class DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default at the end of its help, unless the help gives it already (a task's own default)
    or there is none to give (None; a switch's False)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def add_parser(commands):
    """Add the train command (train a model on one of the tasks) to the command line's commands."""
    from ..tasks import DEFAULT_TASK, TASKS

    models = ", ".join(f"{name} ({task_class.model_class.__name__})" for name, task_class in TASKS.items())
    inexact = " and ".join(name for name, task_class in TASKS.items() if not task_class.exact)
    train = commands.add_parser("train", help="train a Transformer, GPT or BERT on one of the tasks",
                                description=f"Train a model on a task: {models}. The tasks with an exact "
                                            "answer train until exact match on a validation split "
                                            "reaches --target-accuracy (exit status 1 if it does not), "
                                            "then report a test split measured once; "
                                            f"{inexact} run all their steps and report the held-out loss.",
                                formatter_class=DefaultsHelp)
    train.add_argument("--task", choices=tuple(TASKS), default=DEFAULT_TASK, help="the task (and so the model)")
    flags, declared_by = declared_flags()
    for flag in flags["task"].values():
        add_argument(train, flag, task_help(declared_by[flag.flag]))
    for flag in [*flags["model"].values(), *flags["settings"].values()]:
        add_argument(train, flag, flag.help)
    train.add_argument("--seed", type=seed, default=0, help="seed of the weights and the training data")
    train.add_argument("--json", metavar="PATH", help="write the result (steps, times, losses, ...) as JSON")
    train.add_argument("--save", metavar="PATH", help="save the trained model as an .npz checkpoint")
    train.add_argument("--plot", metavar="PATH", help="save a PNG of the loss curve and an attention map")
    train.add_argument("--force", action="store_true",
                       help="replace an existing file at --save, --json or --plot even if tinytransformer did not write it")
    train.add_argument("--profile", action="store_true",
                       help="instead of training, time --profile-steps steps op by op (forward and backward) "
                            "and print the table")
    train.add_argument("--profile-steps", type=int, default=None, metavar="N", help="steps timed by --profile (default: 20)")
    train.set_defaults(run=train_command)
