"""The per-step speed check, in one command: tinytransformer against PyTorch eager.

Each library runs in its own process (benchmarks/step_time.py --no-torch or
--torch-only), the processes taking turns, at 1 and at 2 threads, --runs times
over; each run times --rounds x 20 steps after 20 untimed ones. Prints every
run, the median of the runs for each, and the ratios of the medians. With
--before REV it also times the tinytransformer of that git revision (extracted
into a temporary directory), as a third contender taking its turn. About 3
minutes with the defaults on a 2-core machine. Run from the repository root:

    python benchmarks/speed_check.py [--runs 5 --rounds 5 --before REV]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def time_one(package_root, threads, which, rounds):
    """Median ms per step of one library in a fresh process."""
    flag = {"tinytransformer": "--no-torch", "PyTorch": "--torch-only"}[which]
    env = {**os.environ, "PYTHONPATH": package_root}
    out = subprocess.run([sys.executable, os.path.join(HERE, "step_time.py"), "--threads", str(threads),
                          "--rounds", str(rounds), flag], env=env, capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        if line.startswith(which):
            return float(line[28:].split()[0])
    raise RuntimeError(f"speed_check: no {which} line in step_time.py's output:\n{out.stdout}{out.stderr}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each library at each thread count")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of 20 timed steps in each run")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--before", metavar="REV", help="also time the tinytransformer of this git revision")
    args = parser.parse_args(argv)

    contenders = {"tinytransformer": (ROOT, "tinytransformer"), "PyTorch": (ROOT, "PyTorch")}
    if args.before:
        before_root = tempfile.mkdtemp(prefix="tinytransformer-before-")
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.before, "tinytransformer"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", before_root], input=archive, check=True)
        contenders = {f"tinytransformer {args.before}": (before_root, "tinytransformer"), **contenders}

    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else "?"
    print(f"ms per training step, classroom model, medians of steps; load average before: {' '.join(load)}")
    for threads in args.threads:
        runs = {name: [] for name in contenders}
        for run in range(args.runs):
            for name, (root, which) in contenders.items():
                runs[name].append(time_one(root, threads, which, args.rounds))
            print(f"  {threads} thread(s), run {run + 1}: "
                  + ", ".join(f"{name} {ms[-1]:.2f}" for name, ms in runs.items()), flush=True)
        medians = {name: statistics.median(ms) for name, ms in runs.items()}
        print(f"{threads} thread(s), median of {args.runs} runs: "
              + ", ".join(f"{name} {ms:.2f}" for name, ms in medians.items()))
        for name, ms in medians.items():
            if name != "PyTorch":
                print(f"    ratio {name} / PyTorch: {ms / medians['PyTorch']:.2f}")


if __name__ == "__main__":
    main()
