"""One BLAS thread by default: a second one gains 15% on a quiet machine and loses 2x or more on a busy one.

NumPy's matrix products run on OpenBLAS, which by default starts a thread per
core. Two threads help only on a machine with nothing else to do: on a quiet
2-core machine a training step of the classroom model took a median 22.6 ms
with two threads and 26.5 ms with one. As soon as anything else runs (a
notebook beside a test, a browser), the two threads wait on each other: with
one other busy process the same step took 50 ms with two threads and 24 ms
with one, and under heavier load 1987 ms instead of 115 ms. So
tinytransformer asks for one thread, unless the user has chosen
(OPENBLAS_NUM_THREADS or OMP_NUM_THREADS set; OPENBLAS_NUM_THREADS=2 on a
quiet machine buys the 15%).

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
