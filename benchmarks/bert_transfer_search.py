"""The search behind BERT's defaults: what carries masked-LM pretraining to the copy-or-reverse question?

    pretrain  --objective mlm|mlm+random|mlm+shuffled|mlm+mixed [--pretrain-steps 600]
    finetune  --start scratch|OBJECTIVE [--labelled 32 256] [--readout cls|mean|cloze] [--frozen]
              [--schedule paper|linear --lr L] [--reinit-top N]

Seeds 10 to 14 by default: the search's own, so that the defaults it chose
are reported (benchmarks/pretraining.py, seeds 0 to 4) on seeds it never saw.

The sentence-level objectives on [CLS] differ in their negatives only (half
the rows; their masked-LM targets are not counted, every row is corrupted
alike): random, y replaced by another sequence's second half (BERT's
next-sentence prediction); shuffled, x's own symbols in another order (the
library's --sentence-objective); mixed, each mirrored pair of y read from x
one way or the other, not all one way. Fine-tuning: the command line's
classify settings unless told (the paper's warmup schedule at scale 0.3,
300 steps, batch 64); linear is BERT's (warmup over the first 10% of the
steps, then linear decay to 0, peak --lr); --frozen trains the head alone on
the encoder's fixed features; --reinit-top draws the top N layers afresh.
Checkpoints go to --dir; every result is printed and appended to --log as one
JSON line. One BLAS thread.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import use_threads  # noqa: E402

use_threads(1)

import numpy as np  # noqa: E402

import tinytransformer as tt  # noqa: E402
from tinytransformer import functional as F  # noqa: E402
from tinytransformer.optim import Adam, WarmupSchedule  # noqa: E402
from tinytransformer.tasks import ClassifyTask, MaskedLMTask, make_task  # noqa: E402
from tinytransformer.tasks import masked_lm, sentence_order  # noqa: E402
from tinytransformer.tensor import Tape  # noqa: E402
from tinytransformer.train import EVAL_SEED_OFFSET, train, train_step  # noqa: E402
from tinytransformer.vocabulary import PAD  # noqa: E402

K, N_SYMBOLS = ClassifyTask.k_max, ClassifyTask.n_symbols


def mixed_second_halves(ids, rows, rng):
    """y of each row in rows read from x pair by pair, each mirrored pair one way or the other, not all one
    way; a row whose every inner pair is mirrored (no mixed reading) is shuffled instead."""
    out = sentence_order.shuffle_second_halves(ids, rows, rng)
    for b in rows:
        x = ids[b, 1:1 + K]
        for _ in range(50):
            order = np.arange(K)
            for i in np.flatnonzero(rng.integers(0, 2, size=K // 2)):
                order[i], order[K - 1 - i] = K - 1 - i, i
            if not (np.array_equal(x[order], x) or np.array_equal(x[order], x[::-1])):
                out[b, 1 + K:] = x[order]
                break
    return out


def random_second_halves(ids, rows, rng):
    """y of each row in rows replaced by the second half of another corpus sequence."""
    out = ids.copy()
    out[rows, 1 + K:] = masked_lm.make_sequences(len(rows), K, N_SYMBOLS, rng, K).ids[:, 1 + K:]
    return out


NEGATIVES = {"shuffled": sentence_order.shuffle_second_halves, "mixed": mixed_second_halves,
             "random": random_second_halves}


class SearchTask(MaskedLMTask):
    """The mlm task with the sentence-level objective, its negatives made by one of NEGATIVES."""

    def __init__(self, kind, seed):
        super().__init__(sentence_objective=True, seed=seed)
        self.negatives = NEGATIVES[kind]

    def batch(self, batch_size, rng):
        return sentence_order.sentence_pair_batch(batch_size, K, N_SYMBOLS, rng, self.p, K, negatives=self.negatives)


def order_accuracy(model, task, seed):
    """The [CLS] head's accuracy at telling kept from negative rows, on 1000 held-out rows left uncorrupted
    (corrupted, a [MASK] would give the answer away: only negative rows would still hold one)."""
    rng = np.random.default_rng(seed)
    ids, _ = masked_lm.make_sequences(1000, K, N_SYMBOLS, rng, K)             # (1000, 1 + 2K)
    in_order = rng.integers(0, 2, size=1000)                                    # (1000,) 1 = kept
    ids = task.negatives(ids, np.flatnonzero(in_order == 0), rng)
    with tt.nn.inference(model, "order_accuracy"):
        guess = model.classify(ids).data.argmax(axis=-1)                        # (1000,)
    return float((guess == in_order).mean())


def path_of(args, objective, seed):
    return os.path.join(args.dir, f"{objective}_{args.pretrain_steps}_{seed}.npz")


def pretrain(args):
    for seed in args.seeds:
        start = time.perf_counter()
        kind = args.objective.partition("+")[2]
        task = SearchTask(kind, seed + EVAL_SEED_OFFSET) if kind else make_task("mlm", seed=seed + EVAL_SEED_OFFSET)
        model = train(None, task, seed=seed, steps=args.pretrain_steps, eval_every=0, progress=False).model
        tt.save_checkpoint(model, path_of(args, args.objective, seed))
        row = dict(kind="pretrain", objective=args.objective, seed=seed, steps=args.pretrain_steps,
                   masked_lm_loss=task.evaluate(model),
                   cloze_accuracy=make_task("classify", seed=seed + EVAL_SEED_OFFSET).evaluate(model))
        if kind:
            row["order_accuracy"] = order_accuracy(model, task, seed + 2 * EVAL_SEED_OFFSET)
        record(args, {**row, "seconds": time.perf_counter() - start})


def schedule_of(args):
    """lr(step) for steps 1..args.steps."""
    if args.schedule == "paper":
        return WarmupSchedule(ClassifyTask().config().d_model, args.warmup, args.lr)
    if args.schedule == "constant":
        return lambda s: args.lr
    warm = max(1, round(0.1 * args.steps))
    return lambda s: args.lr * min(s / warm, max(0.0, (args.steps - s) / (args.steps - warm)))


def starting_model(args, seed):
    readout = "cloze" if args.readout == "cloze" else "cls"
    task = make_task("classify", seed=seed + EVAL_SEED_OFFSET, n_labelled=args.n, readout=readout,
                     pretrained=None if args.start == "scratch" else path_of(args, args.start, seed))
    model = task.new_model(task.config(), np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0]))
    if args.reinit_top:                                                      # the top layers drawn afresh
        fresh = dict(tt.nn.BERT(model.config, rng=seed + 1).named_parameters())
        layers = tuple(f"encoder.{i}." for i in range(model.config.n_layers - args.reinit_top, model.config.n_layers))
        for name, param in model.named_parameters():
            if name.startswith(layers):
                param.data[...] = fresh[name].data
    return task, model


def pooled(model, ids, readout):
    """The vector a cls or mean readout reads: (B, d_model)."""
    x = model.encode(ids)                                                    # (B, T, d_model)
    if readout == "cls":
        return model.first_position(x)
    weights = (ids != PAD).astype(x.dtype)                                   # (B, T)
    weights = (weights / weights.sum(axis=1, keepdims=True))[:, None, :]     # (B, 1, T)
    return F.reshape(F.matmul(weights, x), (len(ids), -1))


def logits_of(task, model, ids, readout):
    return task.logits(model, ids) if readout == "cloze" else model.classifier(pooled(model, ids, readout))


def finetune_one(args, seed):
    task, model = starting_model(args, seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])
    schedule, history = schedule_of(args), []

    def accuracy():
        with tt.nn.inference(model, "accuracy"):
            if args.frozen:
                return float((model.classifier(tt.Tensor(held_out)).data.argmax(-1) == task.held_out.labels).mean())
            guess = logits_of(task, model, task.held_out.ids, args.readout).data.argmax(-1)
        return float((guess == task.held_out.labels).mean())

    if args.frozen:                                                          # the head alone, on fixed features
        with tt.nn.inference(model, "features"):
            features = pooled(model, task.labelled.ids, args.readout).data
            held_out = pooled(model, task.held_out.ids, args.readout).data
        optimizer = Adam(model.classifier.parameters(), lr=0.0)
    else:
        optimizer = Adam(model.parameters(), lr=0.0)
    for step in range(1, args.steps + 1):
        optimizer.lr = schedule(step)
        if args.frozen:
            rows = rng.integers(0, len(features), size=args.batch_size)
            with Tape() as tape:
                loss = F.cross_entropy(model.classifier(tt.Tensor(features[rows])), task.labelled.labels[rows])
            optimizer.zero_grad()
            tape.backward(loss)
            optimizer.step()
        else:
            batch = task.batch(args.batch_size, rng)
            train_step(model, optimizer, batch,
                       loss=lambda m, b, _: F.cross_entropy(logits_of(task, m, b.ids, args.readout), b.labels))
        if step % 50 == 0:
            history.append(accuracy())
    return history


def finetune(args):
    recipe = {name: getattr(args, name) for name in
              ("start", "pretrain_steps", "readout", "frozen", "schedule", "lr", "warmup", "reinit_top", "steps")}
    for n in args.labelled:
        args.n = n
        finals = []
        for seed in args.seeds:
            history = finetune_one(args, seed)
            finals.append(history[-1])
            record(args, dict(kind="finetune", **recipe, labelled=n, seed=seed, history=history), quiet=True)
        record(args, dict(kind="finetune-summary", **recipe, labelled=n, seeds=args.seeds,
                          mean=statistics.mean(finals), sd=statistics.stdev(finals) if len(finals) > 1 else 0.0,
                          finals=finals))


def record(args, row, quiet=False):
    row = {**row, "time": time.strftime("%H:%M"), "load": round(os.getloadavg()[0], 2)}
    with open(args.log, "a") as f:
        f.write(json.dumps(row) + "\n")
    if not quiet:
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else
                          [round(a, 3) for a in v] if isinstance(v, list) and v and isinstance(v[0], float) else v
                          for k, v in row.items()}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["pretrain", "finetune"])
    parser.add_argument("--objective", default="mlm", choices=["mlm", "mlm+random", "mlm+shuffled", "mlm+mixed"])
    parser.add_argument("--start", default="scratch", help="scratch, or the objective of a pretrained checkpoint")
    parser.add_argument("--seeds", type=int, nargs="+", default=[10, 11, 12, 13, 14])
    parser.add_argument("--pretrain-steps", type=int, default=MaskedLMTask.settings.steps)
    parser.add_argument("--labelled", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--readout", default="cls", choices=["cls", "mean", "cloze"])
    parser.add_argument("--frozen", action="store_true")
    parser.add_argument("--schedule", default="paper", choices=["paper", "linear", "constant"])
    parser.add_argument("--lr", type=float, default=ClassifyTask.settings.lr_scale,
                        help="paper: the schedule's scale; linear: the peak learning rate; constant: the rate")
    parser.add_argument("--warmup", type=int, default=ClassifyTask.settings.warmup)
    parser.add_argument("--reinit-top", type=int, default=0)
    parser.add_argument("--steps", type=int, default=ClassifyTask.settings.steps)
    parser.add_argument("--batch-size", type=int, default=ClassifyTask.settings.batch_size)
    parser.add_argument("--dir", default="bert_search")
    parser.add_argument("--log", default="bert_search/log.jsonl")
    args = parser.parse_args()
    if args.frozen and args.readout == "cloze":
        parser.error("--frozen trains a head on fixed features: use it with --readout cls or mean")
    os.makedirs(args.dir, exist_ok=True)
    {"pretrain": pretrain, "finetune": finetune}[args.command](args)


if __name__ == "__main__":
    main()
