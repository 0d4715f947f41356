"""A training step at every shape: tinytransformer against PyTorch eager, one thread each, in one process.

The cases: the classroom step (reverse, length 10, batch 64); reverse at lengths
32, 64, 128 and 256 (batch 64) and at batches 1 and 8 (length 32); d_model 128
and 256 (4 heads, d_ff twice d_model, the classroom's task); and the translate
and text tasks with their defaults (text: GPT-2's block). Both libraries train
the same model from the same weights (tinytransformer's, copied into
torch_reference.py's model) on the same batches, and take turns, a block of
steps each, the order swapped every round, so that whatever else the machine
does falls on both alike. A step's time is CPU time (time.process_time: the
process's user and system seconds, which a busy machine inflates far less than
the wall clock); each side's figure is the median over the rounds of its
blocks' time per step, and the ratio is the median of the rounds' ratios
(a round's two blocks run back to back, so the machine's drift falls on both),
printed with their quartiles. Recorded, not printed: where tinytransformer's step
goes, op by op (CPU ms of 2 profiled steps). Also printed: the BLAS kernel NumPy runs, the load, and
the fraction of the core's matrix-product peak (the faster side's GFLOP/s on a
1024 x 1024 x 1024 float32 product) that each side's step reaches, counting the
products of its linear layers and attention, forward and backward.

OpenBLAS picks its kernel for the CPU unless OPENBLAS_CORETYPE names one, and
OPENBLAS_L2_SIZE changes its blocking; both are left for other commands, but
this script runs without them: if either is set it starts itself again with
both removed (and says so), unless --keep-openblas-env. Run from the
repository root (about 3 minutes with the defaults):

    PYTHONPATH=. python benchmarks/scaling.py [--rounds 3 --cases classroom T=128 --no-record]

It writes benchmarks/results/scaling.json (or --record PATH: the table, every round, the kernel,
the load, the peak), which docs/results/speed.md quotes.

--long times the long rows instead, into benchmarks/results/scaling_long.json: a GPT step (d_model 256,
4 heads, 2 layers, d_ff 1024, GPT-2's block, batch 8, on Python's language reference) at lengths 256, 512
and 1024, with the ordinary attention op and with the tiled one (attention="flash"), each against PyTorch
eager (scaled_dot_product_attention). Each row also has each side's peak memory: a fresh process builds
the model and takes 2 steps of one side alone, and reports how far its peak resident memory rose above
what it held before the first step.
"""
import argparse
import os
import pathlib
import platform
import resource
import statistics
import sys
import time

from common import import_torch_reference, load_average, use_threads, write_record

RECORD = pathlib.Path(__file__).resolve().parent / "results" / "scaling.json"
OPENBLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
BLOCK_SECONDS = 0.4          # a block of steps takes about this long on the tinytransformer side

# name: (task, the task's options, config changes, batch size)
CASES = {
    "classroom": ("reverse", {}, {}, 64),
    **{f"T={T}": ("reverse", {"seq_len": T}, {}, 64) for T in (32, 64, 128, 256)},
    **{f"B={B}": ("reverse", {"seq_len": 32}, {}, B) for B in (1, 8)},
    **{f"d_model={d}": ("reverse", {}, {"d_model": d, "d_ff": 2 * d}, 64) for d in (128, 256)},
    "translate": ("translate", {}, {}, 64),
    "text": ("text", {}, {}, 32),
}
# the long rows (--long): GPT-2's block at d_model 256, the ordinary attention op and the tiled one
LONG_GPT = {"d_model": 256, "n_heads": 4, "n_layers": 2, "d_ff": 1024}
LONG_CASES = {f"GPT T={T}{suffix}": ("text", {"seq_len": T, "text_name": "python-docs"}, {**LONG_GPT, **changes}, 8)
              for T in (256, 512, 1024) for suffix, changes in (("", {}), (" flash", {"attention": "flash"}))}
