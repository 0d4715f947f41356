"""Ctrl-C at a random moment of `train --save`, N times: each must leave a checkpoint that loads and names
its step, and say so in one line. Prints one line per interrupt and "N interrupted, M lost".

    python benchmarks/ctrl_c_check.py [--runs 20 --seed 0]
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = ["train", "--task", "copy", "--seq-len", "5", "--symbols", "5", "--d-model", "16", "--heads", "2",
         "--layers", "1", "--d-ff", "32", "--batch-size", "16", "--steps", "100000", "--eval-every", "0"]


def interrupt_once(folder, wait):
    """Start train --save, send SIGINT wait seconds after its header -> (status, the line, path)."""
    path = os.path.join(folder, "model.npz")
    child = subprocess.Popen([sys.executable, "-m", "tinytransformer", *TRAIN, "--save", path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": ROOT})
    child.stdout.readline()                                  # the header: training starts now
    time.sleep(wait)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    return child.returncode, err.strip().splitlines()[-1], path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random moments")
    args = parser.parse_args(argv)
    from tinytransformer.checkpoint import checkpoint_step, load_checkpoint

    waits = np.random.default_rng(args.seed).uniform(0.0, 3.0, size=args.runs)
    lost = 0
    for run, wait in enumerate(waits, 1):
        with tempfile.TemporaryDirectory() as folder:
            status, line, path = interrupt_once(folder, wait)
            said = re.search(r"interrupted \(SIGINT\) after step (\d+); the model of step (\d+) is saved", line)
            try:
                ok = (status == 130 and said is not None and said.group(1) == said.group(2)
                      and checkpoint_step(path) == int(said.group(1)) and load_checkpoint(path) is not None)
            except (OSError, ValueError):
                ok = False
            lost += not ok
            print(f"run {run:2d}: SIGINT after {wait:.2f} s, exit {status}, "
                  f"{'step ' + said.group(1) + ' saved and loads' if ok else 'LOST: ' + line}")
    print(f"{args.runs} interrupted, {lost} lost")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
