"""Run by CI in a fresh environment where only the built wheel is installed (not a test module).

Imports every module of the installed package and reads the shipped text: a subpackage or a data
file missing from the wheel fails here, though an editable install would never notice.

    python tests/wheel_check.py      # from outside the source tree
"""
import importlib
import pathlib
import pkgutil
import sys

import tinytransformer

installed = pathlib.Path(tinytransformer.__file__).resolve().parent
if (installed.parent / "pyproject.toml").exists():
    sys.exit(f"wheel_check: tinytransformer was imported from the source tree ({installed}), not from the wheel")
modules = [info.name for info in pkgutil.walk_packages(tinytransformer.__path__, "tinytransformer.")]
for name in modules:
    importlib.import_module(name)
on_disk = {".".join(path.relative_to(installed.parent).with_suffix("").parts).removesuffix(".__init__")
           for path in installed.rglob("*.py")}
missing = sorted(on_disk - set(modules) - {"tinytransformer", "tinytransformer.__main__"})
if missing:
    sys.exit(f"wheel_check: modules not importable: {missing}")
text = tinytransformer.tasks.text.load_text()
from tinytransformer.course import autograder, edition  # noqa: E402  (the course kit's shipped templates)
templates = [edition.STUDENT_README] + [autograder.TEMPLATES / name for name in autograder.SCRIPTS]
absent = [path.name for path in templates if not path.is_file()]
if absent:
    sys.exit(f"wheel_check: templates missing from the wheel: {absent}")
print(f"wheel_check: {len(modules)} modules imported from {installed}; the shipped text has {len(text)} characters")
