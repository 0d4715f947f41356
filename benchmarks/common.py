"""What the benchmark scripts share: the thread count, the optional PyTorch reference, timing and the load.

Imports nothing heavy itself: use_threads must run before NumPy is imported.
"""
import json
import os
import statistics
import sys
import time


def median_seconds(fn, repeats):
    """(median seconds of fn() over repeats calls, the last call's result)."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def load_average():
    """'0.52 0.91 1.18': the load average over 1, 5 and 15 minutes."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def use_threads(n):
    """Make BLAS (and PyTorch, if it is loaded later) use n threads, and apply the rest of
    tinytransformer's speed settings as its command line does (tt.use_speed_settings).

    OpenBLAS reads OPENBLAS_NUM_THREADS once, when NumPy is first imported.
    """
    if "numpy" in sys.modules:
        raise RuntimeError("benchmarks: use_threads must run before NumPy is imported")
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(n)
    import tinytransformer as tt
    if not hasattr(tt, "use_speed_settings"):     # an older version (before use_speed_settings existed) set both on import
        return
    settings = tt.use_speed_settings(blas_threads=n)
    if settings["blas_threads"] != n:
        raise RuntimeError(f"benchmarks: asked for {n} BLAS threads, got {settings}")


def import_torch_reference(threads):
    """benchmarks/torch_reference.py as a module, torch set to threads; None without torch."""
    try:
        import torch
    except ImportError:
        print("(torch is not installed: measuring tinytransformer alone)")
        return None
    torch.set_num_threads(threads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch_reference
    return torch_reference


def classroom_config():
    """tinytransformer's classroom model: length 10, 10 symbols, d_model 64, 4 heads,
    2+2 layers, d_ff 128, no dropout, float32. Imports NumPy: call after use_threads."""
    import tinytransformer as tt
    from tinytransformer.tasks.sequences import vocab_size_for
    return tt.TransformerConfig(vocab_size_for(10), d_model=64, n_heads=4, n_layers=2, d_ff=128,
                                max_len=64, dropout=0.0)


def write_record(path, record):
    """Write record as JSON to path (a pathlib.Path) atomically: a run stopped halfway leaves the last record whole."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1))
    os.replace(tmp, path)
    print(f"wrote {path}")
