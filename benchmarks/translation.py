"""The translate task's acceptance runs: `train --task translate` with its defaults, seed by seed.

Each run is the command line's (train() with the task's classroom model and
settings, one BLAS thread), measured: steps, wall and training seconds, the
held-out BLEU, chrF and exact match (greedy), the same with beam search
(width 4), and the compositional held-out set's BLEU by kind. With
--label-smoothing 0 0.1 every seed runs once per value (the measurement that
chose the default). Writes every run and the load average before and after
to a JSON file (checked writable before the first step) and prints a table.
--pairs ding trains on the Ding dictionary's sentences instead (where Debian
installs them; no compositional set). Run from the repository root, on as
quiet a machine as you have:

    PYTHONPATH=. python benchmarks/translation.py                                  # seeds 0-2, defaults
    PYTHONPATH=. python benchmarks/translation.py --label-smoothing 0 0.1 \
        --out benchmarks/results/translation_label_smoothing.json
    PYTHONPATH=. python benchmarks/translation.py --pairs ding --seeds 0 --out benchmarks/results/translation_ding.json
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, use_threads  # noqa: E402

DEFAULT_OUT = pathlib.Path(__file__).resolve().parent / "results" / "translation.json"


def run(seed, label_smoothing, pairs):
    """One training run and its measures, as a dict."""
    from tinytransformer.tasks.translation import TranslationTask, scores
    from tinytransformer.train import train

    task = TranslationTask(pairs=pairs)
    options = {} if label_smoothing is None else {"label_smoothing": label_smoothing}
    result = train(None, task, seed=seed, progress=False, **options)
    measures = task.model_measures(result.model)
    beam = scores(result.model, task.held_out, beam=4, vocabulary=task.vocabulary)
    return {"seed": seed, "pairs": pairs, "label_smoothing": task.settings.label_smoothing if label_smoothing is None
            else label_smoothing, "steps": result.steps, "reached_target_at_step": result.reached_target_at_step,
            "wall_seconds": round(result.wall_seconds, 2), "train_seconds": round(result.train_seconds, 2),
            "ms_per_step": round(result.ms_per_step, 2), "bleu": measures["bleu"], "chrf": measures["chrf"],
            "exact_match": measures["exact_match"], "beam4_bleu": beam["bleu"],
            "beam4_exact_match": beam["exact_match"], "compositional_bleu": measures["compositional_bleu"],
            "eval_history": result.eval_history, "examples": measures["examples"]}


def write_atomically(path, data):
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
    os.chmod(f.name, 0o644)                      # readable as any file written by open() would be
    os.replace(f.name, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--label-smoothing", type=float, nargs="+", default=[None],
                        help="values to run each seed with (default: the task's own)")
    parser.add_argument("--pairs", choices=("generated", "ding"), default="generated")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="the JSON file to write")
    args = parser.parse_args()
    folder = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        sys.exit(f"translation benchmark: cannot write {args.out}")
    use_threads(1)
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "python": platform.python_version(), "blas_threads": 1, "load_average_before": load_average(),
              "runs": []}
    print(f"load average {record['load_average_before']}")
    print(f"{'seed':>4} {'smooth':>6} {'steps':>5} {'wall s':>7} {'BLEU':>6} {'chrF':>6} {'exact':>6} "
          f"{'beam4':>6}  compositional BLEU, kind by kind (translation.COMPOSITIONAL_KINDS)")
    for label_smoothing in args.label_smoothing:
        for seed in args.seeds:
            r = run(seed, label_smoothing, args.pairs)
            record["runs"].append(r)
            print(f"{r['seed']:>4} {r['label_smoothing']:>6} {r['steps']:>5} {r['wall_seconds']:>7.1f} "
                  f"{r['bleu']:>6.1f} {r['chrf']:>6.1f} {r['exact_match']:>6.1%} {r['beam4_bleu']:>6.1f}  "
                  + ", ".join(f"{v:.1f}" for v in r["compositional_bleu"].values()), flush=True)
    record["load_average_after"] = load_average()
    print(f"load average {record['load_average_after']}")
    write_atomically(args.out, record)


if __name__ == "__main__":
    main()
