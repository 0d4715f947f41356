"""What each speed idiom in the ops buys: the plain NumPy form against the one the ops use, op by op.

Each idiom computes what its plain form does (the ops' comments give the
plain form beside it); this script times both on the arrays a step makes,
CPU time, the best of --repeats, one BLAS thread: attention's (B, h, T, T)
arrays at lengths 11 (the classroom), 129 and 257 (reverse at 128 and 256,
batch 64, 4 heads of 16), layer norm's (B, T, d_model) rows and GELU's
(B, T, d_ff), cross-entropy's (B, T, V) at translate's vocabulary and the
embedding's one-hot (B * T, V); and attention's forward and backward over the
whole batch against a few sequences at a time (the op's cache-sized rows), and
the same at each budget for a slice's scores from 0.5 to 8 MiB; and, if
torch is installed, attention's forward and backward against PyTorch's fused
scaled_dot_product_attention and against PyTorch's ops one at a time. It times
them with the memory settings training uses (use_speed_settings). It also times a training step at length 256 with glibc's
thresholds as they were (mmap 64 MiB, trim 256 MiB) and as use_speed_settings
sets them now, each in a fresh process, with the page faults a step takes.
Idioms that were tried and not taken are timed too (the reason for each is on
the speed page). Run from the repository root (about two minutes):

    PYTHONPATH=. python benchmarks/speed_idioms.py [--repeats 7 --no-record]

It writes benchmarks/results/speed_idioms.json, which docs/results/speed.md quotes.
"""
import argparse
import json
import math
import os
import pathlib
import resource
import subprocess
import sys
import time

from common import import_torch_reference, load_average, use_threads, write_record

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

    from tinytransformer.ops import attention_fast as op
    from tinytransformer.tasks import make_task
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

    V = make_task("translate").config().vocab_size                          # translate's vocabulary
    logp = np.log(rng.dirichlet(np.ones(V), (B, T)).astype(np.float32))     # cross-entropy's (B, T, V)
    targets = rng.integers(0, V, (B, T))
    flat = targets.reshape(-1)

    def attention_pass(cache_bytes):
        """attention forward and backward with the (T_q, T_k) arrays taken cache_bytes at a time."""
        def run():
            saved, op.CACHE_BYTES = op.CACHE_BYTES, cache_bytes
            try:
                op.attention_backward_fast(dout, op.attention_forward_fast(q, k, v, keep)[1])
            finally:
                op.CACHE_BYTES = saved
        return run

    def targets_one_hot():
        one_hot = (targets[..., None] == np.arange(V)).astype(np.float32)
        return np.exp(logp) - 0.0 / V - 1.0 * one_hot

    def targets_in_place():
        p = np.exp(logp)
        p -= 0.0 / V
        p.reshape(-1, V)[np.arange(flat.size), flat] -= 1.0

    def one_hot_compared():
        return (flat[:, None] == np.arange(V)).astype(np.float32)

    def one_hot_set():
        one_hot = np.zeros((flat.size, V), np.float32)
        one_hot[np.arange(flat.size), flat] = 1
        return one_hot

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
        "cache-sized rows": (attention_pass(math.inf), attention_pass(op.CACHE_BYTES)),
        "target subtraction": (targets_one_hot, targets_in_place),
        "embedding one-hot": (one_hot_compared, one_hot_set),
        "einsum scores": (lambda: q @ k.swapaxes(-1, -2), lambda: np.einsum("...qd,...kd->...qk", q, k)),
    }


def cache_budgets(repeats, rng):
    """{"T=129": {budget: ms}, "T=257": ...}: attention forward and backward (batch 64, 4 heads of 16) with its
    scores taken at most budget MiB at a time, and as one whole batch."""
    import numpy as np

    from tinytransformer.ops import attention_fast as op
    saved, times = op.CACHE_BYTES, {}
    for T in LENGTHS[1:]:
        q, k, v, dout = (rng.standard_normal((64, 4, T, 16)).astype(np.float32) for _ in range(4))
        keep = np.tri(T, dtype=bool)
        budgets = {**{f"{m} MiB": m * 2**20 for m in (0.5, 1, 2, 4, 8)}, "whole batch": math.inf}
        runs = {name: [] for name in budgets}
        for _ in range(repeats):                   # the budgets in turns, so that no state of the heap favours one
            for name, budget in budgets.items():
                op.CACHE_BYTES = budget
                runs[name].append(best_ms(lambda: op.attention_backward_fast(dout, op.attention_forward_fast(q, k, v, keep)[1]),
                                          1))
        op.CACHE_BYTES = saved
        times[f"T={T}"] = {name: min(ms) for name, ms in runs.items()}
        print(f"attention at T={T}, scores at most: " + ", ".join(f"{n} {ms:.2f}" for n, ms in times[f"T={T}"].items()),
              flush=True)
    return times


