"""The results pages and the README's task table quote measured numbers: each must be in a record.

A number written on docs/results/training.md, tokenizers.md or transfer.md, in the sections of
docs/results/speed.md whose scripts write records (SPEED_SECTIONS; its later sections copy a script's printed
output, dated), or in the README's table of tasks, must be a value of one of
the JSON records under benchmarks/results/ that the page names (benchmarks/results/NAME.json), as written
or rounded to the digits the page shows (a share may be written as a percentage), or be an integer from 0
to 10, a date or a time of day, a reference ("notebook 12"), or be listed in docs_numbers.py with its
source. The notebooks' prose is held to the same rule by test_notebooks.py, whose reading of numbers this
uses. A test plants a wrong number and checks that it is caught.
"""
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

import docs_numbers  # noqa: E402  (tests/docs_numbers.py: the pages' numbers that come from elsewhere)
from test_notebooks import number_value, prose_numbers

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "benchmarks" / "results"
PAGES = ["docs/results/training.md", "docs/results/tokenizers.md", "docs/results/transfer.md", "docs/results/speed.md",
         "README.md"]
SPEED_SECTIONS = ("## A training step at every shape", "## What each speed idiom buys")
NAMED_RECORD = re.compile(r"benchmarks/results/([\w.-]+\.json)")
DATE_OR_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b")
LONG_SERIES = 100          # a list this long (a run's losses) is a curve, not a number the prose quotes


def record_values(value):
    """Every number in a record (a JSON value), series of LONG_SERIES numbers or more left out."""
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, (int, float)):
        return {Decimal(repr(value))}
    if isinstance(value, str):
        return {number_value(m) for m in re.findall(r"\d+(?:\.\d+)?", value)}
    items = list(value.values()) if isinstance(value, dict) else list(value)
    if len(items) >= LONG_SERIES and all(isinstance(item, (int, float)) for item in items):
        return set()
    keys = [Decimal(m) for key in (value if isinstance(value, dict) else {}) for m in re.findall(r"\d+(?:\.\d+)?", key)]
    return set(keys).union(*(record_values(item) for item in items))


def quoted_text(page):
    """The part of a page the rule reads: training.md whole, speed.md its SPEED_SECTIONS, the README its table
    of tasks."""
    text = (ROOT / page).read_text()
    if page == "README.md":
        start = text.index("| task | model |")
        text = text[text.rfind("\n\n", 0, start - 2):text.index("\n\n", start)]    # the paragraph before, the table
    if page == "docs/results/speed.md":
        text = "\n".join(section(text, heading) for heading in SPEED_SECTIONS)
    return text


def section(text, heading):
    """The text of a page from heading to the next heading of its level (or the end)."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def matches(written, values):
    """True if the number as written is a value, as written or rounded to its shown digits, or its percentage."""
    value = number_value(written)
    digits = -value.as_tuple().exponent if value.as_tuple().exponent < 0 else 0
    half = Decimal(5) / Decimal(10) ** (digits + 1)
    return any(abs(v - value) <= half or abs(100 * v - value) <= half for v in values)


def unaccounted(text, values, sourced):
    """[(number, context)] of text's numbers that no record holds and sourced does not list."""
    text = DATE_OR_TIME.sub(lambda m: " " * len(m.group(0)), text)
    listed = {number_value(n) for n in sourced}
    missing = []
    for written, context in prose_numbers(text):
        value = number_value(written)
        if value in listed or (value == value.to_integral_value() and 0 <= value <= 10):
            continue
        if not matches(written, values):
            missing.append((written, context))
    return missing


def named_records(text):
    names = sorted(set(NAMED_RECORD.findall(text)))
    missing = [name for name in names if not (RECORDS / name).exists()]
    assert not missing, f"the page names records that do not exist: {missing}"
    return set().union(*(record_values(json.loads((RECORDS / name).read_text())) for name in names))


@pytest.mark.parametrize("page", PAGES)
def test_every_number_on_the_page_is_in_a_record_it_names(page):
    text = quoted_text(page)
    missing = unaccounted(text, named_records(text), docs_numbers.SOURCED.get(page, {}))
    assert not missing, (f"{page}: numbers that no record it names holds (measure them with a script that writes "
                         "a record under benchmarks/results/, or list them in tests/docs_numbers.py with their "
                         "source):\n" + "\n".join(f"  {n} in ...{c}..." for n, c in missing))


@pytest.mark.parametrize("page", PAGES)
def test_sourced_numbers_are_on_the_page(page):
    quoted = {number_value(n) for n, _ in prose_numbers(quoted_text(page))}
    stale = [n for n in docs_numbers.SOURCED.get(page, {}) if number_value(n) not in quoted]
    assert not stale, f"{page}: tests/docs_numbers.py lists {stale}, which the page does not write"


def numbers_caught(page, right, wrong):
    """The numbers the rule catches on page once the number written as right (which must be on it, and be
    accounted for) is replaced by wrong."""
    text = quoted_text(page)
    values, sourced = named_records(text), docs_numbers.SOURCED.get(page, {})
    assert not unaccounted(text, values, sourced)
    assert right in text
    return [n for n, _ in unaccounted(text.replace(right, wrong, 1), values, sourced)]


def test_a_planted_wrong_number_is_caught():
    record = json.loads((RECORDS / "train_tasks.json").read_text())
    right = f"{100 * record['copy']['runs'][0]['test_exact_match']:.1f}%"
    assert numbers_caught("docs/results/training.md", right, "93.7%") == ["93.7"]


@pytest.mark.parametrize("page", sorted(docs_numbers.SEED_MEANS))
def test_listed_means_are_the_means_of_their_records(page):
    text = quoted_text(page)
    records = {name: json.loads((RECORDS / name).read_text()) for name in set(NAMED_RECORD.findall(text))}
    for written, values_of in docs_numbers.SEED_MEANS[page].items():
        assert written in docs_numbers.SOURCED[page], f"{written}: SEED_MEANS lists a number SOURCED does not"
        values = values_of(records)
        assert len(values) >= 2, f"{page}: {written} should be a mean over seeds, found {values}"
        mean = sum(values) / len(values)
        assert matches(written, {Decimal(repr(mean))}), f"{page}: {written} is written, the records' mean is {mean}"


def test_a_wrong_listed_mean_is_caught():
    text = quoted_text("docs/results/transfer.md")
    records = {name: json.loads((RECORDS / name).read_text()) for name in set(NAMED_RECORD.findall(text))}
    values = docs_numbers.SEED_MEANS["docs/results/transfer.md"]["0.848"](records)
    mean = Decimal(repr(sum(values) / len(values)))
    assert matches("0.848", {mean}) and not matches("0.838", {mean})


def test_a_planted_wrong_number_on_the_speed_page_is_caught():
    record = json.loads((RECORDS / "scaling.json").read_text())
    right = f"**{record['cases']['T=128']['ratio']:.2f}**"
    assert numbers_caught("docs/results/speed.md", right, "**3.07**") == ["3.07"]
