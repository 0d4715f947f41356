"""Seconds to grade a class with `python -m tinytransformer grade`, in the sandbox and without it.

    python benchmarks/class_grading.py [--students 200] [--jobs 2] [--sandbox-only]

Builds --students submissions with the class grader tests' helpers (tests/test_class_grading.py): of
every five, two right, two with three wrong backward passes and one blank; every op and the tape graded.
Times the command in a fresh process (its start, the trials made once, every submission's process), once
in the sandbox it picks (bubblewrap here) and once with --no-sandbox; prints the seconds, the seconds per
submission, the grade process's own peak memory (its maximum resident set: the instructor's process, not the
students') and the sandbox's cost per submission (the difference), with the load average before and after,
and records them in benchmarks/results/class_grading.json. --sandbox-only times the sandbox alone and records it
in benchmarks/results/class_grading_sandbox.json.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import load_average, write_record

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).resolve().parent / "results" / "class_grading.json"
SANDBOX_ONLY = OUT.with_name("class_grading_sandbox.json")
# grade, run in this process so that its own peak memory can be read at the end (ru_maxrss: KiB on Linux)
GRADE = ("import resource, sys; from tinytransformer.__main__ import main; status = main(sys.argv[1:]); "
         "print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(status)")


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


def timed(paths, jobs, *flags):
    """(seconds, stdout, load average before, the grade process's peak resident memory in MiB) of one grade
    command over paths."""
    before = load_average()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", GRADE, "grade", *paths, "--tape", "--jobs", str(jobs),
                           *flags], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"grade failed: {done.stderr.strip()}")
    peak = int(done.stderr.strip().splitlines()[-1].split()[1]) / 1024
    return seconds, done.stdout, before, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sandbox-only", action="store_true", help="time the sandbox alone, not --no-sandbox")
    args = parser.parse_args()
    record = {"students": args.students, "jobs": args.jobs, "cpus": os.cpu_count()}
    runs = (("sandbox", ()),) if args.sandbox_only else (("sandbox", ()), ("no_sandbox", ("--no-sandbox",)))
    with tempfile.TemporaryDirectory() as scratch:
        build_class(Path(scratch), args.students)
        paths = sorted(map(str, Path(scratch).iterdir()))
        for name, flags in runs:
            seconds, out, before, peak = timed(paths, args.jobs, *flags)
            first, *lines = out.splitlines()
            scores = [line.split(": ")[1] for line in lines if line.startswith("/")]
            record[name] = {"seconds": round(seconds, 1), "per_submission": round(seconds / args.students, 3),
                            "peak_memory_mib": round(peak, 1),
                            "first_line": first, "load_before": before, "load_after": load_average(),
                            "scores": {s: scores.count(s) for s in sorted(set(scores))}}
            print(f"{name}: {args.students} submissions, --jobs {args.jobs}: {seconds:.1f} s, "
                  f"{seconds / args.students:.3f} s each, grade's peak memory {peak:.0f} MiB; load average before "
                  f"{before}, after {load_average()}")
            print(f"  {first}\n  scores: {', '.join(f'{s} x{n}' for s, n in record[name]['scores'].items())}")
    if args.sandbox_only:
        write_record(SANDBOX_ONLY, record)
        return
    cost = (record["sandbox"]["seconds"] - record["no_sandbox"]["seconds"]) / args.students
    record["sandbox_cost_per_submission"] = round(cost, 3)
    print(f"the sandbox's cost: {cost:.3f} s per submission")
    write_record(OUT, record)


if __name__ == "__main__":
    main()
