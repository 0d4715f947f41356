"""Seconds to grade a class with `python -m tinytransformer grade`, and the extrapolation to a class of 200.

    python benchmarks/class_grading.py [--students 50] [--jobs 2]

Builds --students submissions with the class grader tests' helpers (tests/test_class_grading.py): of
every five, two right, two with three wrong backward passes and one blank; every op and the tape graded.
Times the command in a fresh process (its start, the trials made once, every submission's process),
prints the seconds, the seconds per submission and that times 200, with the load average before and after.
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import load_average

ROOT = Path(__file__).resolve().parents[1]


def build_class(folder, students):
    sys.path.insert(0, str(ROOT / "tests"))
    import test_class_grading as helpers   # the submissions the tests grade (the instructor's tree has them)
    for i in range(students):
        if i % 5 == 4:
            files = helpers.blank_files()
        else:
            files = helpers.library_files()
            if i % 5 in (1, 3):
                for op, source in helpers.WRONG.items():
                    files = helpers.with_function(files, op, source)
        helpers.write(folder / f"student{i:03d}", files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        build_class(Path(scratch), args.students)
        before = load_average()
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "tinytransformer", "grade", *sorted(map(str, Path(scratch).iterdir())),
                               "--tape", "--jobs", str(args.jobs)], capture_output=True, text=True,
                              env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
        seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"grade failed: {done.stderr.strip()}")
    scores = [line.split(": ")[1] for line in done.stdout.splitlines() if line.startswith("/")]
    print(f"{args.students} submissions, --jobs {args.jobs}: {seconds:.1f} s, {seconds / args.students:.3f} s each; "
          f"200 would take about {200 * seconds / args.students:.0f} s")
    print(f"scores: {', '.join(f'{s} x{scores.count(s)}' for s in sorted(set(scores)))}")
    print(f"load average before: {before}; after: {load_average()}")


if __name__ == "__main__":
    main()