def against_pytorch(repeats, rng):
    """Ops against PyTorch's, CPU ms (best of repeats), one thread; None without torch:
    {"attention": {"T=33": {"tinytransformer", "PyTorch fused", "PyTorch unfused"}, ...}: forward and backward,
     batch 64, 4 heads of 16, causal mask, in the op, in torch's scaled_dot_product_attention and in torch's
     own ops one step at a time;
     "linear products": {"tinytransformer", "PyTorch"}: the three products of a linear layer 64 -> 128
     (y = x W, dx = dy W.T, dW = x.T dy) on the rows of a batch of 64 at length 129;
     "layer norm": {"tinytransformer", "PyTorch"}: layer norm's forward and backward over those rows (d 64)}."""
    reference = import_torch_reference(1)
    if reference is None:
        return None
    import numpy as np
    torch = reference.torch
    from tinytransformer.ops import attention_fast as op
    from tinytransformer.ops import layernorm
    times = {"attention": {}}
    for T in (33, *LENGTHS[1:]):
        q, k, v, dout = (rng.standard_normal((64, 4, T, 16)).astype(np.float32) for _ in range(4))
        keep = np.tri(T, dtype=bool)
        tq, tk, tv = (torch.from_numpy(a).requires_grad_() for a in (q, k, v))
        tdout, tkeep = torch.from_numpy(dout), torch.from_numpy(keep)

        def fused():
            torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tkeep).backward(tdout)

        def unfused():
            scores = (tq @ tk.transpose(-1, -2) * 0.25).masked_fill(~tkeep, float("-inf"))
            (scores.softmax(-1) @ tv).backward(tdout)
        times["attention"][f"T={T}"] = {
            "tinytransformer": best_ms(lambda: op.attention_backward_fast(dout, op.attention_forward_fast(q, k, v, keep)[1]),
                                       repeats),
            "PyTorch fused": best_ms(fused, repeats), "PyTorch unfused": best_ms(unfused, repeats)}
    x, dx = (rng.standard_normal((64 * 129, 64)).astype(np.float32) for _ in range(2))
    W, dy = rng.standard_normal((64, 128)).astype(np.float32), rng.standard_normal((64 * 129, 128)).astype(np.float32)
    gamma, beta = np.ones(64, np.float32), np.zeros(64, np.float32)
    tx, tW, tdy, tdx = map(torch.from_numpy, (x, W, dy, dx))
    tx_grad = tx.clone().requires_grad_()
    tgamma, tbeta = (torch.from_numpy(a).requires_grad_() for a in (gamma, beta))
    times["linear products"] = {"tinytransformer": best_ms(lambda: (x @ W, dy @ W.T, x.T @ dy), repeats),
                                "PyTorch": best_ms(lambda: (tx @ tW, tdy @ tW.T, tx.T @ tdy), repeats)}
    times["layer norm"] = {
        "tinytransformer": best_ms(lambda: layernorm.layer_norm_backward(
            dx, layernorm.layer_norm_forward(x, gamma, beta)[1]), repeats),
        "PyTorch": best_ms(lambda: torch.nn.functional.layer_norm(tx_grad, (64,), tgamma, tbeta).backward(tdx),
                           repeats)}
    for name, by_side in times.items():
        print(f"against PyTorch, {name}: {by_side}", flush=True)
    return times


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

    from tinytransformer.tools.speed_settings import use_speed_settings
    use_speed_settings()                 # glibc's thresholds as training sets them: no array is faulted in afresh
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
    record["cache budget"] = cache_budgets(args.repeats, rng)
    record["attention against PyTorch"] = against_pytorch(args.repeats, rng)
    record["T=256 step"] = memory_runs()
    record["load_after"] = load_average()
    print(f"load {record['load_after']}")
    if not args.no_record:
        write_record(RECORD, record)


if __name__ == "__main__":
    main()
