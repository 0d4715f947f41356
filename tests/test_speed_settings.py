"""speed_settings.py: importing changes nothing about the process; use_speed_settings() does, when asked."""
import os
import subprocess
import sys

import pytest

import tinytransformer as tt
from tinytransformer import __main__ as cli
from tinytransformer.tools import speed_settings

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")

# Counts the functions looked up in C libraries through ctypes (mallopt, openblas_*), then runs the code.
SPY = """
import ctypes
looked_up = []
class Spy(ctypes.CDLL):
    def __getattr__(self, name):
        looked_up.append(name)
        return super().__getattr__(name)
ctypes.CDLL = Spy
"""


def run_clean(code, **env):
    """stdout of code run in a fresh interpreter, without any thread variable unless env sets one."""
    clean = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_importing_sets_no_thread_variable():
    assert run_clean("import os, tinytransformer; print(os.environ.get('OPENBLAS_NUM_THREADS'))") == "None"


def test_importing_calls_no_c_function_and_use_speed_settings_calls_mallopt():
    code = SPY + "import tinytransformer; print(looked_up); tinytransformer.use_speed_settings(); print(looked_up)"
    on_import, after_call = run_clean(code).splitlines()
    assert on_import == "[]"                       # neither mallopt nor OpenBLAS's thread functions
    assert "'mallopt'" in after_call               # the spy sees the call when it is asked for


def test_importing_leaves_the_blas_thread_count_and_use_speed_settings_changes_it():
    code = ("import numpy, tinytransformer as tt\n"
            "before = tt.use_speed_settings(blas_threads=None, keep_freed_memory=False)['blas_threads']\n"
            "print(before, tt.use_speed_settings(1)['blas_threads'], tt.use_speed_settings(2)['blas_threads'])")
    before, one, two = run_clean(code, OPENBLAS_NUM_THREADS="2").split()
    assert (before, one, two) == ("2", "1", "2")   # the import did not change the user's 2


def test_use_speed_settings_reports_what_took_effect():
    result = tt.use_speed_settings(blas_threads=1)
    assert result == {"blas_threads": 1, "keep_freed_memory": sys.platform.startswith("linux")}


def test_without_openblas_it_says_so_and_does_not_crash(monkeypatch):
    monkeypatch.setattr(speed_settings, "_loaded_libraries", lambda: [])
    result = tt.use_speed_settings(blas_threads=1, keep_freed_memory=False)
    assert result["blas_threads"] is None and "not found" in result["blas_note"]
    assert result["keep_freed_memory"] is False


@pytest.mark.parametrize("bad", [0, -1, 1.5, "1"])
def test_a_bad_thread_count_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="use_speed_settings: blas_threads must be an int >= 1"):
        tt.use_speed_settings(blas_threads=bad)


@pytest.mark.parametrize("env, threads", [({}, 1), ({"OPENBLAS_NUM_THREADS": "2"}, None),
                                          ({"OMP_NUM_THREADS": "2"}, None)])
def test_the_command_line_applies_the_settings_unless_the_user_chose_threads(monkeypatch, capsys, env, threads):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    calls = []
    monkeypatch.setattr(cli, "use_speed_settings", lambda **options: calls.append(options))
    monkeypatch.setattr(cli.check, "run", lambda args: 0)          # the command itself is not under test
    cli.main(["check"])
    assert calls == [{"blas_threads": threads}]


def test_the_command_line_help_says_so(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "use_speed_settings()" in help_text and "Importing the library sets neither" in help_text
