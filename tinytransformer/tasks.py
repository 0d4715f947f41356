"""Every task the training loop knows, as a small object: which model, a batch, its loss, its evaluation.

    task = AdditionTask(digits=3)
    config = task.config(d_model=64, n_heads=4, n_layers=2, d_ff=128, dropout=0.0)
    model = new_model(task, config, rng)                  # tt.nn.GPT here
    loss = task.loss(model, task.batch(64, rng))          # inside a Tape
    task.evaluate(model)                                  # held-out exact match (or loss)

exact is True for the tasks with one right answer per example (copy,
reverse, addition, classify): evaluate returns the held-out exact match and
training may stop at a target. For the language models (text, mlm) it
returns the held-out loss (lower is better) and training runs all its steps.
"""
import numpy as np

from . import addition, functional as F, mlm, nn, text
from .data import CLS, EOS, MASK, MLM_N_SPECIAL, PAD, make_batch, token_names, vocab_size
from .decode import greedy, inference
from .text import CharCorpus

NAMES = ("copy", "reverse", "addition", "text", "mlm", "classify")
MODEL_NAMES = {"copy": "Transformer", "reverse": "Transformer", "addition": "GPT", "text": "GPT",
               "mlm": "BERT", "classify": "BERT"}
# The defaults of `python -m tinytransformer train --task NAME`: the model's sizes and the schedule.
# copy/reverse: the fewest steps to 99% held-out exact match on the classroom model: over 20 seeds,
# scale 1 with warmup 100 took a median 400 steps, scale 2 with warmup 200 800 (benchmarks/README.md).
# The others: README's "Train" section gives how they were chosen.
CLASSROOM = dict(d_model=64, heads=4, layers=2, d_ff=128, dropout=0.0, batch_size=64, lr=1.0, warmup=100,
                 eval_every=100, target_accuracy=0.99)
DEFAULTS = {
    "copy": dict(CLASSROOM, steps=3000, seq_len=10, vocab=10),
    "reverse": dict(CLASSROOM, steps=3000, seq_len=10, vocab=10),
    "addition": dict(CLASSROOM, steps=3000, digits=2),
    "text": dict(CLASSROOM, steps=300, seq_len=32, batch_size=32, target_accuracy=None),   # see README
    "mlm": dict(CLASSROOM, steps=600, seq_len=6, vocab=8, target_accuracy=None),
    "classify": dict(CLASSROOM, steps=300, seq_len=6, vocab=8, labelled=256, eval_every=50, lr=0.3),
}


GPT_STYLE = dict(positions="learned", norm_first=True, activation="gelu")   # GPT-2: pre-LN, GELU
BERT_STYLE = dict(positions="learned", norm_first=False, activation="gelu")   # BERT: post-LN, GELU


def exact_match(pred_ids, tgt_out):
    """Fraction of rows whose prediction is right at every position up to and including EOS.

    pred_ids (B, L) decoded ids without BOS (PAD after EOS), tgt_out (B, T)
    with one EOS per row. A prediction shorter than its target's EOS is wrong;
    what comes after the target's EOS is not compared.
    """
    pred_ids, tgt_out = np.asarray(pred_ids), np.asarray(tgt_out)
    if pred_ids.ndim != 2 or tgt_out.ndim != 2 or len(pred_ids) != len(tgt_out):
        raise ValueError(f"exact_match: need pred_ids (B, L) and tgt_out (B, T) with the same B, "
                         f"got {pred_ids.shape} and {tgt_out.shape}")
    has_eos = (tgt_out == EOS).any(axis=1)                                  # (B,)
    if not has_eos.all():
        raise ValueError(f"exact_match: row {np.argmin(has_eos)} of tgt_out has no EOS")
    B, T = tgt_out.shape
    pred = np.full((B, T), PAD, dtype=pred_ids.dtype)                       # (B, T) cut or PAD-extended
    width = min(T, pred_ids.shape[1])
    pred[:, :width] = pred_ids[:, :width]
    eos_at = (tgt_out == EOS).argmax(axis=1)                                # (B,) first EOS of each row
    compared = np.arange(T)[None, :] <= eos_at[:, None]                     # (B, T) up to and including EOS
    right = ((pred == tgt_out) | ~compared).all(axis=1)                     # (B,)
    return float(right.mean())


def transformer_loss(model, batch, label_smoothing=0.0):
    """Cross-entropy of the encoder-decoder on a copy/reverse Batch, PAD not counted."""
    logits = model(batch.src, batch.tgt_in)                                 # (B, T + 1, V)
    return F.cross_entropy(logits, batch.tgt_out, ignore_index=PAD, label_smoothing=label_smoothing)


