"""benchmarks/: every script compiles and answers --help, so a script broken by a change to the library or by an
edit of its imports is caught here, not when someone next needs its numbers."""
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
MODULES = {"common.py", "torch_reference.py"}          # imported by the scripts, not run
POSITIONAL = {"notebook_times.py"}                     # takes notebook prefixes, not flags


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_every_benchmark_compiles(script, tmp_path):
    py_compile.compile(str(script), cfile=str(tmp_path / "compiled.pyc"), doraise=True)


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.name not in MODULES | POSITIONAL],
                         ids=[s.name for s in SCRIPTS if s.name not in MODULES | POSITIONAL])
def test_every_benchmark_answers_help(script):
    done = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and "usage:" in done.stdout, done.stderr


def test_the_compile_check_catches_an_import_pulled_out_of_its_function(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def main():\n    import os\nfrom sys import argv\n\n    return os, argv\n")
    with pytest.raises(py_compile.PyCompileError):
        py_compile.compile(str(broken), cfile=str(tmp_path / "broken.pyc"), doraise=True)
