"""Two process-wide settings that make training faster, applied only when asked for.

Importing tinytransformer changes nothing about your process. The command line
(`python -m tinytransformer ...`) calls use_speed_settings() at start-up; a
notebook or a script may call it too:

    import tinytransformer as tt
    tt.use_speed_settings()      # one BLAS thread, keep freed memory

Both settings affect everything else in the process (other libraries, the
test runner), which is why a library must not make them on import.

One BLAS thread. NumPy's matrix products run on OpenBLAS, which starts a
thread per core. Two threads help only on a machine with nothing else to do
(on a quiet 2-core machine the classroom step took 22.6 ms with two and 26.5
ms with one); as soon as anything else runs, they wait on each other (with
one other busy process: 50 ms with two threads, 24 ms with one). OpenBLAS
reads OPENBLAS_NUM_THREADS only when NumPy is first imported, so after that
the count is changed through OpenBLAS's own set_num_threads function, found
in the OpenBLAS that NumPy loaded. The thread count splits the sums inside a
product differently: the last bits of results, and over a long run the exact
losses, depend on it.

Keep freed memory. A training step makes and frees hundreds of temporary
arrays of about 100 KB. glibc's malloc serves blocks that large with mmap,
gives them back with munmap and trims its heap whenever much is free; the
next array then faults its pages in again, one by one. Raising the two
thresholds (mallopt) keeps that memory in the process for reuse: a layer norm
over (64, 11, 64) took 550 us before and 150 us after. The mmap threshold must
be above the largest temporary a step makes and the trim threshold above what a
step frees: at length 256 (batch 64, 4 heads) each attention array is 68 MB, and
with 64 MiB and 256 MiB a step faulted 55,000 pages in, 0.5 s of system time
on top of 1.5 s (none with 256 MiB and 1 GiB). The cost: a process keeps up to
1 GiB it freed, where the next step finds it. It changes no number, only how
fast they come. Only glibc (Linux) has mallopt.
"""
import ctypes
import ctypes.util
import re
import sys

M_TRIM_THRESHOLD = -1   # free memory at the top of the heap kept before trimming it
M_MMAP_THRESHOLD = -3   # blocks at least this large come from mmap (and go back with munmap)
MMAP_BYTES, TRIM_BYTES = 256 * 2**20, 2**30          # the values we set them to

# OpenBLAS's thread functions, by build: the plain library, and the 64-bit-integer
# builds that NumPy's wheels bundle (scipy-openblas, with a prefix and a suffix).
_BLAS_NAMES = [prefix + "openblas_{}_num_threads" + suffix
               for prefix in ("", "scipy_") for suffix in ("", "64_", "_64")]


def use_speed_settings(blas_threads=1, keep_freed_memory=True):
    """Set OpenBLAS's thread count and keep freed memory in the process; return what took effect.

    blas_threads: an int >= 1, or None to leave the thread count alone.
    keep_freed_memory: raise glibc's mmap and trim thresholds (see the module docstring).
    Returns {"blas_threads": the count now in effect, or None if OpenBLAS's
    functions were not found (with "blas_note" saying why), "keep_freed_memory":
    True if mallopt took effect}. Never raises for a platform that lacks either.
    """
    if blas_threads is not None and (not isinstance(blas_threads, int) or blas_threads < 1):
        raise ValueError(f"use_speed_settings: blas_threads must be an int >= 1 or None, got {blas_threads!r}")
    result = {}
    functions = _openblas_thread_functions()
    if functions is None:
        result["blas_threads"] = None
        result["blas_note"] = "OpenBLAS's set_num_threads was not found in the libraries NumPy loaded"
    else:
        set_threads, get_threads = functions
        if blas_threads is not None:
            set_threads(blas_threads)
        result["blas_threads"] = get_threads()
    result["keep_freed_memory"] = _keep_freed_memory() if keep_freed_memory else False
    return result


def _loaded_libraries():
    """Paths of the shared libraries that may hold NumPy's BLAS: NumPy's core module, then any
    mapped library with "blas" in its name (Linux lists them in /proc/self/maps)."""
    import numpy._core._multiarray_umath as core    # its dependencies include the BLAS it uses
    paths = [core.__file__]
    try:
        with open("/proc/self/maps") as maps:
            paths += sorted(set(re.findall(r"(/\S*blas\S*\.(?:so|dylib)\S*)", maps.read())))
    except OSError:
        pass
    return paths


def _openblas_thread_functions():
    """(set_num_threads, get_num_threads) of the OpenBLAS NumPy uses, or None."""
    for path in _loaded_libraries():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _BLAS_NAMES:
            setter = getattr(library, name.format("set"), None)
            getter = getattr(library, name.format("get"), None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                return setter, getter
    return None


def _keep_freed_memory():
    """Raise glibc's mmap and trim thresholds; True if it took effect."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c")).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_BYTES))
