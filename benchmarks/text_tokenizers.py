"""The text task by characters and by BPE: held-out loss per token and per character, on the story and on Python's reference.

    PYTHONPATH=. python benchmarks/text_tokenizers.py [--seed 0]

Runs what `python -m tinytransformer train --task text [--text T] [--tokenizer bpe] [--bpe-size N]`
runs, with the defaults otherwise (300 steps of 32 sequences of 32 tokens), one configuration after the
other in this process, and records each in benchmarks/results/text_tokenizers.json (the book's
tokenizers page quotes it): the training tokens the tokenizer leaves, characters per token, the held-out
loss of every evaluation (per token and per character), the last step's training loss, the wall seconds,
ms per step and the load average before the run.
"""
import argparse
import datetime
import os
import pathlib
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import load_average, write_record  # noqa: E402
from tinytransformer.tasks import make_task  # noqa: E402
from tinytransformer.train import EVAL_SEED_OFFSET, train  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent / "results" / "text_tokenizers.json"
RUNS = {                                   # the command's options: (text_name, tokenizer, bpe_size)
    "--task text": ("story", "char", None),
    "--task text --tokenizer bpe": ("story", "bpe", None),
    "--task text --text python-docs": ("python-docs", "char", None),
    "--task text --text python-docs --tokenizer bpe": ("python-docs", "bpe", None),
    "--task text --text python-docs --tokenizer bpe --bpe-size 1024": ("python-docs", "bpe", 1024),
}


def run(text_name, tokenizer, bpe_size, seed):
    """One configuration's record."""
    load = load_average()
    start = time.perf_counter()
    task = make_task("text", seed=seed + EVAL_SEED_OFFSET, text_name=text_name, tokenizer=tokenizer,
                     bpe_size=bpe_size)
    result = train(task.config(), task, seed=seed, progress=False)
    per_character = [(step, task.nats_per_character(loss)) for step, loss in result.eval_history]
    return {"load_before": load, "training_tokens": len(task.corpus.train_ids),
            "characters_per_token": task.characters_per_token, "steps": result.steps,
            "held_out_loss": result.held_out_loss,
            "held_out_nats_per_character": task.nats_per_character(result.held_out_loss),
            "held_out_loss_by_step": result.eval_history, "held_out_nats_per_character_by_step": per_character,
            "final_training_loss": result.final_loss, "wall_seconds": time.perf_counter() - start,
            "ms_per_step": result.ms_per_step}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                         f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}",
              "python": platform.python_version(), "seed": args.seed, "runs": {}}
    for command, options in RUNS.items():
        record["runs"][command] = entry = run(*options, args.seed)
        print(f"{command:<66} loss {entry['held_out_loss']:.3f}/token {entry['held_out_nats_per_character']:.3f}"
              f"/char, {entry['characters_per_token']:.2f} chars/token, {entry['wall_seconds']:.1f} s, "
              f"load {entry['load_before']}", flush=True)
    write_record(OUT, record)


if __name__ == "__main__":
    main()
