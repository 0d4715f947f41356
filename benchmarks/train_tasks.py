"""Steps, seconds and results of `python -m tinytransformer train --task NAME` with its defaults, per seed.

Each run is a fresh process running the command line exactly as a user
would, with --json; the table gives, per task and seed, the steps taken,
whether the target was reached, the validation result training stopped on
(or the held-out loss), the test result measured once at the end, the wall
seconds and ms/step, and the machine's load average before the run. Every
run is written to benchmarks/results/train_tasks.json (the README's task
table and the book's training results page quote it), each task's runs
replacing that task's earlier ones. Run from the repository root:

    PYTHONPATH=. python benchmarks/train_tasks.py --tasks addition text --seeds 0 1 2 3 4

Extra options after -- go to every run (for example -- --lr-scale 2 --warmup 200); a run with extra
options is printed, not recorded.
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, write_record  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "results" / "train_tasks.json"
KEPT = ("steps", "reached_target_at_step", "exact_match", "test_exact_match", "test_size", "held_out_loss",
        "held_out_nats_per_character", "bleu", "chrf", "wall_seconds", "ms_per_step")


def run(task, seed, extra):
    """(the --json summary, the exit status, the load average before) of one run."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.json")
        load = load_average()
        done = subprocess.run([sys.executable, "-m", "tinytransformer", "train", "--task", task,
                               "--seed", str(seed), "--json", path, *extra],
                              capture_output=True, text=True)
        if not os.path.exists(path):
            raise SystemExit(f"train --task {task} --seed {seed} failed:\n{done.stderr}")
        with open(path) as f:
            return json.load(f), done.returncode, load


def percent(share):
    return f"{share:.1%}".replace(".0%", "%") if share in (0.0, 1.0) else f"{share:.1%}"


def table(record):
    """The book's table of the recorded runs, in Markdown: one row per task and seed."""
    from tinytransformer.tasks import TASKS
    lines = ["| command (defaults) | seed | steps | stopped on: validation | test, touched once | wall seconds | "
             "ms per step | load before |", "|---|---|---|---|---|---|---|---|"]
    for task, runs in record.items():
        measure = TASKS[task].measure
        for run in runs["runs"]:
            if run["test_exact_match"] is None:
                watched, test = f"held-out loss {run['held_out_loss']:.3f} (nothing stops on it)", "-"
            else:
                reached = (f"reached at step {run['reached_target_at_step']}" if run["reached_target_at_step"]
                           else "target not reached")
                watched = f"{measure} {percent(run['exact_match'])}, {reached}"
                test = f"{measure} {percent(run['test_exact_match'])} ({run['test_size']})"
                if run.get("bleu") is not None:
                    test += f", BLEU {run['bleu']:.1f}, chrF {run['chrf']:.1f}"
            lines.append(f"| `train --task {task}` | {run['seed']} | {run['steps']} | {watched} | {test} | "
                         f"{run['wall_seconds']:.1f} | {run['ms_per_step']:.1f} | {run['load_before'].split()[0]} |")
    return "\n".join(lines)


def main(argv=None):
    from tinytransformer.tasks import TASKS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--table", action="store_true", help="print the recorded runs as the book's table; run nothing")
    parser.add_argument("extra", nargs="*", help="options passed to every run (after --)")
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads(OUT.read_text())))
        return
    record = json.loads(OUT.read_text()) if OUT.exists() else {}     # task -> {"date", "machine", "runs"}
    print(f"{'task':<10}{'seed':>5}{'steps':>7}{'exit':>5}{'valid.':>9}{'test':>9}{'wall s':>8}{'ms/step':>9}  load")
    for task in args.tasks:
        walls, runs = [], []
        for seed in args.seeds:
            result, status, load = run(task, seed, args.extra)
            watched = result["exact_match"] if result["exact_match"] is not None else result["held_out_loss"]
            test = result["test_exact_match"]
            walls.append(result["wall_seconds"])
            runs.append({"seed": seed, "exit": status, "load_before": load, **{k: result.get(k) for k in KEPT}})
            print(f"{task:<10}{seed:>5}{result['steps']:>7}{status:>5}{watched:>9.4f}"
                  f"{'-' if test is None else format(test, '.4f'):>9}"
                  f"{result['wall_seconds']:>8.1f}{result['ms_per_step']:>9.1f}  {load}", flush=True)
        if len(walls) > 1:
            print(f"{task:<10} median wall {statistics.median(walls):.1f} s, max {max(walls):.1f} s")
        if not args.extra:
            record[task] = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                            "machine": f"{platform.machine()}, {os.cpu_count()} cores, OPENBLAS_NUM_THREADS="
                                       f"{os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}",
                            "runs": runs}
            write_record(OUT, dict(sorted(record.items(), key=lambda item: list(TASKS).index(item[0]))))


if __name__ == "__main__":
    main()
