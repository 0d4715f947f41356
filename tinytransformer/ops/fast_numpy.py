"""NumPy idioms that compute the same as a plain expression, faster on the classroom model's shapes.

The ops in this package are written as the math reads (a mean is .mean(), a max
is .max()). Where a plainer line cost a measurable share of a training step,
the op calls one of these instead and says in a comment what it computes. Each
gives the same numbers (the max exactly; the product up to the order of
rounding). Measured on a 2-core AMD EPYC (AVX-512), one BLAS thread, float32,
plain and fast interleaved in one process (benchmarks/ab_speedups.py for the
whole step; the per-call numbers are minima of 30 interleaved repeats):

    max_last            attention's (64, 4, 11, 11) scores: 18 us instead of 129 us per call,
                        7 calls a step (6 attention softmaxes and the loss): about 0.8 ms
    matmul_transposed   q @ k.T on (64, 4, 11, 16): 48 us instead of 69 us per call, 12 or more
                        calls a step: about 0.25 ms

Tried and dropped, because on the whole step they bought under 1% (about 0.6
and 0.9 ms of 50-90 ms steps on a loaded machine): sums along the last axis as
x @ ones, and sums over the leading axes as ones @ x.
"""
import numpy as np


def max_last(x):
    """x.max(axis=-1, keepdims=True). The max has no BLAS form; instead the rows are
    copied into columns, (N, T) -> (T, N), and reduced across them: T long vectorised
    passes instead of N short ones (7x faster for rows of 11)."""
    columns = np.ascontiguousarray(x.reshape(-1, x.shape[-1]).T)        # (T, N)
    return columns.max(axis=0).reshape(*x.shape[:-1], 1)                 # (..., 1)


def matmul_transposed(a, b):
    """a @ b.swapaxes(-1, -2). NumPy's stacked matmul is slower when its right operand
    is a transposed view (1.4x on attention's shapes), so the transpose is copied first."""
    return a @ np.ascontiguousarray(b.swapaxes(-1, -2))
