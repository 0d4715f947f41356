"""How long the teaching tools take: building a student edition, and the grader, op by op and in all.

    python benchmarks/grader_times.py [--repeats 5]

Prints the load average before and after (the machine is shared: say so beside
any number), the seconds to build an edition of the whole project (median of
the repeats), the grader's seconds for every op (median), the sum, and the wall
time of `python -m tinytransformer check` in a fresh process, imports included.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import load_average, median_seconds
from tinytransformer.course import edition, grader

ROOT = Path(__file__).resolve().parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average (1 min) before: {load_average().split()[0]}")

    with tempfile.TemporaryDirectory() as folder:
        count = iter(range(args.repeats))
        build, _ = median_seconds(lambda: edition.build_edition(Path(folder) / f"edition{next(count)}"), args.repeats)
    print(f"build a student edition (every op blank): {build:.2f} s, median of {args.repeats}")

    print(f"\n{'op':<22}{'grader seconds':>15}")
    total = 0.0
    for name in grader.op_names():
        seconds, _ = median_seconds(lambda: grader.grade_op(name), args.repeats)
        total += seconds
        print(f"{name:<22}{seconds:>15.3f}")
    print(f"{'every op':<22}{total:>15.3f}")

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    wall, _ = median_seconds(lambda: subprocess.run([sys.executable, "-m", "tinytransformer", "check"], cwd=ROOT,
                                                 env=env, capture_output=True, check=True), args.repeats)
    print(f"python -m tinytransformer check, a fresh process: {wall:.2f} s wall, median of {args.repeats}")
    print(f"load average (1 min) after: {load_average().split()[0]}")


if __name__ == "__main__":
    main()
