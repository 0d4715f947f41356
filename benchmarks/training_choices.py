"""What each training choice buys on the reverse task: Adam against SGD, warmup, label smoothing, dropout.

The classroom model and task (`python -m tinytransformer train --task reverse`:
length 10, 10 symbols, d_model 64, 4 heads, 2 + 2 layers, d_ff 128, batch 64)
trained from the classroom recipe, the baseline: Adam with the paper's betas
(0.9, 0.98) and eps 1e-9, the paper's warmup schedule at scale 1 with 100
warmup steps, no label smoothing, no dropout. Each other choice changes one
thing:

    adam_lr       Adam with the schedule's shape scaled to a peak chosen from a grid on the
                  first seed (every grid run recorded): the tuning the SGD runs get
    sgd           plain SGD (no momentum), the same schedule's shape scaled to a peak
                  chosen from a grid on the first seed
    sgd_momentum  SGD with momentum 0.9, the same way
    no_warmup     Adam at the schedule's peak from step 1 (lr = schedule(max(step, warmup))):
                  the same run without the linear rise
    smoothing     label smoothing 0.1 in the training loss
    dropout       dropout 0.1 on every sublayer and on the embeddings

Every run draws its model and batches as `train()` does for that seed (the
baseline is the command line's run, step for step), evaluates every 100 steps
on the same 1000 held-out rows (greedy exact match, and the held-out
cross-entropy without smoothing, in eval mode), and stops at 99% exact match
or at --max-steps. Writes every run and the load average beside it to a JSON
file (checked writable before the first step; the runs of choices not run
this time are kept from it) and prints a table. Run from the repository root,
on as quiet a machine as you have:

    PYTHONPATH=. nice -n 10 python benchmarks/training_choices.py            # 5 seeds, about 15 min quiet
    PYTHONPATH=. python benchmarks/training_choices.py --seeds 0 --choices baseline no_warmup
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import use_threads  # noqa: E402

DEFAULT_OUT = pathlib.Path(__file__).resolve().parent / "results" / "training_choices.json"
CHOICES = ("baseline", "adam_lr", "sgd", "sgd_momentum", "no_warmup", "smoothing", "dropout")
PEAK_GRIDS = {"adam_lr": (0.00625, 0.0125, 0.025, 0.05), "sgd": (0.1, 0.3, 1.0),   # peak learning rates
              "sgd_momentum": (0.03, 0.1, 0.3)}
SEQ_LEN, N_SYMBOLS, BATCH_SIZE, WARMUP, EVAL_EVERY, EVAL_SIZE, TARGET = 10, 10, 64, 100, 100, 1000, 0.99


def settings(choice, peak_lr=None):
    """The baseline's settings with the one change that choice makes."""
    base = dict(optimizer="adam", momentum=0.0, peak_lr=None, warmup_ramp=True, label_smoothing=0.0, dropout=0.0)
    change = {"baseline": {}, "no_warmup": dict(warmup_ramp=False), "smoothing": dict(label_smoothing=0.1),
              "dropout": dict(dropout=0.1), "adam_lr": dict(peak_lr=peak_lr),
              "sgd": dict(optimizer="sgd", peak_lr=peak_lr),
              "sgd_momentum": dict(optimizer="sgd", momentum=0.9, peak_lr=peak_lr)}[choice]
    return {**base, **change}


def run(seed, s, max_steps):
    """One training run with settings s; returns its record (no model)."""
    import numpy as np
    import tinytransformer as tt
    from tinytransformer import optim
    from tinytransformer.tasks import sequences
    from tinytransformer import functional as F
    from tinytransformer.train import EVAL_SEED_OFFSET, train_step   # held-out seed: seed + this

    config = tt.TransformerConfig(sequences.vocab_size_for(N_SYMBOLS), d_model=64, n_heads=4, n_layers=2, d_ff=128,
                                  max_len=SEQ_LEN + 1, dropout=s["dropout"])
    model_seed, data_seed = np.random.SeedSequence(seed).spawn(2)          # as train.train
    model = tt.nn.Transformer(config, rng=np.random.default_rng(model_seed))
    batches = np.random.default_rng(data_seed)
    held_out = sequences.make_batch("reverse", EVAL_SIZE, SEQ_LEN, N_SYMBOLS, seed + EVAL_SEED_OFFSET)
    schedule = optim.WarmupSchedule(config.d_model, WARMUP)
    peak = schedule(WARMUP)
    if s["optimizer"] == "adam":
        optimizer = optim.Adam(model.parameters(), lr=0.0)
    else:
        optimizer = optim.SGD(model.parameters(), lr=0.0, momentum=s["momentum"])
    factor = 1.0 if s["peak_lr"] is None else s["peak_lr"] / peak            # the same shape, another peak

    def held_out_loss():
        model.eval()
        logits = model(held_out.src, held_out.tgt_in)                       # outside a Tape: nothing recorded
        model.train()
        return float(F.cross_entropy(logits, held_out.tgt_out, ignore_index=tt.PAD).data)

    history, reached, losses, start = [], None, [], time.perf_counter()
    for step in range(1, max_steps + 1):
        optimizer.lr = factor * schedule(step if s["warmup_ramp"] else max(step, WARMUP))
        batch = sequences.make_batch("reverse", BATCH_SIZE, SEQ_LEN, N_SYMBOLS, batches)
        losses.append(train_step(model, optimizer, batch, sequences.transformer_loss, label_smoothing=s["label_smoothing"]))
        diverged = not np.isfinite(losses[-1])
        if step % EVAL_EVERY == 0 or step == max_steps or diverged:
            history.append((step, float(sequences.evaluate_sequences(model, held_out)), held_out_loss()))
            if diverged or history[-1][1] >= TARGET:
                reached = None if diverged else step
                break
    return dict(seed=seed, settings=s, steps=step, reached_target_at_step=reached,
                exact_match=history[-1][1], held_out_loss=history[-1][2], final_train_loss=losses[-1],
                eval_history=history, seconds=time.perf_counter() - start)


