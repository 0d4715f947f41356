"""Does masked-LM pretraining help BERT answer a question about its sequences? Pretrained against scratch.

For each seed: pretrain a BERT by masked-language modelling on the
copy-or-reverse corpus (tinytransformer/mlm.py: unlabelled, fresh sequences
every step), then fine-tune it, [CLS] head new, on a few labelled sequences
(is the second half a copy or a reverse of the first?); and train the same
model from scratch on the same labelled sequences for the same number of
steps. Both are measured by held-out accuracy (1000 sequences, none of them
among the labelled ones) after every --eval-every steps. The pretrained
model has had --pretrain-steps more steps of compute on unlabelled data: that
is the comparison pretraining makes.

What pretraining learned is measured too: each pretrained model's masked-LM
loss on its held-out set, beside two references on the same chosen
positions: guessing (log n_symbols) and an order-blind predictor, told which
symbols the other half holds but not in what order, -log(count of the answer
there / k). Copy or reverse is a question of order only. Run from the
repository root:

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/pretraining.py --seeds 0 1 2 3 4

One BLAS thread, as `train` uses: the thread count changes the rounding, and so the numbers.
"""
import argparse
import math
import os
import statistics

import numpy as np

from tinytransformer.data import PAD
from tinytransformer.mlm import classifier_from
from tinytransformer.tasks import DEFAULTS, make_task
from tinytransformer.train import EVAL_SEED_OFFSET, train


def order_blind_loss(ids, targets):
    """ids, targets (B, T) a corrupted held-out set -> the mean loss, over the chosen positions, of
    predicting a symbol of one half from the counts of the other half's symbols, order unknown."""
    original = np.where(targets != PAD, targets, ids)                     # (B, T) before corruption
    losses = []
    for row, target in zip(original[:, 1:], targets[:, 1:]):              # [CLS] dropped: x then y, then PAD
        k = np.count_nonzero(row != PAD) // 2
        halves = row[:k], row[k:2 * k]
        for i in np.flatnonzero(target != PAD):
            other = halves[1 - i // k]
            losses.append(-math.log(np.count_nonzero(other == target[i]) / k))
    return statistics.mean(losses)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--pretrain-steps", type=int, default=DEFAULTS["mlm"]["steps"])
    parser.add_argument("--fine-tune-steps", type=int, default=DEFAULTS["classify"]["steps"])
    parser.add_argument("--labelled", type=int, default=DEFAULTS["classify"]["labelled"], help="labelled training sequences")
    parser.add_argument("--eval-every", type=int, default=DEFAULTS["classify"]["eval_every"])
    parser.add_argument("--fine-tune-lr", type=float, default=DEFAULTS["classify"]["lr"],
                        help="the schedule's scale for fine-tuning and for training from scratch")
    parser.add_argument("--variable-length", action="store_true", help="halves of 3 to 6 symbols, for both tasks")
    args = parser.parse_args(argv)

    d = DEFAULTS["classify"]
    sizes = dict(d_model=d["d_model"], n_heads=d["heads"], n_layers=d["layers"], d_ff=d["d_ff"], dropout=0.0)
    schedule = {name: dict(batch_size=DEFAULTS[name]["batch_size"], lr_scale=DEFAULTS[name]["lr"],
                           warmup=DEFAULTS[name]["warmup"], progress=False) for name in ("mlm", "classify")}
    schedule["classify"]["lr_scale"] = args.fine_tune_lr
    print(f"BERT d_model {sizes['d_model']}, {sizes['n_heads']} heads, {sizes['n_layers']} layers; "
          f"pretraining {args.pretrain_steps} steps (lr scale {DEFAULTS['mlm']['lr']}), fine-tuning "
          f"{args.fine_tune_steps} steps (lr scale {args.fine_tune_lr}) on {args.labelled} labelled sequences"
          f"{', halves of 3 to 6' if args.variable_length else ''}; "
          f"load {os.getloadavg()[0]:.2f}\n")
    print(f"{'seed':>4}  {'pretrained: accuracy by step':<44}{'scratch: accuracy by step':<44}"
          f"masked-LM loss: pretrained / order-blind / guessing")
    finals = {"pretrained": [], "scratch": []}
    for seed in args.seeds:
        mlm_task = make_task("mlm", seed=seed + EVAL_SEED_OFFSET, variable_length=args.variable_length)
        pretrained = train(mlm_task.config(**sizes), mlm_task, steps=args.pretrain_steps, seed=seed,
                           eval_every=0, **schedule["mlm"]).model
        losses = (mlm_task.evaluate(pretrained), order_blind_loss(*mlm_task.eval_set), math.log(mlm_task.n_symbols))
        question = make_task("classify", seed=seed + EVAL_SEED_OFFSET, labelled=args.labelled,
                             variable_length=args.variable_length)
        runs = {
            "pretrained": train(None, question, model=classifier_from(pretrained, 2, rng=seed),
                                steps=args.fine_tune_steps, seed=seed, eval_every=args.eval_every,
                                target_accuracy=None, **schedule["classify"]),
            "scratch": train(question.config(**sizes), question, steps=args.fine_tune_steps, seed=seed,
                             eval_every=args.eval_every, target_accuracy=None, **schedule["classify"]),
        }
        cells = []
        for name, result in runs.items():
            finals[name].append(result.exact_match)
            cells.append(" ".join(f"{accuracy:.2f}" for _, accuracy in result.eval_history))
        print(f"{seed:>4}  {cells[0]:<44}{cells[1]:<44}" + " / ".join(f"{x:.3f}" for x in losses), flush=True)
    wins = sum(p > s for p, s in zip(finals["pretrained"], finals["scratch"]))
    print(f"\nheld-out accuracy after {args.fine_tune_steps} fine-tuning steps, over {len(args.seeds)} seeds:")
    for name, values in finals.items():
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        print(f"  {name:<11} mean {statistics.mean(values):.3f}  sd {spread:.3f}  "
              f"min {min(values):.3f}  max {max(values):.3f}")
    print(f"  pretrained ahead on {wins} of {len(args.seeds)} seeds; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
