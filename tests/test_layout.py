"""The package's layout: imports flow one way, no private name crosses a module, every public name has one
home, and packaging finds every subpackage by itself."""
import ast
import importlib
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

from tinytransformer.course.edition import LEFT_OUT

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tinytransformer"


def map_block():
    """The README's map of the package ("## What is inside"): the lines of its code block."""
    text = (ROOT / "README.md").read_text().partition("## What is inside")[2]
    return text.partition("```\n")[2].partition("```")[0].splitlines()


def map_order():
    """The package's parts in the order the README's map lists them ("  tensor.py   Tensor and Tape", "  nn/ ..."):
    the order a reader learns them in, which is not the order they import in (LAYERS)."""
    return [re.match(r"  (\w+)(?:\.py|/)", line).group(1) for line in map_block() if re.match(r"  \w+(?:\.py|/)", line)]


def map_entries():
    """{part: the map's text for it, its continuation lines included}."""
    entries, part = {}, None
    for line in map_block():
        start = re.match(r"  (\w+)(?:\.py|/)", line)
        if start:
            part = start.group(1)
            entries[part] = line
        elif part and line.startswith("    "):
            entries[part] += " " + line.strip()
        else:
            part = None
    return entries


# The import rule: each part imports only the parts before it in this list (a subpackage's files may import
# each other). The foundations come first here, though a reader meets them last.
LAYERS = ["ops", "files", "memory", "vocabulary", "tokenizer", "tensor", "functional", "gradcheck", "nn", "optim",
          "decode", "checkpoint", "pretrained", "metrics", "tasks", "train", "course", "tools", "cli", "__main__"]
RANK = {name: rank for rank, name in enumerate(LAYERS)}
RANK[""] = len(RANK)                                         # "": the package's own __init__, above everything


def module_name(path):
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top(module):
    return module.split(".")[0]


def imports(path):
    """(imported module, name or None) for each relative import of the file, module names relative to the package."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[:len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                submodule = f"{target}.{alias.name}".strip(".")
                is_module = (PACKAGE / submodule.replace(".", "/")).with_suffix(".py").is_file() or \
                    (PACKAGE / submodule.replace(".", "/")).is_dir()
                found.append((submodule, None) if is_module else (target, alias.name))
    return found


FILES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_imports_flow_one_way(path):
    module = module_name(path)
    for target, _ in imports(path):
        same_subpackage = path.parent != PACKAGE and top(target) == top(module)
        assert same_subpackage or RANK[top(target)] < RANK[top(module)], (
            f"{module} imports {target or 'tinytransformer'}, which is not below it")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_private_name_crosses_a_module(path):
    private = [f"{target}.{name}" for target, name in imports(path) if name and name.startswith("_")]
    assert not private, f"{module_name(path)} imports private names {private}"


def test_the_shared_vocabulary_and_the_worked_example_import_nothing_of_the_package():
    for name in ("vocabulary.py", "course/worked_example.py", "nn/cache.py"):
        assert imports(PACKAGE / name) == []


# Names the notebooks, the README and the book use, each from its one home.
PUBLIC = ["tasks.sequences:make_batch", "tasks.sequences:token_names", "tasks.sequences:vocab_size_for",
          "tasks.sequences:evaluate_sequences", "tasks.sequences:transformer_loss", "tasks.masked_lm:mask_tokens",
          "tasks.masked_lm:make_sequences", "tasks.masked_lm:token_names", "vocabulary:PAD", "vocabulary:CLS",
          "vocabulary:MASK", "vocabulary:BERT_N_SPECIAL", "course.worked_example:X", "course.worked_example:W_Q",
          "tasks:LMBatch", "tasks:Batch", "tasks:LabelledBatch", "tasks.addition:Split", "tasks.addition:digits_of",
          "tasks.addition:as_batch", "tasks.addition:problem_text", "tasks.text:CharCorpus", "tasks.text:generate_text",
          "nn:classifier_from", "nn:transfer_weights", "nn:inference",
          "tasks:AdditionTask", "tasks:TextTask", "tasks:GPT_STYLE", "tasks:BERT_STYLE", "tasks:exact_match",
          "tasks:language_model_loss", "tasks:make_task", "train:train", "train:train_step",
          "decode:greedy", "decode:sample", "decode:beam_search", "nn:KVCache", "nn:SelfAttentionLayer",
          "nn:DecoderLayer", "nn:GPT", "nn:BERT", "nn:Transformer", "nn:residual", "course.grader:grade",
          "course.mistakes:MISTAKES", "tools.plot:attention_heatmap", "tools.profile:profile_steps",
          ":load_checkpoint", ":causal_mask", ":padding_mask", ":PAD", ":BOS", ":EOS", ":Tape", ":Tensor",
          ":TransformerConfig", ":use_speed_settings", ":load_pretrained", "pretrained:embed", "decode:Specials",
          "tokenizer:WordPiece"]


@pytest.mark.parametrize("where", PUBLIC)
def test_every_public_name_imports_from_its_one_home(where):
    module, name = where.split(":")
    home = f"tinytransformer/{module.replace('.', '/')}.py"
    if home in LEFT_OUT and not (PACKAGE.parent / home).exists():
        pytest.skip(f"a student edition leaves {home} out")
    assert getattr(importlib.import_module("tinytransformer" + (f".{module}" if module else "")), name) is not None


def test_packaging_finds_every_subpackage_by_itself():
    """No hand-written package list: a new subpackage ships in the wheel without anyone adding it."""
    setuptools = pytest.importorskip("setuptools")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in config or "find" in config["packages"]
    found = set(setuptools.find_packages(str(ROOT), **config.get("packages", {}).get("find", {})))
    on_disk = {module_name(init) or "tinytransformer" for init in PACKAGE.rglob("__init__.py")}
    assert {name if name == "tinytransformer" else f"tinytransformer.{name}" for name in on_disk} == found


def test_the_map_lists_every_part_of_the_package():
    on_disk = {path.stem if path.is_file() else path.name for path in PACKAGE.iterdir()
               if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").is_file()}
    assert set(map_order()) == on_disk
    assert set(LAYERS) == on_disk


def own_task_files():
    """The modules of tasks/ that hold a task of the registry and that no other module of tasks/ imports: a task
    added as docs/extending.md says is one such file, named by its registry line rather than by the README's map."""
    from tinytransformer import tasks
    holders = {cls.__module__.rpartition(".")[2] for cls in tasks.TASKS.values()}
    imported = {name for path in (PACKAGE / "tasks").glob("*.py") if path.name != "__init__.py"
                for name in re.findall(r"^from \.(\w+) import", path.read_text(), re.M)}
    return holders - imported


