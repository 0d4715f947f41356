"""benchmarks/results/: the modern block against GPT-2's on the text task, and the book's training results page
(docs/results/training.md) quoting exactly their numbers."""
import json
import pathlib
import statistics

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def runs(name, block):
    record = json.loads((RESULTS / name).read_text())
    assert record["seeds"] == [0, 1, 2] and record["steps"] == 300
    return [r for r in record["runs"] if r["block"] == block]


def page():
    """The training results page, its line wrapping undone."""
    return " ".join((ROOT / "docs" / "results" / "training.md").read_text().split())


def row(runs_of_block):
    finals = [r["final_held_out_loss"] for r in runs_of_block]
    return f"{', '.join(f'{x:.3f}' for x in finals)} | {statistics.mean(finals):.3f}"


def test_the_page_quotes_every_final_loss_and_mean_of_both_texts():
    text = page()
    for name, label in (("modern_block.json", "the story"), ("modern_block_python_docs.json", "Python's reference")):
        for block in ("gpt2", "modern"):
            assert f"| {label} | {block} | {row(runs(name, block))} |" in text, (name, block)


def test_the_lowest_losses_on_the_way_and_the_verdict_are_the_records():
    gpt2, modern = runs("modern_block.json", "gpt2"), runs("modern_block.json", "modern")
    lowest = [min(r["eval_history"], key=lambda step_loss: step_loss[1]) for r in modern]
    assert f"{', '.join(f'{loss:.3f}' for _, loss in lowest)} (steps {', '.join(str(s) for s, _ in lowest[:-1])}, " \
           f"{lowest[-1][0]})" in page()
    assert all(r["eval_history"][-1][1] == min(loss for _, loss in r["eval_history"]) for r in gpt2)
    # "stopped at its best step it would beat GPT-2 on two seeds of three"
    assert sum(low < g["final_held_out_loss"] for (_, low), g in zip(lowest, gpt2)) == 2
    # "faster on every seed of both texts" after 50 steps; the story's end: modern worse; the reference's: better
    for name in ("modern_block.json", "modern_block_python_docs.json"):
        assert all(m["eval_history"][0][1] < g["eval_history"][0][1]
                   for m, g in zip(runs(name, "modern"), runs(name, "gpt2")))
    finals = {name: {block: statistics.mean(r["final_held_out_loss"] for r in runs(name, block))
                     for block in ("gpt2", "modern")} for name in ("modern_block.json", "modern_block_python_docs.json")}
    assert f"{finals['modern_block_python_docs.json']['gpt2'] - finals['modern_block_python_docs.json']['modern']:.2f}" \
           " nats per character lower" in page()
    assert f"it is {finals['modern_block.json']['modern'] - finals['modern_block.json']['gpt2']:.2f} worse" in page()


def test_the_parameter_counts_quoted_are_the_models():
    text = page()
    for name in ("modern_block.json", "modern_block_python_docs.json"):
        counts = [runs(name, block)[0]["parameters"] for block in ("modern", "gpt2")]
        assert f"{counts[0]:,}" in text and f"{counts[1]:,}" in text