LONG_RECORD = RECORD.with_name("scaling_long.json")
ALL_CASES = {**CASES, **LONG_CASES}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9, help="blocks each library takes, in turns")
    parser.add_argument("--cases", nargs="+", choices=tuple(ALL_CASES), default=None,
                        help="the cases to time (default: every case, or every long row with --long)")
    parser.add_argument("--long", action="store_true", help="the long rows, with each side's peak memory, into "
                        f"{LONG_RECORD.name}")
    parser.add_argument("--peak-memory", nargs=2, metavar=("CASE", "SIDE"), help=argparse.SUPPRESS)
    parser.add_argument("--keep-openblas-env", action="store_true",
                        help="run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE as the environment sets them")
    parser.add_argument("--record", type=pathlib.Path, default=None, help="where the record goes")
    parser.add_argument("--no-record", action="store_true", help="print only; write no record")
    args = parser.parse_args(argv)
    args.cases = args.cases or tuple(LONG_CASES if args.long else CASES)
    args.record = args.record or (LONG_RECORD if args.long else RECORD)
    return args


def without_openblas_env(args):
    """Start this script again without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE if either is set; else
    return the names this process was started without (from the note the first process left)."""
    present = [name for name in OPENBLAS_ENV if name in os.environ]
    if present and not args.keep_openblas_env:
        print(f"scaling.py: starting again without {' and '.join(present)} (OpenBLAS then picks its own kernel)",
              flush=True)
        env = {k: v for k, v in os.environ.items() if k not in OPENBLAS_ENV}
        env["SCALING_UNSET"] = " ".join(present)
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    return os.environ.get("SCALING_UNSET", "").split()


def blas_kernel():
    """The BLAS NumPy runs and its kernel ("OpenBLAS 0.3.30, SkylakeX"): threadpoolctl's report if it is
    installed, else NumPy's build configuration (which names the library but not the kernel it chose)."""
    try:
        from threadpoolctl import threadpool_info
        info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if info:
            return ", ".join(f"{i['internal_api']} {i['version']}, {i.get('architecture')} kernel" for i in info)
    except ImportError:
        pass
    import numpy as np
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return f"{blas['name']} {blas.get('version', '')} (threadpoolctl not installed: kernel not known)"


def product_flops(task, model, batch):
    """FLOPs of one step's matrix products: every linear layer (y = x W, dx = dy W.T, dW = x.T dy) and every
    attention (its two products forward, four backward), 2 FLOPs a multiply-add, from one recorded forward."""
    from tinytransformer.tensor import Tape
    with Tape() as tape:
        task.loss(model, batch)
    total = 0
    for record in tape.records:
        if record.name == "linear":
            x2, W = record.cache[:2]                              # x2 (N, d_in), W (d_in, d_out)
            total += 3 * 2 * x2.shape[0] * W.shape[0] * W.shape[1]
        elif record.name == "attention":
            q, _, v, probs = record.cache[:4]                     # probs (..., T_q, T_k)
            total += 2 * 2 * probs.size * q.shape[-1] + 4 * 2 * probs.size * v.shape[-1]
        elif record.name == "flash_attention":                    # the same work; its second q @ k.T not counted
            q, k, v = record.cache[:3]
            scores = q.size // q.shape[-1] * k.shape[-2]         # the (..., T_q, T_k) it never holds at once
            total += 2 * 2 * scores * q.shape[-1] + 4 * 2 * scores * v.shape[-1]
    tape.release()
    return total


def matmul_peak():
    """{"numpy": GFLOP/s, "torch": GFLOP/s or None}: a float32 1024 x 1024 x 1024 product, best of 5 (CPU time)."""
    import numpy as np
    n = 1024
    a, b = (np.random.default_rng(i).standard_normal((n, n)).astype(np.float32) for i in (0, 1))
    sides = {"numpy": lambda: a @ b}
    try:
        import torch
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        sides["torch"] = lambda: ta @ tb
    except ImportError:
        pass
    peak = {"numpy": None, "torch": None}
    for name, product in sides.items():
        product()
        best = min(cpu_seconds(product) for _ in range(5))
        peak[name] = 2 * n ** 3 / best / 1e9
    return peak


