"""The book's "Extending tinytransformer": its two example tasks trained at several settings.

docs/examples/sort.py (the encoder-decoder) and docs/examples/palindrome.py (BERT through [CLS]) are added
to a copy of the package as the page says (its file and its registry line) and trained by the command
line; classify is trained beside them for comparison. Each run: the task, the learning-rate scale, the
labelled sequences (the classifiers), the seed, the validation result training stops on and the test result. Writes every line and the load
average to benchmarks/results/new_tasks.json. About 5 minutes on 2 cores. Run from the repository root:

    PYTHONPATH=. python benchmarks/new_tasks.py
"""
import argparse
import datetime
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, write_record  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "new_tasks.json"
RUNS = [  # (task, lr scale, labelled sequences or None, steps or None: the task's default)
    ("sort", 1.0, None, None),
    ("palindrome", 0.3, 256, 1000), ("palindrome", 1.0, 256, 1000),
    ("palindrome", 0.1, None, 600), ("palindrome", 0.3, None, 600), ("palindrome", 1.0, None, 600),
    ("classify", 0.1, None, None), ("classify", 0.3, None, None), ("classify", 1.0, None, None),
]


def extended_copy(folder):
    """A copy of the package in folder with the page's two example tasks added (tests/test_extending.py's way)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_extending import add_tasks
    shutil.copytree(ROOT / "tinytransformer", folder / "tinytransformer", ignore=shutil.ignore_patterns("__pycache__"))
    add_tasks(folder / "tinytransformer")


def train(folder, task, lr_scale, labelled, steps, seed):
    """The result line of one `train` run: {"measure", "value" (validation), "steps", "reached", "test"}."""
    command = [sys.executable, "-m", "tinytransformer", "train", "--task", task, "--lr-scale", str(lr_scale),
               "--seed", str(seed)] + (["--labelled", str(labelled)] if labelled else []) + \
        (["--steps", str(steps)] if steps else [])
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder,
                          env={**os.environ, "PYTHONPATH": str(folder), "OPENBLAS_NUM_THREADS": "1"})
    line = next(line for line in done.stdout.splitlines() if line.startswith("validation "))
    found = re.match(r"validation (.+?) ([\d.]+)% (?:at step (\d+)|after (\d+) steps).*; test .+? ([\d.]+)% on", line)
    return {"measure": found.group(1), "value": float(found.group(2)) / 100,
            "steps": int(found.group(3) or found.group(4)), "reached": "reached" in line,
            "test": float(found.group(5)) / 100}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args()
    before, runs = load_average(), []
    with tempfile.TemporaryDirectory() as scratch:
        extended_copy(pathlib.Path(scratch))
        for task, lr_scale, labelled, steps in RUNS:
            for seed in args.seeds:
                found = train(scratch, task, lr_scale, labelled, steps, seed)
                runs.append({"task": task, "lr_scale": lr_scale, "labelled": labelled, "seed": seed, **found})
                print(f"{task:<10} lr {lr_scale:<4} labelled {labelled or 'default':<7} seed {seed}: "
                      f"validation {found['measure']} {found['value']:.1%} after {found['steps']} steps, "
                      f"test {found['test']:.1%}", flush=True)
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": "2-core AMD EPYC VM, one BLAS thread", "load_before": before, "load_after": load_average(),
              "runs": runs}
    write_record(OUT, record)


if __name__ == "__main__":
    main()
