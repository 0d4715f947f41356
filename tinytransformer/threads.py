"""One BLAS thread by default: the matrices here are small, and threads that wait on each other are slow.

NumPy's matrix products run on OpenBLAS, which by default starts a thread per
core. On the classroom model (products of about 700 x 64 by 64 x 64) a second
thread does not pay: on a quiet 2-core machine a training step took a median
29.4 ms with one thread and 35.4 ms with two. And when anything else runs (a
notebook beside a test, a browser), the threads wait on each other: the same
step took 1987 ms instead of 115 ms. So tinytransformer asks for one thread,
unless the user has chosen (OPENBLAS_NUM_THREADS or OMP_NUM_THREADS set).

OpenBLAS reads the variable once, when NumPy is first imported: this works
when tinytransformer is imported before NumPy (as `python -m tinytransformer`
does), and changes nothing otherwise. The thread count splits the sums inside
a matrix product differently, so the last bits of a result, and over a long
training run the exact losses, depend on it: same seed and same thread count
give the same numbers, bit for bit.
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
