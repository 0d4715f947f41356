"""Seconds each notebook takes, run top to bottom as a student would (budget: 60 s each).

Executes every notebooks/NN_*.ipynb (or those whose names start with the
given prefixes) with nbclient in a fresh kernel, writes nothing back, and
prints a Markdown table: wall-clock seconds of each notebook and the load
average of the machine beside it (the machine may be shared: a load above the
number of cores means the times include waiting), and records each notebook's
run in benchmarks/results/notebook_times.json (a notebook run again replaces
its earlier run). Run from the repository root:

    python benchmarks/notebook_times.py            # every notebook
    python benchmarks/notebook_times.py 07 09      # some of them

The kernels get OPENBLAS_NUM_THREADS=1 unless it is already set: the
notebooks' printed numbers are those of one BLAS thread.
"""
import datetime
import json
import os
import pathlib
import platform
import sys
import time

import nbclient
import nbformat

BUDGET = 60      # seconds per notebook on a 2-core machine without a GPU
NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
OUT = pathlib.Path(__file__).resolve().parent / "results" / "notebook_times.json"


def notebook_seconds(path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main(prefixes):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")          # inherited by the kernels
    paths = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
    chosen = [p for p in paths if not prefixes or any(p.name.startswith(x) for x in prefixes)]
    if not chosen:
        raise SystemExit(f"notebook_times: no notebook in {NOTEBOOK_DIR} starts with {prefixes}")
    print(f"{os.cpu_count()} cores, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}\n")
    print("| notebook | seconds | load average (1 min) |")
    print("|---|---:|---:|")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import write_record
    record = json.loads(OUT.read_text()) if OUT.exists() else {}
    for path in chosen:
        before = os.getloadavg()[0]
        seconds = notebook_seconds(path)
        over = " (over the budget)" if seconds > BUDGET else ""
        print(f"| `{path.name}` | {seconds:.1f}{over} | {os.getloadavg()[0]:.1f} |", flush=True)
        record[path.name] = {"seconds": round(seconds, 1), "load_before": round(before, 2),
                             "load_after": round(os.getloadavg()[0], 2),
                             "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                             "machine": f"{platform.machine()}, {os.cpu_count()} cores, OPENBLAS_NUM_THREADS="
                                        f"{os.environ['OPENBLAS_NUM_THREADS']}"}
        write_record(OUT, dict(sorted(record.items())))


if __name__ == "__main__":
    main(sys.argv[1:])