def evaluate_sequences(model, batch):
    """Exact match of greedy decoding on a held-out copy/reverse Batch (as many steps as tgt_out has positions)."""
    return exact_match(greedy(model, batch.src, max_len=batch.tgt_out.shape[1]), batch.tgt_out)


def held_out_loss(model, ids, targets):
    """Mean cross-entropy over the counted targets, in eval mode and outside any Tape (nothing recorded)."""
    with inference(model, "held_out_loss"):
        return float(F.cross_entropy(model(ids), targets, ignore_index=PAD).data)


def language_model_loss(model, batch, label_smoothing=0.0):
    """Cross-entropy of model(ids) (B, T, V) against targets (B, T), PAD not counted: GPT and BERT alike."""
    logits = model(batch.ids)                                                # (B, T, V)
    return F.cross_entropy(logits, batch.targets, ignore_index=PAD, label_smoothing=label_smoothing)


def needs(config, name, vocab, max_len):
    if config.vocab_size < vocab or config.max_len < max_len:
        raise ValueError(f"train: the config (vocab_size={config.vocab_size}, max_len={config.max_len}) "
                         f"has no room for the {name} task; it needs vocab_size >= {vocab} "
                         f"and max_len >= {max_len}")


class SequenceTask:
    """copy or reverse for the encoder-decoder Transformer (data.make_batch); evaluated by greedy decoding."""
    model_name, exact = "Transformer", True

    def __init__(self, name="reverse", seq_len=10, n_symbols=10, variable_length=False, eval_size=1000,
                 eval_seed=0):
        self.name, self.seq_len, self.n_symbols, self.variable_length = name, seq_len, n_symbols, variable_length
        self.eval_set = make_batch(name, eval_size, seq_len, n_symbols, eval_seed, variable_length)

    def config(self, **sizes):
        return nn.TransformerConfig(vocab_size=vocab_size(self.n_symbols), max_len=self.seq_len + 1, **sizes)

    def check(self, config):
        needs(config, self.name, vocab_size(self.n_symbols), self.seq_len + 1)       # + 1: EOS

    def batch(self, batch_size, rng):
        return make_batch(self.name, batch_size, self.seq_len, self.n_symbols, rng, self.variable_length)

    loss = staticmethod(transformer_loss)

    def evaluate(self, model):
        return evaluate_sequences(model, self.eval_set)

    def show(self, model, n=3):
        """Lines showing n held-out examples and the model's greedy answers."""
        src, _, tgt_out = (ids[:n] for ids in self.eval_set)
        predicted = greedy(model, src, max_len=tgt_out.shape[1])
        lines = ["held-out examples (symbols as 0, 1, ..., . for PAD):"]
        for rows in zip(src, tgt_out, predicted):
            source, target, prediction = (" ".join(token_names(ids)) for ids in rows)
            lines += [f"  source     {source}", f"  target     {target}", f"  predicted  {prediction}", ""]
        return lines

    def plot_example(self):
        """(the model's inputs, key labels, query labels) of one held-out example, for an attention map."""
        src, tgt_in, tgt_out = (ids[:1] for ids in self.eval_set)
        return (src, tgt_in), token_names(src[0]), token_names(tgt_out[0])


