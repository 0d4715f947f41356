"""Notebook 12's comparison of BERT's 80/10/10 rule with [MASK] only, repeated over seeds.

The notebook pretrains its small BERT (d_model 32, 2 heads, 2 layers) once by each rule, from the same
initial weights and batches, and asks both for the original token at the chosen positions of 4000
held-out sequences corrupted by BERT's rule, by kind ([MASK], another symbol, unchanged), and then for
copy-or-reverse by cloze before any labelled example. This script runs the same with the initial
weights drawn from seeds 0-4 (batches from seed 9 + seed; seed 0 is the notebook's run), after 400 and
1000 steps, and writes every number and the load average to benchmarks/results/mask_rule.json. About
80 s on 2 cores. Run from the repository root:

    PYTHONPATH=. python benchmarks/mask_rule.py
"""
import argparse
import datetime
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, use_threads, write_record  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "results" / "mask_rule.json"
RULES = {"80/10/10": (0.8, 0.1), "[MASK] only": (1.0, 0.0)}     # mask_share, random_share
N_SYMBOLS, K, BATCH = 8, 4, 64


def pretrain_and_ask(rule, seed, checkpoints):
    """{step: {kind: share right, "cloze": accuracy}} for one model pretrained by rule."""
    import numpy as np
    import tinytransformer as tt
    from tinytransformer import optim
    from tinytransformer.tasks import BERT_STYLE, ClassifyTask, LMBatch, language_model_loss, masked_lm
    from tinytransformer.train import train_step
    from tinytransformer.vocabulary import MASK, PAD
    V, T = masked_lm.vocab_size_for(N_SYMBOLS), 1 + 2 * K
    config = tt.BERTConfig(vocab_size=V, max_len=T + 3, d_model=32, n_heads=2, n_layers=2, d_ff=64,
                                  dropout=0.0, **BERT_STYLE)
    held_out = masked_lm.make_sequences(4000, K, N_SYMBOLS, rng=7, k_min=K).ids
    held_in, held_targets = masked_lm.mask_tokens(held_out, rng=8, p=0.15, vocab_size=V)
    counted = held_targets != PAD
    kinds = {"[MASK]": held_in == MASK, "another symbol": (held_in != MASK) & (held_in != held_targets),
             "unchanged": held_in == held_targets}
    question = ClassifyTask(k_max=K, n_symbols=N_SYMBOLS, n_labelled=32, seed=10)
    mask_share, random_share = RULES[rule]
    model = tt.nn.BERT(config, rng=seed)
    optimizer = optim.Adam(model.parameters(), lr=0.0)
    schedule = optim.WarmupSchedule(config.d_model, 100, 1.0)
    batches = np.random.default_rng(9 + seed)
    found = {}
    for step in range(1, max(checkpoints) + 1):
        optimizer.lr = schedule(step)
        ids = masked_lm.make_sequences(BATCH, K, N_SYMBOLS, batches, k_min=K).ids           # (64, T)
        batch = LMBatch(*masked_lm.mask_tokens(ids, batches, 0.15, vocab_size=V, mask_share=mask_share,
                                               random_share=random_share))
        train_step(model, optimizer, batch, loss=language_model_loss)
        if step in checkpoints:
            model.eval()
            guess = model(held_in).data.argmax(axis=-1)                                 # (4000, T)
            found[step] = {kind: float((guess == held_targets)[where & counted].mean())
                           for kind, where in kinds.items()}
            found[step]["cloze"] = float(question.evaluate(model))
            model.train()
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = parser.parse_args()
    use_threads(1)
    checkpoints = (400, 1000)
    before, runs = load_average(), []
    for seed in args.seeds:
        for rule in RULES:
            found = pretrain_and_ask(rule, seed, checkpoints)
            runs.append({"seed": seed, "rule": rule, "by_step": found})
            print(f"seed {seed} {rule:<12}" + "  ".join(
                f"step {s}: " + " ".join(f"{k} {v:.3f}" for k, v in found[s].items()) for s in checkpoints), flush=True)
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "load_before": before, "load_after": load_average(), "seeds": args.seeds,
              "steps": list(checkpoints), "runs": runs}
    write_record(OUT, record)


if __name__ == "__main__":
    main()