def cpu_seconds(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def runners(name, reference, count_flops=True):
    """(the task, {"tinytransformer": step(batch), "PyTorch": step(batch)}, FLOPs a step, profile()) for a case;
    profile() gives tinytransformer's CPU ms a step by op, over 2 steps (tools/profile.py)."""
    import numpy as np

    from tinytransformer.optim import Adam
    from tinytransformer.tasks import make_task
    from tinytransformer.tools.profile import profile_steps
    from tinytransformer.train import train_step
    task_name, options, changes, _ = ALL_CASES[name]
    task = make_task(task_name, **options)
    config = task.config(**changes)
    model = task.new_model(config, rng=0)
    optimizer = Adam(model.parameters(), lr=1e-3)
    steps = {"tinytransformer": lambda batch: train_step(model, optimizer, batch, task.loss)}
    if reference is not None:
        theirs = reference.copy_weights(model, reference.build_model(reference.config_of(model), seed=0))
        their_optimizer = reference.make_optimizer(theirs)
        if type(model).__name__ == "GPT":
            steps["PyTorch"] = lambda batch: reference.lm_train_step(
                theirs, their_optimizer, *reference.to_tensors(batch), lr=1e-3)
        else:
            steps["PyTorch"] = lambda batch: reference.train_step(
                theirs, their_optimizer, *reference.to_tensors(batch), lr=1e-3)
    batch = task.batch(ALL_CASES[name][3], np.random.default_rng(1))
    flops = product_flops(task, model, batch) if count_flops else None   # a forward pass: memory it leaves held

    def profile():
        totals, _ = profile_steps(model, batch, optimizer, task.loss, steps=2, clock=time.process_time)
        ms = {op: round(1e3 * (t["forward"] + t["backward"]) / 2, 2) for op, t in totals.items()}
        return dict(sorted(ms.items(), key=lambda item: -item[1]))
    return task, steps, flops, profile


def time_case(name, reference, rounds):
    """One case's record: per side the median ms a step, every block's ms a step, page faults a step; then
    tinytransformer's ms by op (a profile of 2 more steps, whose total is the op's share of the step)."""
    import numpy as np
    task, steps, flops, profile = runners(name, reference)
    batch_size = ALL_CASES[name][3]
    rng = np.random.default_rng(0)
    warm = [task.batch(batch_size, rng) for _ in range(2)]
    first = {side: [cpu_seconds(lambda b=b: step(b)) for b in warm] for side, step in steps.items()}
    per_block = max(1, min(20, round(BLOCK_SECONDS / first["tinytransformer"][-1])))
    batches = [task.batch(batch_size, rng) for _ in range(rounds * per_block)]
    ms = {side: [] for side in steps}
    faults = {side: [] for side in steps}
    for r in range(rounds):
        block = batches[r * per_block:(r + 1) * per_block]
        for side in (list(steps) if r % 2 == 0 else list(steps)[::-1]):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            seconds = cpu_seconds(lambda: [steps[side](b) for b in block])
            faults[side].append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / per_block)
            ms[side].append(1e3 * seconds / per_block)
    record = {"flops_per_step": flops, "steps_per_block": per_block, "tinytransformer_ms_by_op": profile()}
    for side in steps:
        record[side] = {"ms": round(statistics.median(ms[side]), 2), "blocks_ms": [round(x, 2) for x in ms[side]],
                        "page_faults_per_step": round(statistics.median(faults[side]))}
    if "PyTorch" in steps:
        # each round's two blocks ran back to back: their ratio is the least disturbed by the machine's drift
        ratios = [ours / theirs for ours, theirs in zip(ms["tinytransformer"], ms["PyTorch"])]
        record["ratio"] = round(statistics.median(ratios), 2)
        record["ratio_quartiles"] = [round(q, 2) for q in quartiles(ratios)]
    return record


def peak_memory(name, side, reference):
    """MiB by which this process's peak resident memory rose during 2 steps of one side of case name, above what
    it held before them (Linux: the peak is reset first, through /proc/self/clear_refs; run in a fresh process,
    --peak-memory CASE SIDE, so that the other side's arrays are not there)."""
    import numpy as np
    task, steps, _, _ = runners(name, reference if side == "PyTorch" else None, count_flops=False)
    batches = [task.batch(ALL_CASES[name][3], np.random.default_rng(i)) for i in range(2)]
    before = resident_mib("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")                                       # the peak (VmHWM) starts again from now
    for batch in batches:
        steps[side](batch)
    return resident_mib("VmHWM") - before


