"""Steps, seconds and ms/step of `python -m tinytransformer train --task NAME` with its defaults, per seed.

Each run is a fresh process running the command line exactly as a user
would, with --json; the table gives, per task and seed, the steps taken,
whether the target was reached, the held-out result, the wall seconds and
ms/step, and the machine's load average before the run. Run from the
repository root:

    PYTHONPATH=. python benchmarks/train_tasks.py --tasks addition text --seeds 0 1 2 3 4

Extra options after -- go to every run (for example -- --lr-scale 2 --warmup 200).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(task, seed, extra):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.json")
        load = os.getloadavg()[0]
        done = subprocess.run([sys.executable, "-m", "tinytransformer", "train", "--task", task,
                               "--seed", str(seed), "--json", path, *extra],
                              capture_output=True, text=True)
        if not os.path.exists(path):
            raise SystemExit(f"train --task {task} --seed {seed} failed:\n{done.stderr}")
        with open(path) as f:
            return json.load(f), done.returncode, load


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", nargs="+", default=["copy", "reverse", "addition", "text", "mlm", "classify"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("extra", nargs="*", help="options passed to every run (after --)")
    args = parser.parse_args(argv)
    print(f"{'task':<10}{'seed':>5}{'steps':>7}{'exit':>5}{'held-out':>10}{'wall s':>8}{'ms/step':>9}{'load':>6}")
    for task in args.tasks:
        walls = []
        for seed in args.seeds:
            result, status, load = run(task, seed, args.extra)
            held_out = result["exact_match"] if result["exact_match"] is not None else result["held_out_loss"]
            walls.append(result["wall_seconds"])
            print(f"{task:<10}{seed:>5}{result['steps']:>7}{status:>5}{held_out:>10.4f}"
                  f"{result['wall_seconds']:>8.1f}{result['ms_per_step']:>9.1f}{load:>6.2f}", flush=True)
        if len(walls) > 1:
            print(f"{task:<10} median wall {statistics.median(walls):.1f} s, max {max(walls):.1f} s")


if __name__ == "__main__":
    main()
