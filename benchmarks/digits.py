"""The digits task's runs: `train --task digits` with its defaults, seed by seed, against three simple baselines.

Each run is the command line's (train() with the task's classroom vision encoder and settings, one BLAS
thread): the steps, the wall seconds, the validation accuracy training stopped on and the test accuracy,
measured once at the end. The baselines read the 64 pixels of the same 1,200 training images and are
measured on the same 297 test images: multinomial logistic regression, written below in NumPy (full-batch
gradient descent on the cross-entropy with a small L2 penalty); scikit-learn's 1-nearest-neighbour; and
scikit-learn's support vector machine with an RBF kernel, its C chosen on the 300 validation images, as the
encoder's stopping step is. Writes every run and the load average to benchmarks/results/digits.json and
prints a table. Run from the repository root:

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


def pixels(images):
    """An ImageBatch's patches back to one row of 64 pixels per image: (B, N, P) -> (B, N * P)."""
    return images.patches.reshape(len(images.labels), -1)


def baselines(task):
    """{name: {"test_accuracy", ...}} of the three baselines, trained on task's training images."""
    import numpy as np
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC
    train_x, train_y = pixels(task.train_set), task.train_set.labels
    results = {}
    W = logistic_regression(train_x, train_y)
    guess = (np.hstack([pixels(task.held_out), np.ones((len(task.held_out.labels), 1))]) @ W).argmax(axis=1)
    results["logistic regression"] = {"test_accuracy": float(np.mean(guess == task.held_out.labels))}
    nearest = KNeighborsClassifier(n_neighbors=1).fit(train_x, train_y)
    results["1-nearest-neighbour"] = {"test_accuracy": nearest.score(pixels(task.held_out), task.held_out.labels)}
    by_c = {c: SVC(C=c).fit(train_x, train_y) for c in (0.1, 1.0, 10.0, 100.0)}
    validation = {c: svm.score(pixels(task.validation), task.validation.labels) for c, svm in by_c.items()}
    best = max(validation, key=validation.get)                          # the first of the best, on validation
    results["SVM (RBF kernel)"] = {"test_accuracy": by_c[best].score(pixels(task.held_out), task.held_out.labels),
                                   "C": best, "validation_accuracy_by_C": validation}
    return results


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
        runs.append({"seed": seed, "steps": result.steps, "reached_target_at_step": result.reached_target_at_step,
                     "wall_seconds": round(result.wall_seconds, 2), "validation_accuracy": result.exact_match,
                     "test_accuracy": result.test_exact_match, "load_after": load_average()})
        print(f"seed {seed}: {result.steps} steps, {result.wall_seconds:.1f} s, validation accuracy "
              f"{result.exact_match:.1%}, test accuracy {result.test_exact_match:.1%}", flush=True)
    compared = baselines(task)
    for name, measured in compared.items():
        print(f"{name} on the pixels: test accuracy {measured['test_accuracy']:.1%}")
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "load_before": before, "runs": runs, "baselines": compared,
              "n_train": len(task.train_set.labels), "n_validation": len(task.validation.labels),
              "n_test": len(task.held_out.labels)}
    write_record(OUT, record)


if __name__ == "__main__":
    main()
