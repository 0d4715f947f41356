"""The digits task's runs: `train --task digits` with its defaults, seed by seed, against logistic regression.

Each run is the command line's (train() with the task's classroom vision encoder and settings, one BLAS
thread): steps, wall seconds, held-out accuracy. The baseline is multinomial logistic regression on the 64
pixels, written below in NumPy (full-batch gradient descent on the cross-entropy with a small L2 penalty),
trained on the same 1,500 training images and measured on the same 297 held-out ones. Writes every run and
the load average to benchmarks/results/digits.json and prints a table. Run from the repository root:

    PYTHONPATH=. python benchmarks/digits.py
"""
import argparse
import datetime
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, use_threads, write_record  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "results" / "digits.json"


def logistic_regression(x, labels, n_classes=10, steps=2000, lr=0.5, l2=1e-3):
    """Weights (P + 1, n_classes) of softmax regression on x (B, P), by full-batch gradient descent."""
    import numpy as np
    x1 = np.hstack([x, np.ones((len(x), 1))])                          # (B, P + 1): a constant for the bias
    W = np.zeros((x1.shape[1], n_classes))
    one_hot = np.eye(n_classes)[labels]                                 # (B, n_classes)
    for _ in range(steps):
        z = x1 @ W
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)                               # softmax rows
        W -= lr * (x1.T @ (p - one_hot) / len(x) + l2 * W)              # d(mean cross-entropy)/dW + L2
    return W


def baseline_accuracy(task):
    import numpy as np
    pixels = task.train_set.patches.reshape(len(task.train_set.labels), -1)
    W = logistic_regression(pixels, task.train_set.labels)
    held = task.held_out.patches.reshape(len(task.held_out.labels), -1)
    guess = (np.hstack([held, np.ones((len(held), 1))]) @ W).argmax(axis=1)
    return float(np.mean(guess == task.held_out.labels))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    use_threads(1)
    from tinytransformer.tasks.digits import DigitsTask
    from tinytransformer.train import train
    task = DigitsTask()
    runs, before = [], load_average()
    for seed in args.seeds:
        result = train(None, task, seed=seed, progress=False)
        runs.append({"seed": seed, "steps": result.steps, "wall_seconds": round(result.wall_seconds, 2),
                     "accuracy": result.exact_match, "load_after": load_average()})
        print(f"seed {seed}: {result.steps} steps, {result.wall_seconds:.1f} s, held-out accuracy {result.exact_match:.1%}",
              flush=True)
    baseline = baseline_accuracy(task)
    print(f"logistic regression on the pixels: held-out accuracy {baseline:.1%}")
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "load_before": before, "runs": runs, "logistic_regression_accuracy": baseline,
              "n_train": len(task.train_set.labels), "n_held_out": len(task.held_out.labels)}
    write_record(OUT, record)


if __name__ == "__main__":
    main()
