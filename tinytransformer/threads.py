"""One BLAS thread by default: the matrices here are small, and threads that wait on each other are slow.

NumPy's matrix products run on OpenBLAS, which by default starts a thread per
core. On the classroom model (products of about 700 x 64 by 64 x 64) a second
thread saves nothing: a training step took 42 ms with one thread and 41 ms
with two on a quiet 2-core machine. But when anything else runs (a notebook
beside a test, a browser), the threads wait on each other, and the same step
took 3 s: 70 times slower. So tinytransformer asks for one thread, unless the
user has chosen (OPENBLAS_NUM_THREADS or OMP_NUM_THREADS set).

OpenBLAS reads the variable once, when NumPy is first imported: this works
when tinytransformer is imported before NumPy (as `python -m tinytransformer`
does), and changes nothing otherwise. It changes no number, only how fast they come.
"""
import os
import sys


def one_blas_thread_unless_chosen():
    """Set OPENBLAS_NUM_THREADS=1 if no thread count was chosen and NumPy is not loaded yet.

    Returns True if it took effect.
    """
    chosen = any(name in os.environ for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"))
    if chosen or "numpy" in sys.modules:
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    return True
