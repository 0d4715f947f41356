"""`python -m tinytransformer train`: train a task's model; print, and optionally save, the result.

The options come from where they are declared (train_flags.py); every value is checked before training
starts, and so is every file the command will write (train_outputs.py).
"""
import dataclasses

import numpy as np

from .common import BadInput, say, seed, tell
from .train_flags import DefaultsHelp, add_argument, as_flags, declared_flags, given, task_help
from .train_outputs import check_train_outputs, plot_training, save_or_keep, write_summary

MAX_PROFILE_STEPS = 10_000     # a profile's table settles within a few dozen steps


def train_command(args):
    """Train the task's model (Transformer, GPT or BERT); print, and optionally save, the result.

    With --profile, time a few training steps op by op instead (profile_command).
    """
    from ..memory import check_fits, evaluation_floor, training_floor
    from ..tasks import make_task
    from ..train import EVAL_SEED_OFFSET, StopSignals, check_settings, train

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
        check_settings(settings)
        used = config_used if pretrained else config
        sizes = describe_model(task, used)
        check_fits(training_floor(used, settings.batch_size), "a training step of this model and batch", "train")
        check_fits(evaluation_floor(used, getattr(task, "n_validation", 0)),     # evaluated in one batch
                   f"evaluating {getattr(task, 'n_validation', 0)} validation sequences at once", "train")
    except (ValueError, TypeError, OSError) as error:
        raise BadInput(as_flags(str(error), flags)) from None
    check_ignored(args, task, flags, pretrained)
    if args.profile:
        return profile_command(args, task, settings, task.new_model(config, np.random.default_rng(args.seed)))
    check_train_outputs(args, pretrained)
    say(f"{args.task} task ({task.model_class.__name__}): {task.describe()}; {sizes}; "     # a closed or full
        f"batch {settings.batch_size}, Adam, warmup {settings.warmup}, lr scale {settings.lr_scale}, seed {args.seed}"
        + (f", from {pretrained}" if pretrained else ""))                                  # stdout: found now
    with StopSignals() as signals:           # from here to the end a signal never costs the model (train.py)
        signals.the_last_work()
        result = train(config, task, seed=args.seed, **given(args, flags["settings"]))
        saved = save_or_keep(result.model, args.save, result.steps, args.force) if args.save and result.steps else None
        if result.stopped or signals.received:     # the model first, before any line: it is what took the time
            return stopped_early(args, result, saved, signals.received)
        status = report(args, task, settings, result)
    return 130 if signals.received else status


def report(args, task, settings, result):
    """Write --json and --plot, print the measures and the examples; the exit status (1: target not reached)."""
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


def stopped_early(args, result, saved, received):
    """Training stopped by a signal (Ctrl-C, SIGTERM, SIGHUP; also one just after the last step) or a NaN loss:
    the model of the last good step is saved (at `saved`, the path it went to); say so in one line (exit status
    130 for a signal, 1 for a NaN loss)."""
    why = result.stopped or f"interrupted ({received}) after step {result.steps}, the last"
    if saved:
        kept = f"the model of step {result.steps} is saved in {saved}"
    else:
        kept = "nothing saved (no --save)" if result.steps else "no step was completed; nothing saved"
    if args.json:
        write_summary(args.json, {key: value for key, value in result.summary().items() if key != "eval_history"},
                      args.force)
    tell(f"train: {why}; {kept}")
    return 130 if why.startswith("interrupted") else 1


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
    from ..optim import AdamFast, WarmupSchedule
    from ..tools.profile import profile_steps, profile_table

    args.profile_steps = 20 if args.profile_steps is None else args.profile_steps
    if not 1 <= args.profile_steps <= MAX_PROFILE_STEPS:
        raise BadInput(f"--profile-steps must be from 1 to {MAX_PROFILE_STEPS:,} (each step is timed op by op), "
                       f"got {args.profile_steps:,}")
    batch = task.batch(settings.batch_size, np.random.default_rng(args.seed))
    optimizer = AdamFast(model.parameters(), lr=WarmupSchedule(model.config.d_model, settings.warmup, settings.lr_scale)(1))
    profile_steps(model, batch, optimizer, task.loss, 1)     # not timed: the first step allocates Adam's state
    totals, step_seconds = profile_steps(model, batch, optimizer, task.loss, args.profile_steps)
    print(f"profile of {args.profile_steps} training steps ({args.task}, batch {settings.batch_size}, "
          f"{task.describe()}; {task.model_class.__name__}, {describe_model(task, model.config)}),\n"
          "timed op by op by the tape: milliseconds per step, share of the step\n")
    print(profile_table(totals, step_seconds, args.profile_steps))
    return 0


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
