"""translate on a long standard input: its memory must not grow with the number of lines. Each run is
`python -m tinytransformer translate --load MODEL.npz < LINES` in a fresh process (its peak RSS is the whole
process, Python and NumPy included); prints one line per run and writes benchmarks/results/translate_stdin.json.

    python benchmarks/translate_stdin.py [--lines 2000 20000] [--steps 1]

The model is the translate task's default one, trained --steps steps: after 1 step it never writes the end
of a sentence, so greedy decoding runs every line to max_len, the most time and memory a line can cost (a
trained model stops sooner). The lines are the task's held-out and validation sentences, repeated, with one
line in 1,000 carrying a word outside the vocabulary, which must be answered on stderr while the rest are
translated.
"""
import argparse
import datetime
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, write_record  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "translate_stdin.json"
BAD_EVERY = 1000          # one line in this many has a word outside the vocabulary
# run in the child: translate its stdin in a grandchild, report its seconds (wall clock, and of CPU: a busy machine
# stretches the first, hardly the second) and its peak RSS (ru_maxrss is in KiB on Linux)
RUN = """
import resource, subprocess, sys, time
start = time.perf_counter()
with open(sys.argv[2], "rb") as lines, open(sys.argv[3], "wb") as out, open(sys.argv[4], "wb") as err:
    status = subprocess.run([sys.executable, "-m", "tinytransformer", "translate", "--load", sys.argv[1]],
                            stdin=lines, stdout=out, stderr=err).returncode
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{time.perf_counter() - start:.2f}\\t{used.ru_utime + used.ru_stime:.2f}\\t{used.ru_maxrss / 1024:.1f}\\t{status}")
"""


def write_lines(path, n):
    """n English lines of the task's test sentences, one in BAD_EVERY with an unknown word -> how many such."""
    from tinytransformer.tasks.translation import TranslationTask
    task = TranslationTask()
    sentences = task.held_out.english + task.validation.english
    lines = ["The dgo sleeps." if i % BAD_EVERY == 0 else sentences[i % len(sentences)] for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return sum(1 for i in range(n) if i % BAD_EVERY == 0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[2000, 20000], help="standard inputs of these lengths")
    parser.add_argument("--steps", type=int, default=1, help="training steps of the model (1: it never stops early)")
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before, results = load_average(), []
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        model = folder / "model.npz"
        subprocess.run([sys.executable, "-m", "tinytransformer", "train", "--task", "translate", "--steps",
                        str(args.steps), "--eval-every", "0", "--save", str(model)], env=env, capture_output=True,
                       timeout=3600)
        if not model.exists():
            raise SystemExit("translate_stdin: training the model failed")
        for n in args.lines:
            lines, out, err = folder / "in.txt", folder / "out.txt", folder / "err.txt"
            bad = write_lines(lines, n)
            done = subprocess.run([sys.executable, "-c", RUN, str(model), str(lines), str(out), str(err)],
                                  capture_output=True, text=True, env=env, timeout=3600)
            seconds, cpu_seconds, peak_mb, status = done.stdout.strip().split("\t")
            answered = len(out.read_text().splitlines())
            refused = len(err.read_text().splitlines())
            result = {"lines": n, "seconds": float(seconds), "cpu_seconds": float(cpu_seconds),
                      "peak_rss_mb": float(peak_mb), "exit_status": int(status),
                      "lines_out": answered, "lines_refused_on_stderr": refused, "lines_with_unknown_word": bad,
                      "every_line_answered": answered == n and refused == bad and int(status) == 1}
            results.append(result)
            print(f"{n:,} lines: {seconds} s ({cpu_seconds} s of CPU), peak RSS {peak_mb} MB, exit status {status}, "
                  f"{answered:,} lines out, {refused} refused on stderr (of {bad} with an unknown word)")
    write_record(OUT, {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "machine": os.uname().machine, "cpus": os.cpu_count(), "training_steps": args.steps,
                       "load_before": before, "load_after": load_average(), "results": results})
    return 0 if all(r["every_line_answered"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
