"""docs/extending.md's promise, kept: a new task is one file of tasks/ and its line in the registry.

The two example tasks of the page (docs/examples/: sort for the encoder-decoder, palindrome for BERT through
[CLS]) are added to a copy of the package exactly as the page says, with no other file touched, and trained
through train() and through the command line.
"""
import filecmp
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"
NEW_TASKS = {"sort": "SortTask", "palindrome": "PalindromeTask"}      # file stem -> class


def add_tasks(package):
    """Copy each example into package/tasks/ and give it its registry line, as docs/extending.md says."""
    registry = package / "tasks" / "__init__.py"
    text = registry.read_text()
    for stem, cls in NEW_TASKS.items():
        shutil.copy(EXAMPLES / f"{stem}.py", package / "tasks" / f"{stem}.py")
        imports, _, registry_and_rest = text.partition("\n# The tasks by name")
        text = f"{imports}\nfrom .{stem} import {cls}\n# The tasks by name" + \
            registry_and_rest.replace("\n)}\n", f"\n    {cls},\n)}}\n", 1)
    registry.write_text(text)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the package with the two example tasks added."""
    root = tmp_path_factory.mktemp("extended")
    shutil.copytree(ROOT / "tinytransformer", root / "tinytransformer", ignore=shutil.ignore_patterns("__pycache__"))
    add_tasks(root / "tinytransformer")
    return root


def changed_files(a, b):
    """The files that differ between two trees, or exist in one only, relative to a."""
    compared = filecmp.dircmp(a, b, ignore=["__pycache__"])
    found = [name for name in compared.left_only + compared.right_only + compared.diff_files]
    for name, sub in compared.subdirs.items():
        found += [f"{name}/{inner}" for inner in changed_files(a / name, b / name)]
    return sorted(found)


def run(project, *args, timeout=600):
    environment = {**os.environ, "PYTHONPATH": str(project), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=project, env=environment,
                          timeout=timeout)


def test_a_new_task_touches_its_file_and_the_registry_only(project):
    assert changed_files(ROOT / "tinytransformer", project / "tinytransformer") == \
        ["tasks/__init__.py", "tasks/palindrome.py", "tasks/sort.py"]


def test_the_examples_are_what_the_page_shows():
    page = (ROOT / "docs" / "extending.md").read_text()
    for stem in NEW_TASKS:
        assert f"examples/{stem}.py" in page                             # shown whole by literalinclude


@pytest.mark.slow
@pytest.mark.parametrize("name", NEW_TASKS)
def test_a_new_task_trains_through_train_and_the_command_line(project, tmp_path, name):
    code = (f"import tinytransformer as tt; r = tt.train.train(None, {name!r}, steps=6, eval_every=3, "
            "progress=False); print(r.task, r.steps, type(r.model).__name__)")
    done = run(project, "-c", code)
    assert done.returncode == 0, done.stderr
    model = {"sort": "Transformer", "palindrome": "BERT"}[name]
    assert done.stdout.split() == [name, "6", model]

    summary = tmp_path / "run.json"
    done = run(project, "-m", "tinytransformer", "train", "--task", name, "--steps", "6", "--eval-every", "3",
               "--json", str(summary))
    assert done.returncode == 1, done.stderr                  # 6 steps: the target is not reached
    result = json.loads(summary.read_text())
    assert result["task"] == name and result["steps"] == 6 and 0 <= result["exact_match"] <= 1
    measure = {"sort": "exact match", "palindrome": "accuracy"}[name]
    assert f"validation {measure}" in done.stdout and f"test {measure}" in done.stdout
    help_text = run(project, "-m", "tinytransformer", "train", "--help").stdout
    assert name in help_text and (name != "palindrome" or "--length" in help_text)


@pytest.mark.slow
@pytest.mark.parametrize("name", NEW_TASKS)
def test_a_new_task_reaches_its_target_with_its_defaults(project, name):
    """What the page says each example does with its defaults: 99% on the validation split, then the test."""
    done = run(project, "-m", "tinytransformer", "train", "--task", name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(stopped there: it reached 99%)" in done.stdout and "touched once" in done.stdout