def resident_mib(field):
    """This process's resident memory in MiB: VmRSS now, or VmHWM its peak (from /proc/self/status)."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) / 2**10                        # kB


def measured_peak_memory(name, side):
    """peak_memory of case name's side, in a process of its own: each side's arrays alone in it."""
    import subprocess
    done = subprocess.run([sys.executable, __file__, "--peak-memory", name, side], capture_output=True, text=True,
                          check=True)
    return round(float(done.stdout.split()[-1]), 1)


def quartiles(values):
    """The first and third quartiles of values (both the one value when there is one)."""
    if len(values) == 1:
        return values * 2
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return [q1, q3]


def add_shares(case, peak):
    """Each side's share of the peak: its step's product FLOPs over its step's time, over peak GFLOP/s."""
    for side in ("tinytransformer", "PyTorch"):
        if side in case:
            case[side]["share_of_peak"] = round(case["flops_per_step"] / (case[side]["ms"] / 1e3) / 1e9 / peak, 3)


def table(record):
    """The record's table in Markdown, as the speed page shows it."""
    lines = ["| case | tinytransformer ms | PyTorch ms | ratio | share of peak: tinytransformer | PyTorch |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, case in record["cases"].items():
        ours, theirs = case["tinytransformer"], case.get("PyTorch")
        lines.append(f"| {name} | {ours['ms']:.2f} | {'-' if theirs is None else format(theirs['ms'], '.2f')} | "
                     f"{'-' if theirs is None else format(case['ratio'], '.2f')} | {ours['share_of_peak']:.0%} | "
                     f"{'-' if theirs is None else format(theirs['share_of_peak'], '.0%')} |")
    return "\n".join(lines)


def long_table(record):
    """The long rows' table in Markdown: times, ratios and each side's peak memory."""
    lines = ["| case | tinytransformer ms | PyTorch ms | ratio | peak MiB: tinytransformer | PyTorch |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, case in record["cases"].items():
        ours, theirs = case["tinytransformer"], case.get("PyTorch", {})
        lines.append(f"| {name} | {ours['ms']:.0f} | {theirs.get('ms', '-')} | {case.get('ratio', '-')} | "
                     f"{ours['peak_mib']} | {theirs.get('peak_mib', '-')} |")
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    unset = without_openblas_env(args)
    use_threads(1)
    reference = import_torch_reference(1)
    import numpy as np

    if args.peak_memory:
        print(peak_memory(*args.peak_memory, reference))
        return

    kernel = blas_kernel()
    peaks = matmul_peak()
    peak = max(p for p in peaks.values() if p is not None)
    load_before = load_average()
    print(f"{kernel}; NumPy {np.__version__}; " + ("" if reference is None else f"PyTorch {reference.torch.__version__}; ")
          + f"one thread each; unset for this run: {', '.join(unset) or 'nothing'}")
    print(f"matrix-product peak (1024^3 float32): " + ", ".join(
        f"{side} {g:.0f} GFLOP/s" for side, g in peaks.items() if g is not None) + f"; load {load_before}")
    cases = {}
    for name in args.cases:
        cases[name] = case = time_case(name, reference, args.rounds)
        add_shares(case, peak)
        if args.long:
            for side in ("tinytransformer", "PyTorch"):
                if side in case:
                    case[side]["peak_mib"] = measured_peak_memory(name, side)
        print(f"{name:<12} tinytransformer {case['tinytransformer']['ms']:9.2f} ms"
              + (f"   PyTorch {case['PyTorch']['ms']:9.2f} ms   ratio {case['ratio']:.2f} "
                 f"({case['ratio_quartiles'][0]:.2f}-{case['ratio_quartiles'][1]:.2f})" if "ratio" in case else "")
              + f"   (load {load_average()})", flush=True)
    record = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.processor() or
              platform.machine(), "cpus": os.cpu_count(), "blas": kernel, "numpy": np.__version__,
              "torch": None if reference is None else reference.torch.__version__, "threads": 1,
              "unset": unset, "rounds": args.rounds, "peak_product": "1024 x 1024 x 1024 float32",
              "peak_gflops": round(peak, 1),
              "peak_by_side": {k: None if v is None else round(v, 1) for k, v in peaks.items()},
              "load_before": load_before, "load_after": load_average(), "cases": cases}
    print(table(record))
    if args.long:
        print(long_table(record))
    if not args.no_record:
        write_record(args.record, record)


if __name__ == "__main__":
    main()
