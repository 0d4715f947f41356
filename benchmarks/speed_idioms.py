"""What each speed idiom in the ops buys: the plain NumPy form against the one the ops use, op by op.

Each idiom computes what its plain form does (the ops' comments give the
plain form beside it); this script times both on the arrays a step makes,
CPU time, the best of --repeats, one BLAS thread: attention's (B, h, T, T)
arrays at lengths 11 (the classroom), 129 and 257 (reverse at 128 and 256,
batch 64, 4 heads of 16), layer norm's (B, T, d_model) rows and GELU's
(B, T, d_ff). It also times a training step at length 256 with glibc's
thresholds as they were (mmap 64 MiB, trim 256 MiB) and as use_speed_settings
sets them now, each in a fresh process, with the page faults a step takes.
Idioms that were tried and not taken are timed too (the reason for each is on
the speed page). Run from the repository root (about a minute):

    PYTHONPATH=. python benchmarks/speed_idioms.py [--repeats 7 --no-record]

It writes benchmarks/results/speed_idioms.json, which docs/results/speed.md quotes.
"""
import argparse
import json
import os
import pathlib
import resource
import subprocess
import sys
import time

from common import load_average, use_threads, write_record

RECORD = pathlib.Path(__file__).resolve().parent / "results" / "speed_idioms.json"
LENGTHS = (11, 129, 257)          # attention's T_k: the classroom's decoder, reverse at 128 and 256
OLD_THRESHOLDS = (64 * 2**20, 256 * 2**20)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="timings of each form; the best is kept")
    parser.add_argument("--no-record", action="store_true", help="print only; write no record")
    parser.add_argument("--step-child", nargs=2, type=int, metavar=("MMAP", "TRIM"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def best_ms(fn, repeats):
    """The least CPU time of repeats calls of fn, in ms (after one untimed call)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return round(1e3 * min(times), 3)


def idioms(T, rng):
    """{name: (plain form, idiom)} on attention's arrays of length T and the rows of a step of that length."""
    import numpy as np
    B, h, d = 64, 4, 16
    q, k, v, dout = (rng.standard_normal((B, h, T, d)).astype(np.float32) for _ in range(4))
    scores = rng.standard_normal((B, h, T, T)).astype(np.float32)
    probs = rng.random((B, h, T, T)).astype(np.float32)
    keep = np.tri(T, dtype=bool)
    work = np.empty_like(scores)
    m = scores.max(axis=-1, keepdims=True)
    x = rng.standard_normal((B, T, 64)).astype(np.float32)                  # layer norm's rows
    hidden = rng.standard_normal((B, T, 128)).astype(np.float32)            # GELU's
    column = np.full((64, 1), 1 / 64, dtype=np.float32)

    def softmax_plain():
        e = np.exp(scores - m)
        return e / e.sum(axis=-1, keepdims=True)

    def softmax_in_place():
        np.subtract(scores, m, out=work)
        np.exp(work, out=work)
        np.divide(work, work.sum(axis=-1, keepdims=True), out=work)

    return {
        "gelu cube": (lambda: hidden ** 3, lambda: hidden * hidden * hidden),
        "row max": (lambda: scores.max(axis=-1, keepdims=True), lambda: np.fmax.reduce(scores, axis=-1, keepdims=True)),
        "mask": (lambda: np.where(keep, scores, -np.inf), lambda: np.copyto(work, -np.inf, where=~keep)),
        "scale": (lambda: q @ k.swapaxes(-1, -2) * 0.25, lambda: (q * 0.25) @ k.swapaxes(-1, -2)),
        "scale backward": (lambda: (probs * 0.25) @ k, lambda: probs @ k * 0.25),
        "row dot": (lambda: (dout @ v.swapaxes(-1, -2) * probs).sum(axis=-1),
                    lambda: np.vecdot(dout @ v.swapaxes(-1, -2), probs)),
        "softmax in place": (softmax_plain, softmax_in_place),
        "dv order": (lambda: probs.swapaxes(-1, -2) @ dout, lambda: (dout.swapaxes(-1, -2) @ probs).swapaxes(-1, -2)),
        "layer norm mean": (lambda: x.mean(axis=-1, keepdims=True), lambda: x @ column),
        "einsum scores": (lambda: q @ k.swapaxes(-1, -2), lambda: np.einsum("...qd,...kd->...qk", q, k)),
    }


def step_child(mmap, trim):
    """Print {"ms", "system_ms", "page_faults"} of a training step at length 256 with these thresholds."""
    import ctypes
    import ctypes.util

    import numpy as np

    from tinytransformer.optim import Adam
    from tinytransformer.tasks import make_task
    from tinytransformer.train import train_step
    mallopt = ctypes.CDLL(ctypes.util.find_library("c")).mallopt
    assert mallopt(-3, mmap) and mallopt(-1, trim)             # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD
    task = make_task("reverse", seq_len=256)
    model = task.new_model(task.config(), rng=0)
    optimizer = Adam(model.parameters(), lr=1e-3)
    batch = task.batch(64, np.random.default_rng(0))
    train_step(model, optimizer, batch, task.loss)
    n, before = 3, resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(n):
        train_step(model, optimizer, batch, task.loss)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / n
    print(json.dumps({"ms": round(1e3 * cpu, 1), "system_ms": round(1e3 * (after.ru_stime - before.ru_stime) / n, 1),
                      "page_faults": round((after.ru_minflt - before.ru_minflt) / n)}))


def memory_runs():
    """The T = 256 step with the old thresholds and with use_speed_settings' own, each in a fresh process."""
    from tinytransformer.tools.speed_settings import MMAP_BYTES, TRIM_BYTES
    runs = {}
    for name, (mmap, trim) in {"mmap 64 MiB, trim 256 MiB": OLD_THRESHOLDS,
                               f"mmap {MMAP_BYTES >> 20} MiB, trim {TRIM_BYTES >> 20} MiB": (MMAP_BYTES, TRIM_BYTES)}.items():
        out = subprocess.run([sys.executable, __file__, "--step-child", str(mmap), str(trim)], capture_output=True,
                             text=True, check=True, env=os.environ)
        runs[name] = json.loads(out.stdout.splitlines()[-1])
        print(f"T=256 step, {name}: {runs[name]}", flush=True)
    return runs


def main(argv=None):
    args = parse_args(argv)
    use_threads(1)
    if args.step_child:
        return step_child(*args.step_child)
    import numpy as np
    load_before = load_average()
    rng = np.random.default_rng(0)
    record = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "numpy": np.__version__,
              "repeats": args.repeats, "load_before": load_before, "ms": {}}
    print(f"ms, best of {args.repeats} (CPU time), one thread; load {load_before}")
    print(f"{'idiom':<18}" + "".join(f"{'T=' + str(T) + ' plain':>16}{'idiom':>10}{'gain':>9}" for T in LENGTHS))
    for T in LENGTHS:
        for name, (plain, idiom) in idioms(T, rng).items():
            record["ms"].setdefault(name, {})[f"T={T}"] = {"plain": best_ms(plain, args.repeats),
                                                           "idiom": best_ms(idiom, args.repeats)}
    for name, by_length in record["ms"].items():
        for case in by_length.values():
            case["gain"] = round(case["plain"] / case["idiom"], 2)
        print(f"{name:<18}" + "".join(f"{c['plain']:>16.3f}{c['idiom']:>10.3f}{c['gain']:>8.2f}x"
                                      for c in by_length.values()), flush=True)
    record["T=256 step"] = memory_runs()
    record["load_after"] = load_average()
    print(f"load {record['load_after']}")
    if not args.no_record:
        write_record(RECORD, record)


if __name__ == "__main__":
    main()