@pytest.mark.parametrize("part", sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()))
def test_the_map_names_every_file_of_a_subpackage(part):
    """Each subpackage's map entry names each of its modules (and its folders, such as course/templates/); a
    task's own file in tasks/ may be named by the registry alone (a new task touches no other file)."""
    entry = map_entries()[part]
    files = sorted(p.stem for p in (PACKAGE / part).glob("*.py") if p.name != "__init__.py")
    if part == "tasks":
        files = [name for name in files if name not in own_task_files()]
    folders = sorted(p.name + "/" for p in (PACKAGE / part).iterdir() if p.is_dir() and p.name != "__pycache__")
    missing = [name for name in files if not re.search(rf"\b{name}\b", entry)] + \
        [name for name in folders if name not in entry]
    assert not missing, f"the README's map of {part}/ does not name {', '.join(missing)}"


def test_the_map_names_every_command():
    """Every command of the command line (a module of cli/ with an add_parser) is in the map's cli/ and
    __main__ entries, and in cli/__init__.py's list."""
    commands = sorted(p.stem for p in (PACKAGE / "cli").glob("*.py") if "def add_parser" in p.read_text())
    entries, listed = map_entries(), (PACKAGE / "cli" / "__init__.py").read_text()
    for command in commands:
        assert re.search(rf"\b{command}\b", entries["cli"]) and re.search(rf"\b{command}\b", entries["__main__"])
        assert f"{command}.py" in listed, f"cli/__init__.py does not list {command}.py"


CORE = [part for part in LAYERS if part not in ("course", "cli", "__main__")]


def test_the_library_never_imports_the_course_kit():
    """The course kit is a concern of its own: importing every part of the library but the command line loads
    no module of tinytransformer.course (a fresh process, so no other test's imports count)."""
    code = ("import sys, importlib; [importlib.import_module('tinytransformer.' + p) for p in %r]; "
            "print([m for m in sys.modules if m.startswith('tinytransformer.course')])" % CORE)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_the_books_reading_order_is_the_maps():
    """The book lists the package in one order of its own (docs/_ext/files.py): the map's, part for part."""
    import sys
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from files import READING_ORDER
    finally:
        sys.path.remove(str(ROOT / "docs" / "_ext"))
    assert READING_ORDER == map_order()
