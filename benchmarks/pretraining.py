"""Where does BERT's masked-LM pretraining help? Held-out accuracy against the number of labelled sequences.

For each seed, pretrain a BERT as `train --task mlm --seed S` does (fresh
unlabelled copy-or-reverse sequences every step), then for each number of
labelled sequences N and each readout, fine-tune it as
`train --task classify --labelled N --readout R --pretrained P --seed S` does,
and train the same model from scratch as `train --task classify --labelled N
--readout R --seed S` does: the command line's defaults throughout, training
stopped on 1000 validation sequences and "accuracy" measured once after it on
1000 test sequences, neither labelled nor validation ones (records made
before 2026-11-27 stopped on and reported the same 1000). The readouts: cloze
(the masked-LM head fills y's first symbol: x's first means copy, x's last
reverse) and cls (a new head on [CLS], as BERT). Also recorded per seed: the
pretrained model's masked-LM loss, and its cloze accuracy before any
labelled step. Prints the table and writes every number as JSON:

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/pretraining.py
    ... --sentence-objective --labelled 32 256 --json benchmarks/results/pretraining_sentence_objective.json

One BLAS thread, as `train` uses: the thread count changes the rounding, and so the numbers.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import use_threads  # noqa: E402

use_threads(1)

import numpy as np  # noqa: E402

import tinytransformer as tt  # noqa: E402
from tinytransformer.tasks import make_task  # noqa: E402
from tinytransformer.train import EVAL_SEED_OFFSET, train  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def summarise(values):
    return {"mean": statistics.mean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


def table(runs, seeds, readouts, sizes):
    """One row per readout and N: scratch and pretrained accuracy over the seeds, the gap, the seeds won."""
    rows = []
    for readout in readouts:
        for n in sizes:
            final = {start: [next(r["accuracy"] for r in runs if (r["readout"], r["labelled"], r["start"], r["seed"])
                                  == (readout, n, start, seed)) for seed in seeds]
                     for start in ("scratch", "pretrained")}
            rows.append({"readout": readout, "labelled": n,
                         "scratch": summarise(final["scratch"]), "pretrained": summarise(final["pretrained"]),
                         "gap": statistics.mean(final["pretrained"]) - statistics.mean(final["scratch"]),
                         "pretrained_ahead": sum(p > s for p, s in zip(final["pretrained"], final["scratch"]))})
    return rows


def print_table(rows, n_seeds):
    print(f"\ntest accuracy, mean (sd) over {n_seeds} seeds")
    print(f"{'readout':<8}{'labelled':>9}{'scratch':>17}{'pretrained':>17}{'gap':>8}  pretrained ahead")
    for r in rows:
        cells = [f"{r[s]['mean']:.3f} ({r[s]['sd']:.3f})" for s in ("scratch", "pretrained")]
        print(f"{r['readout']:<8}{r['labelled']:>9}{cells[0]:>17}{cells[1]:>17}{r['gap']:>+8.3f}  "
              f"{r['pretrained_ahead']} of {n_seeds}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--labelled", type=int, nargs="+", default=[16, 32, 64, 128, 256, 1024])
    parser.add_argument("--readouts", nargs="+", default=["cloze", "cls"], choices=["cloze", "cls"])
    parser.add_argument("--sentence-objective", action="store_true",
                        help="pretrain with the sentence-level objective on [CLS] too (train --task mlm "
                             "--sentence-objective)")
    parser.add_argument("--json", default=os.path.join(RESULTS, "pretraining_curve.json"),
                        help="where to write every number")
    args = parser.parse_args(argv)
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        raise SystemExit(f"pretraining.py: the folder of --json {args.json} does not exist")

    load_before, start = os.getloadavg(), time.time()
    print(f"BERT, the classroom sizes and the command line's defaults; pretraining "
          f"{'masked LM + [CLS] order' if args.sentence_objective else 'masked LM'}; seeds {args.seeds}; "
          f"load {load_before[0]:.2f}", flush=True)
    runs, pretraining = [], []
    with tempfile.TemporaryDirectory() as folder:
        for seed in args.seeds:
            mlm = make_task("mlm", seed=seed + EVAL_SEED_OFFSET, sentence_objective=args.sentence_objective)
            pretrained = train(None, mlm, seed=seed, progress=False).model
            path = os.path.join(folder, f"mlm_{seed}.npz")
            tt.save_checkpoint(pretrained, path)
            zero_shot = make_task("classify", seed=seed + EVAL_SEED_OFFSET).evaluate(pretrained)
            pretraining.append({"seed": seed, "masked_lm_loss": mlm.evaluate(pretrained),
                                "cloze_accuracy_before_fine_tuning": zero_shot})
            print(f"seed {seed}: masked-LM loss {pretraining[-1]['masked_lm_loss']:.3f}, cloze accuracy "
                  f"before any labelled step {zero_shot:.3f}", flush=True)
            for readout in args.readouts:
                for n in args.labelled:
                    for name, checkpoint in (("scratch", None), ("pretrained", path)):
                        task = make_task("classify", seed=seed + EVAL_SEED_OFFSET, n_labelled=n, readout=readout,
                                         pretrained=checkpoint)
                        result = train(None, task, seed=seed, progress=False)
                        runs.append({"seed": seed, "readout": readout, "labelled": n, "start": name,
                                     "accuracy": result.test_exact_match, "validation_accuracy": result.exact_match,
                                     "steps": result.steps,
                                     "history": result.eval_history})
                    print(f"  {readout:<6}{n:>5} labelled: scratch {runs[-2]['accuracy']:.3f}, "
                          f"pretrained {runs[-1]['accuracy']:.3f}", flush=True)
    rows = table(runs, args.seeds, args.readouts, args.labelled)
    print_table(rows, len(args.seeds))
    load_after = os.getloadavg()
    print(f"{time.time() - start:.0f} s; load {load_after[0]:.2f}")
    record = {"what": __doc__.split("\n")[0], "sentence_objective": args.sentence_objective, "seeds": args.seeds,
              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(start)),
              "seconds": round(time.time() - start), "load_before": load_before, "load_after": load_after,
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, NumPy {np.__version__}, one BLAS thread",
              "table": rows, "pretraining": pretraining, "runs": runs}
    with open(args.json, "w") as f:
        json.dump(record, f, indent=1)
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
