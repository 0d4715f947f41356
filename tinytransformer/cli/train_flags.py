"""The train command's options, read from where each is declared (tasks/options.py), and their help.

Every option sets one field: of the task's dataclass (tasks/), of its model's config, or of
tasks.TrainSettings. Each is declared beside its field with its flag and help; its default is the task's
own, and the help lists each task's default. A library error names a field; as_flags names its flag.
"""
import argparse
import dataclasses
import re


def declared_flags():
    """Every option of train, read from where it is declared (tasks/options.py: option(), MODEL_OPTIONS):
    {"task": {flag: Flag}, "model": {flag: Flag}, "settings": {flag: Flag}}, and for each task flag the
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


def add_argument(parser, flag, help):
    """The argparse option of one Flag, its default left out (the task's own: per_task_defaults)."""
    if flag.type is bool:
        parser.add_argument(flag.flag, dest=flag.field, action="store_true", default=argparse.SUPPRESS, help=help)
    else:
        parser.add_argument(flag.flag, dest=flag.field, type=flag.type, choices=flag.choices,
                            default=argparse.SUPPRESS, help=f"{help} {per_task_defaults(flag.field)}",
                            metavar=None if flag.choices else flag.metavar or flag.flag[2:].upper().replace("-", "_"))


def per_task_defaults(field):
    """ "(default: copy/reverse 10, text 32, mlm/classify 6)": field's default for each task that has it;
    "(default: 128; text --block modern: 85)" where one value is every task's but another option's choice
    changes it (Task.model_styles)."""
    from ..tasks import CLASSROOM_MODEL, TASKS, options_of
    groups, own = {}, {}                     # {value: [task, or task and the flags that choose it]}
    for name, task_class in TASKS.items():
        model_defaults = {f.name: f.default for f in dataclasses.fields(task_class.model_class.config_class)
                          if f.default is not dataclasses.MISSING}                    # vocab_size has none
        for chosen_by, style in task_class.model_styles().items():
            defaults = {**model_defaults, **CLASSROOM_MODEL, **style, **options_of(task_class),
                        **dataclasses.asdict(task_class.settings)}
            value = defaults.get(field)
            if value is None or (chosen_by and str(value) == own.get(name)):
                continue
            own.setdefault(name, str(value))
            groups.setdefault(str(value), []).append(f"{name} {chosen_by}".strip())
    if not groups:
        return ""
    common = next((value for value, names in groups.items() if set(TASKS) <= set(names)), None)
    if common is not None:
        others = "".join(f"; {'/'.join(names)}: {value}" for value, names in groups.items() if value != common)
        return f"(default: {common}{others})"
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


class DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default at the end of its help, unless the help gives it already (a task's own default)
    or there is none to give (None; a switch's False)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)
