"""benchmarks/results/: the translate task's acceptance runs and label-smoothing runs, and the book's training
results page (docs/results/training.md) quoting exactly their numbers."""
import json
import pathlib
import statistics

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def runs(name):
    return json.loads((RESULTS / name).read_text())["runs"]


def readme():
    """The training results page, its line wrapping undone."""
    return " ".join((ROOT / "docs" / "results" / "training.md").read_text().split())


def test_the_acceptance_runs_reach_bleu_90_within_10_minutes_and_the_readme_quotes_them():
    accepted = runs("translation.json")
    assert [r["seed"] for r in accepted] == [0, 1, 2] and {r["label_smoothing"] for r in accepted} == {0.0}
    assert all(r["bleu"] >= 90 and r["wall_seconds"] <= 600 for r in accepted)
    text = readme()
    assert f"took {listed(r['steps'] for r in accepted)} steps" in text
    assert f"{listed(round(r['wall_seconds']) for r in accepted)} s" in text
    assert "held-out BLEU " + listed(format(r["bleu"], ".1f") for r in accepted) in text
    assert "beam of 4 " + listed(format(r["beam4_bleu"], ".1f") for r in accepted) in text


def listed(values):
    """[800, 1000, 700] -> "800, 1000 and 700", as the README writes a list."""
    values = [str(v) for v in values]
    return ", ".join(values[:-1]) + " and " + values[-1]


def test_the_compositional_ranges_in_the_readme_are_the_runs():
    accepted = runs("translation.json")
    text = readme()
    for kind, words in (("unseen adjective-noun pair", "never trained on score BLEU"),
                        ("unseen number", "unseen numbers"), ("negation after dass/weil", "main clauses,"),
                        ("unseen perfect in a main clause", "clause)"),
                        ("unseen where question in the past", "present only)")):
        values = [r["compositional_bleu"][kind] for r in accepted]
        assert f"{words} {min(values):.0f}-{max(values):.0f}" in text


def test_label_smoothing_changed_the_steps_and_bleu_as_the_readme_says():
    smoothing = runs("translation_label_smoothing.json")
    by_value = {value: [r for r in smoothing if r["label_smoothing"] == value] for value in (0.0, 0.1)}
    assert all(sorted(r["seed"] for r in group) == [0, 1, 2] for group in by_value.values())
    steps = {value: statistics.mean(r["steps"] for r in group) for value, group in by_value.items()}
    bleu = {value: statistics.mean(r["bleu"] for r in group) for value, group in by_value.items()}
    assert abs(steps[0.1] - steps[0.0]) < 100 and abs(bleu[0.1] - bleu[0.0]) < 1      # on the earlier grammar


def test_the_ding_run_is_quoted_as_recorded():
    (run,) = runs("translation_ding.json")
    text = readme()
    assert run["pairs"] == "ding" and run["steps"] == 3000
    assert f"BLEU {run['bleu']:.1f} and chrF {run['chrf']:.1f} there ({run['steps']} steps, " \
           f"{run['wall_seconds']:.0f} s" in text
