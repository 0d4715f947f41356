"""The tasks the training loop knows, by name: one file per family, each holding its data and its task class.

    task.py        Task: what the loop asks of a task; TrainSettings: the loop's settings; the measures
    options.py     option(): a field's default with its command-line flag and help; the model's flags
    batches.py     Batch, LMBatch, LabelledBatch, ImageBatch: what a task's batch() returns
    sequences.py   copy, reverse     for the encoder-decoder Transformer; SequenceTask, the base of such tasks
    addition.py    addition          for GPT: a+b= and the sum, reversed
    text.py        text              for GPT: the next token of a text, by characters or BPE
    masked_lm.py   BERT's vocabulary, its corpus and the 80/10/10 corruption
    sentence_order.py  BERT's second objective, adapted: is the second half in order?
    cloze.py       classify's cloze readout: the masked-LM head answers the question
    classification.py  ClassificationTask: the base of BERT's tasks that label a sequence through [CLS]
    bert_tasks.py  mlm, classify     for BERT: masked-LM pretraining, then a question
    german/        a German grammar of a first-year course: a sentence's description written in English and
                   in German, and sentences drawn from a seed
    translation.py translate         for the encoder-decoder: English to German, on the grammar's sentences
    digits.py      digits            for the vision encoder: handwritten digits cut into patches

    task = make_task("reverse", seq_len=8)       # the task's dataclass, its other fields at their defaults
    result = train(task.config(), task)          # train.py
"""
import dataclasses

from .addition import AdditionTask
from .batches import Batch, ImageBatch, LabelledBatch, LMBatch  # noqa: F401  (the batch kinds, with the tasks that make them)
from .bert_tasks import ClassifyTask, MaskedLMTask
from .classification import ClassificationTask  # noqa: F401  (the base a new classification task reuses)
from .sequences import CopyTask, ReverseTask, SequenceTask  # noqa: F401  (SequenceTask: the base of copy and reverse)
from .task import BERT_STYLE, CLASSROOM_MODEL, GPT_STYLE, Task, TrainSettings, exact_match, held_out_loss, \
    language_model_loss  # noqa: F401  (re-exported: no __all__, so that the book documents each name once)
from .text import TextTask
from .digits import DigitsTask
from .translation import TranslationTask

# The tasks by name, in the order the command line lists them: a new task is one file of tasks/, its import above
# and its line here.
TASKS = {task.name: task for task in (
    CopyTask,
    ReverseTask,
    AdditionTask,
    TextTask,
    MaskedLMTask,
    ClassifyTask,
    TranslationTask,
    DigitsTask,
)}
DEFAULT_TASK = "reverse"          # what train() and `python -m tinytransformer train` train when no task is named


def options_of(task_class):
    """The data options of a task class and their defaults: {field name: default}."""
    return {field.name: field.default for field in dataclasses.fields(task_class)}


def make_task(name, seed=0, **options):
    """The task called name, with options (its dataclass fields: seq_len, digits, ...) changed from their
    defaults. seed draws the held-out data of the tasks that draw it (copy, reverse, mlm, classify)."""
    if name not in TASKS:
        raise ValueError(f"make_task: name must be one of {tuple(TASKS)}, got {name!r}")
    known = options_of(TASKS[name])
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"make_task: the {name} task has no option {', '.join(unknown)}; "
                         f"its options are {', '.join(known)}")
    if "seed" in known:
        options = {"seed": seed, **options}
    return TASKS[name](**options)
