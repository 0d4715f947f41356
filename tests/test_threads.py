"""threads.py: one BLAS thread unless the user chose, and only when it can still take effect."""
import os
import subprocess
import sys

import pytest


def thread_setting_after(code, **env):
    """OPENBLAS_NUM_THREADS as seen after running code in a fresh interpreter with env."""
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    script = code + "; import os; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    out = subprocess.run([sys.executable, "-c", script], env={**clean, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_importing_tinytransformer_first_asks_for_one_thread():
    assert thread_setting_after("import tinytransformer") == "1"


@pytest.mark.parametrize("env", [{"OPENBLAS_NUM_THREADS": "2"}, {"OMP_NUM_THREADS": "2"}])
def test_a_thread_count_the_user_chose_is_kept(env):
    assert thread_setting_after("import tinytransformer", **env) == env.get("OPENBLAS_NUM_THREADS", "None")


def test_after_numpy_it_changes_nothing():
    # OpenBLAS has already read its setting: changing the variable now would only mislead
    assert thread_setting_after("import numpy; import tinytransformer") == "None"