class AdditionTask:
    """addition.py's problems for GPT; evaluated by greedy decoding of the held-out problems."""
    name, model_name, exact = "addition", "GPT", True

    def __init__(self, digits=3, n_held_out=None, split_seed=0):
        """n_held_out: by default 1000, or a tenth of all problems if that is fewer."""
        self.digits = digits
        if n_held_out is None:
            n_held_out = min(1000, 10 ** (2 * digits) // 10)
        self.split = addition.Split(digits, n_held_out, split_seed)
        self.eval_set = self.split.held_out_problems()

    def config(self, **sizes):
        return nn.TransformerConfig(vocab_size=addition.vocab_size(), max_len=3 * self.digits + 3,
                                    **GPT_STYLE, **sizes)

    def check(self, config):
        needs(config, self.name, addition.vocab_size(), 3 * self.digits + 3)

    def batch(self, batch_size, rng):
        return self.split.training_batch(batch_size, rng)

    loss = staticmethod(language_model_loss)

    def evaluate(self, model):
        prompt, answer = self.eval_set
        return exact_match(greedy(model, prompt, max_len=answer.shape[1]), answer)

    def show(self, model, n=3):
        prompt, answer = (ids[:n] for ids in self.eval_set)
        predicted = greedy(model, prompt, max_len=answer.shape[1])
        lines = ["held-out problems (the sum read back in the usual order):"]
        for p, a, guess in zip(prompt, answer, predicted):
            lines.append(f"  {addition.problem_text(p, a):<{4 * self.digits + 4}} predicted "
                         f"{addition.problem_text(p, guess)}")
        return lines

    def plot_example(self):
        ids = addition.as_batch(addition.Problems(*(ids[:1] for ids in self.eval_set))).ids   # (1, T)
        names = list(addition.problem_text(ids[0]))
        return (ids,), names, names


class TextTask:
    """Next-character prediction on text.py's corpus for GPT; evaluated by the held-out loss."""
    name, model_name, exact = "text", "GPT", False

    def __init__(self, seq_len=64, corpus=None):
        self.seq_len = seq_len
        self.corpus = CharCorpus() if corpus is None else corpus
        self.eval_set = self.corpus.held_out_batch(seq_len)

    def config(self, **sizes):
        return nn.TransformerConfig(vocab_size=self.corpus.vocab_size, max_len=self.seq_len,
                                    **GPT_STYLE, **sizes)

    def check(self, config):
        needs(config, self.name, self.corpus.vocab_size, self.seq_len)

    def batch(self, batch_size, rng):
        return self.corpus.training_batch(batch_size, self.seq_len, rng)

    loss = staticmethod(language_model_loss)

    def evaluate(self, model):
        return held_out_loss(model, *self.eval_set)

    def show(self, model, n=3, seed=0):
        """n samples of 200 characters after the start of the held-out part (temperature 0.8)."""
        start = self.corpus.decode(self.corpus.held_out_ids[:min(16, self.seq_len // 2)])
        lines = [f"generated after {start!r} (temperature 0.8):"]
        for i in range(n):
            lines += [text.generate(model, self.corpus, start, 200, rng=seed + i), ""]
        return lines

    def plot_example(self):
        ids = self.eval_set.ids[:1, :32]                                      # (1, up to 32)
        names = list(self.corpus.decode(ids[0]))
        return (ids,), names, names


def min_half(k_max, variable_length):
    """The shortest half of mlm/classify's sequences: k_max (every half as long), or 3 with variable_length.

    With halves of one length, the middle of every sequence is at the same position; with variable
    lengths it moves, and the model must find it before it can compare the halves. The classroom
    model does not learn that in the default steps: its masked-LM loss stays above what knowing only
    which symbols the other half holds gives, and [CLS] stays near chance (README, "Train a
    Transformer, a GPT or a BERT").
    """
    return min(3, k_max) if variable_length else k_max


class MaskedLMTask:
    """Masked-LM pretraining of BERT on mlm.py's corpus; evaluated by the loss on a fixed corrupted held-out set."""
    name, model_name, exact = "mlm", "BERT", False

    def __init__(self, k_max=6, n_symbols=8, variable_length=False, p=0.15, eval_size=1000, eval_seed=0):
        self.k_max, self.n_symbols, self.variable_length, self.p = k_max, n_symbols, variable_length, p
        self.k_min = min_half(k_max, variable_length)
        self.eval_set = mlm.pretraining_batch(eval_size, k_max, n_symbols, eval_seed, p, self.k_min)

    def config(self, **sizes):
        return nn.TransformerConfig(vocab_size=mlm.vocab_size(self.n_symbols), max_len=1 + 2 * self.k_max,
                                    **BERT_STYLE, **sizes)

    def check(self, config):
        needs(config, self.name, mlm.vocab_size(self.n_symbols), 1 + 2 * self.k_max)

    def batch(self, batch_size, rng):
        return mlm.pretraining_batch(batch_size, self.k_max, self.n_symbols, rng, self.p, self.k_min)

    loss = staticmethod(language_model_loss)

    def evaluate(self, model):
        return held_out_loss(model, *self.eval_set)

    def show(self, model, n=3):
        """n held-out corrupted sequences and the model's guess at each chosen position."""
        ids, targets = (rows[:n] for rows in self.eval_set)
        with inference(model, "MaskedLMTask.show"):
            guess = model(ids).data.argmax(axis=-1)                           # (n, T)
        lines = ["held-out sequences: what the model reads, and at the chosen positions the original / its guess"]
        for row, target, g in zip(ids, targets, guess):
            chosen = target != PAD
            lines += ["  reads    " + " ".join(mlm_token_names(row)),
                      "  answers  " + " ".join(f"{o}/{p}" if c else "." for o, p, c in
                                               zip(mlm_token_names(target), mlm_token_names(g), chosen)), ""]
        return lines

    def plot_example(self):
        ids = self.eval_set.ids[:1]                                           # (1, T)
        return (ids,), mlm_token_names(ids[0]), mlm_token_names(ids[0])


class ClassifyTask:
    """Fine-tuning BERT's [CLS] head: copy or reverse? Trained on n_labelled fixed examples,
    evaluated by the exact match (accuracy) on eval_size others."""
    name, model_name, exact = "classify", "BERT", True

    def __init__(self, k_max=6, n_symbols=8, n_labelled=256, variable_length=False, eval_size=1000, data_seed=0):
        self.k_max, self.n_symbols, self.variable_length = k_max, n_symbols, variable_length
        self.k_min = k_min = min_half(k_max, variable_length)
        labelled_seed, eval_seed = np.random.SeedSequence(data_seed).spawn(2)
        self.eval_set = mlm.make_sequences(eval_size, k_max, n_symbols, np.random.default_rng(eval_seed), k_min)
        drawn = mlm.make_sequences(n_labelled, k_max, n_symbols, np.random.default_rng(labelled_seed), k_min)
        held_out = {row.tobytes() for row in self.eval_set.ids}
        fresh = np.array([row.tobytes() not in held_out for row in drawn.ids], dtype=bool)   # (n_labelled,)
        if not fresh.any():
            raise ValueError(f"ClassifyTask: every one of the {n_labelled} labelled sequences is held out; "
                             "give more symbols, longer sequences or a smaller eval_size")
        self.labelled = mlm.LabelledBatch(drawn.ids[fresh], drawn.labels[fresh])   # none of them held out

    def config(self, **sizes):
        return nn.TransformerConfig(vocab_size=mlm.vocab_size(self.n_symbols), max_len=1 + 2 * self.k_max,
                                    n_classes=2, **BERT_STYLE, **sizes)

    def check(self, config):
        needs(config, self.name, mlm.vocab_size(self.n_symbols), 1 + 2 * self.k_max)
        if config.n_classes != 2:
            raise ValueError(f"train: the classify task needs a config with n_classes=2, got {config.n_classes}")

    def batch(self, batch_size, rng):
        rows = rng.integers(0, len(self.labelled.labels), size=batch_size)   # (B,) with replacement
        return mlm.LabelledBatch(self.labelled.ids[rows], self.labelled.labels[rows])

    def loss(self, model, batch, label_smoothing=0.0):
        logits = model.classify(batch.ids)                                   # (B, n_classes)
        return F.cross_entropy(logits, batch.labels, label_smoothing=label_smoothing)

    def evaluate(self, model):
        with inference(model, "ClassifyTask.evaluate"):
            predicted = model.classify(self.eval_set.ids).data.argmax(axis=-1)   # (B,)
        return float((predicted == self.eval_set.labels).mean())

    def show(self, model, n=3):
        ids, labels = (rows[:n] for rows in self.eval_set)
        with inference(model, "ClassifyTask.show"):
            predicted = model.classify(ids).data.argmax(axis=-1)             # (n,)
        answer = ("copy", "reverse")
        return ["held-out sequences: copy or reverse?"] + [
            f"  {' '.join(mlm_token_names(row)):<40} {answer[label]:<8} predicted {answer[guess]}"
            for row, label, guess in zip(ids, labels, predicted)]

    plot_example = MaskedLMTask.plot_example        # the first held-out sequence, read the same way


def mlm_token_names(ids):
    """BERT's tokens as names: symbols from 0, [CLS] "C", [MASK] "M", PAD "."."""
    special = {PAD: ".", CLS: "C", MASK: "M"}
    return [special.get(int(i), str(int(i) - MLM_N_SPECIAL)) for i in ids]


def make_task(name, seed=0, **options):
    """The task called name, from its DEFAULTS overridden by options (seq_len, vocab, digits, labelled,
    variable_length, eval_size); seed draws the held-out set of copy/reverse/mlm and classify's data."""
    if name not in NAMES:
        raise ValueError(f"make_task: name must be one of {NAMES}, got {name!r}")
    o = {**DEFAULTS[name], **options}
    eval_size = o.get("eval_size", 1000)          # addition: 1000 or a tenth of its problems
    variable = o.get("variable_length", False)
    if name in ("copy", "reverse"):
        return SequenceTask(name, o["seq_len"], o["vocab"], variable, eval_size, seed)
    if name == "addition":
        return AdditionTask(o["digits"], o.get("eval_size"))
    if name == "text":
        return TextTask(o["seq_len"])
    if name == "mlm":
        return MaskedLMTask(o["seq_len"], o["vocab"], variable, eval_size=eval_size, eval_seed=seed)
    return ClassifyTask(o["seq_len"], o["vocab"], o["labelled"], variable, eval_size, data_seed=seed)


def new_model(task, config, rng):
    """A fresh model of the class the task trains (tt.nn.Transformer, GPT or BERT)."""
    return getattr(nn, task.model_name)(config, rng=rng)
