"""The package's layout: imports flow one way, no private name crosses a module, old import paths
still work, and packaging finds every subpackage by itself."""
import ast
import importlib
import pathlib
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tinytransformer"

# Each module may import only from lower ranks, or from its own subpackage (ops, nn, tasks, tokenizer). The compat
# modules (data, addition, text, mlm) re-export the tasks' names, so they sit above tasks/.
RANKS = [
    ("ops", "speed_settings", "vocabulary", "worked_example", "stubs", "tokenizer"),
    ("tensor",),
    ("functional",),
    ("gradcheck", "gradcheck_every_op", "nn", "optim", "plot", "mistakes"),
    ("decode", "checkpoint", "diagnose"),
    ("tasks", "grader"),
    ("train", "profile", "data", "addition", "text", "mlm", "edition"),
    ("__main__", ""),                                        # "": the package's own __init__
]
RANK = {name: rank for rank, names in enumerate(RANKS) for name in names}


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
    for name in ("vocabulary.py", "worked_example.py", "nn/cache.py"):
        assert imports(PACKAGE / name) == []


# Names users import today (DESIGN.md's API, the README, the notebooks), from where they import them.
PUBLIC = ["data:make_batch", "data:mask_tokens", "data:PAD", "data:CLS", "data:MASK", "data:MLM_N_SPECIAL",
          "data:WORKED_X", "data:WORKED_W_Q", "data:token_names", "data:vocab_size", "data:LMBatch",
          "addition:Split", "addition:digits_of", "addition:as_batch", "addition:problem_text",
          "text:CharCorpus", "text:generate", "mlm:make_sequences", "mlm:classifier_from",
          "mlm:transfer_weights", "mlm:vocab_size", "mlm:LabelledBatch",
          "tasks:AdditionTask", "tasks:TextTask", "tasks:GPT_STYLE", "tasks:BERT_STYLE",
          "tasks:language_model_loss", "tasks:mlm_token_names", "tasks:make_task",
          "train:train", "train:train_step", "train:exact_match", "train:evaluate", "train:EVAL_EVERY",
          "decode:greedy", "decode:sample", "decode:beam_search", "nn:KVCache", "nn:EncoderLayer",
          "nn:DecoderLayer", "nn:GPT", "nn:BERT", "nn:Transformer", "nn:residual", ":load_checkpoint",
          ":causal_mask", ":padding_mask", ":PAD", ":BOS", ":EOS", ":Tape", ":Tensor", ":TransformerConfig"]


@pytest.mark.parametrize("where", PUBLIC)
def test_names_users_import_still_import_from_where_they_did(where):
    module, name = where.split(":")
    assert getattr(importlib.import_module("tinytransformer" + (f".{module}" if module else "")), name) is not None


def test_the_old_paths_give_the_very_objects_of_the_new_homes():
    from tinytransformer import addition, data, mlm, nn, tasks, text, worked_example
    from tinytransformer.tasks import masked_lm, sequences
    assert data.make_batch is sequences.make_batch and data.mask_tokens is masked_lm.mask_tokens
    assert data.WORKED_X is worked_example.X and addition.Split is tasks.addition.Split
    assert text.CharCorpus is tasks.text.CharCorpus and mlm.classifier_from is nn.classifier_from


def test_packaging_finds_every_subpackage_by_itself():
    """No hand-written package list: a new subpackage ships in the wheel without anyone adding it."""
    setuptools = pytest.importorskip("setuptools")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in config or "find" in config["packages"]
    found = set(setuptools.find_packages(str(ROOT), **config.get("packages", {}).get("find", {})))
    on_disk = {module_name(init) or "tinytransformer" for init in PACKAGE.rglob("__init__.py")}
    assert {name if name == "tinytransformer" else f"tinytransformer.{name}" for name in on_disk} == found
