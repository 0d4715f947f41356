"""The text task with GPT-2's block and the modern (LLaMA-style) block, over seeds: the held-out loss of each.

Both blocks train the text task's defaults (the story by characters, 32 tokens of context, batch 32,
300 steps of Adam with the paper's warmup schedule, warmup 100, scale 1) from the same seeds, with
the same batches for a seed; only `--block` differs: gpt2 (pre-LN LayerNorm, GELU, learned positions,
biases, d_ff 128) or modern (pre-norm RMSNorm, SwiGLU, rotary positions, no biases, d_ff 85, which
gives SwiGLU's three matrices the weights of GPT-2's two). The held-out loss is measured every 50
steps; every number, the parameter counts and the load average go to
benchmarks/results/modern_block.json (--text python-docs: modern_block_python_docs.json, Python's
language reference, which 300 steps cannot overfit). About 1 minute quiet on 2 cores. Run from the
repository root:

    PYTHONPATH=. python benchmarks/modern_block.py [--seeds 0 1 2 --steps 300 --text story]
"""
import argparse
import datetime
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, use_threads, write_record  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
OUT = {"story": RESULTS / "modern_block.json", "python-docs": RESULTS / "modern_block_python_docs.json"}
BLOCKS = ("gpt2", "modern")


def run(block, seed, steps, text_name):
    """One training run: {"parameters", "eval_history", "final_held_out_loss", "ms_per_step", ...}."""
    from tinytransformer.tasks import make_task
    from tinytransformer.train import EVAL_SEED_OFFSET, train
    task = make_task("text", seed=seed + EVAL_SEED_OFFSET, block=block, text_name=text_name)
    result = train(None, task, seed=seed, steps=steps, eval_every=50, progress=False)
    return {"block": block, "seed": seed, "parameters": sum(p.data.size for p in result.model.parameters()),
            "eval_history": [[int(step), float(loss)] for step, loss in result.eval_history],
            "final_held_out_loss": float(result.held_out_loss), "final_training_loss": float(result.final_loss),
            "ms_per_step": float(result.ms_per_step)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--text", choices=["story", "python-docs"], default="story")
    args = parser.parse_args()
    use_threads(1)
    before, runs = load_average(), []
    for seed in args.seeds:
        for block in BLOCKS:
            found = run(block, seed, args.steps, args.text)
            runs.append(found)
            curve = "  ".join(f"{step}: {loss:.3f}" for step, loss in found["eval_history"])
            print(f"seed {seed} {block:<7} {found['parameters']:,} parameters, {found['ms_per_step']:.1f} ms/step; "
                  f"held-out loss {curve}", flush=True)
    for block in BLOCKS:
        finals = [r["final_held_out_loss"] for r in runs if r["block"] == block]
        best = [min(loss for _, loss in r["eval_history"]) for r in runs if r["block"] == block]
        print(f"{block:<7} final held-out loss {', '.join(f'{x:.3f}' for x in finals)} "
              f"(mean {sum(finals) / len(finals):.3f}); lowest on the way {', '.join(f'{x:.3f}' for x in best)}")
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "load_before": before, "load_after": load_average(), "seeds": args.seeds, "steps": args.steps,
              "text": args.text, "runs": runs}
    write_record(OUT[args.text], record)


if __name__ == "__main__":
    main()