def summarise(runs):
    """Per choice: seeds that reached the target, median steps to it, median final exact match."""
    summary = {}
    for choice in CHOICES:
        chosen = [r for r in runs if r["choice"] == choice and not r["grid_only"]]
        if not chosen:
            continue
        reached = [r["reached_target_at_step"] for r in chosen if r["reached_target_at_step"] is not None]
        summary[choice] = dict(seeds=len(chosen), reached=len(reached),
                               median_steps_if_reached=statistics.median(reached) if reached else None,
                               steps=[r["steps"] for r in chosen],
                               median_exact_match=statistics.median(r["exact_match"] for r in chosen),
                               median_held_out_loss=statistics.median(r["held_out_loss"] for r in chosen),
                               settings=chosen[0]["settings"])
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--choices", nargs="+", choices=CHOICES, default=list(CHOICES))
    parser.add_argument("--max-steps", type=int, default=2000, help="the step budget of a run (default 2000)")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT, help=f"the JSON file (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    if args.max_steps < EVAL_EVERY:
        parser.error(f"--max-steps must be at least {EVAL_EVERY}, got {args.max_steps}")
    try:                                                          # writable now, not after 15 minutes
        args.out.parent.mkdir(parents=True, exist_ok=True)
        earlier = json.loads(args.out.read_text() or "{}") if args.out.exists() else {}
        with open(args.out, "a"):
            pass
    except (OSError, ValueError) as error:
        parser.error(f"--out {args.out}: cannot read and write it as JSON ({error})")
    use_threads(1)
    import numpy as np

    record = dict(script="benchmarks/training_choices.py", started=datetime.datetime.now().isoformat(timespec="seconds"),
                  machine=dict(cpus=os.cpu_count(), processor=platform.processor() or platform.machine(),
                               python=platform.python_version(), numpy=np.__version__, blas_threads=1),
                  task=dict(name="reverse", seq_len=SEQ_LEN, n_symbols=N_SYMBOLS, batch_size=BATCH_SIZE,
                            warmup=WARMUP, eval_every=EVAL_EVERY, eval_size=EVAL_SIZE, target=TARGET,
                            max_steps=args.max_steps),
                  seeds=args.seeds, runs=[])
    if earlier.get("task") == record["task"] and earlier.get("seeds") == args.seeds:   # keep the other choices' runs
        record["runs"] = [r for r in earlier["runs"] if r["choice"] not in args.choices]
        record["earlier_runs_from"] = earlier["started"]
    print(f"{'choice':<14}{'seed':>5}{'peak lr':>9}{'steps':>7}{'reached':>9}{'exact':>8}{'held-out loss':>15}"
          f"{'seconds':>9}{'load':>6}", flush=True)

    def record_run(choice, seed, s, grid_only=False):
        load = os.getloadavg()[0]
        result = run(seed, s, args.max_steps)
        result.update(choice=choice, grid_only=grid_only, load_before=load, load_after=os.getloadavg()[0])
        record["runs"].append(result)
        peak = "" if s["peak_lr"] is None else f"{s['peak_lr']:g}"
        print(f"{choice:<14}{seed:>5}{peak:>9}{result['steps']:>7}{str(result['reached_target_at_step']):>9}"
              f"{result['exact_match']:>8.3f}{result['held_out_loss']:>15.4f}{result['seconds']:>9.1f}{load:>6.2f}",
              flush=True)
        args.out.write_text(json.dumps(record, indent=1) + "\n")   # after every run: a stopped sweep keeps its runs
        return result

    for choice in args.choices:
        if choice in PEAK_GRIDS:       # the peak learning rate: the best of a grid on the first seed
            grid = [record_run(choice, args.seeds[0], settings(choice, peak), grid_only=True)
                    for peak in PEAK_GRIDS[choice]]
            best = min(grid, key=lambda r: (r["reached_target_at_step"] or float("inf"), -r["exact_match"],
                                            r["held_out_loss"]))
            best["grid_only"] = False
            for seed in args.seeds[1:]:
                record_run(choice, seed, best["settings"])
        else:
            for seed in args.seeds:
                record_run(choice, seed, settings(choice))
    record["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    record["summary"] = summarise(record["runs"])
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print("\nper choice: seeds reaching 99% / seeds, median steps of those, median final exact match")
    for choice, s in record["summary"].items():
        print(f"{choice:<14}{s['reached']}/{s['seeds']}  {s['median_steps_if_reached']}  {s['median_exact_match']:.3f}")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
