"""Seconds each notebook takes, run top to bottom as a student would (budget: 60 s each).

Executes every notebooks/NN_*.ipynb with nbclient in a fresh kernel (nothing is
written back) and prints the time of each. Run from the repository root:

    python benchmarks/notebook_times.py
"""
import pathlib
import time

import nbclient
import nbformat

BUDGET = 60      # seconds per notebook on a 2-core machine without a GPU
NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def main():
    print(f"{'notebook':<44}{'seconds':>8}")
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                         resources={"metadata": {"path": str(path.parent)}})
        start = time.perf_counter()
        client.execute()
        seconds = time.perf_counter() - start
        print(f"{path.name:<44}{seconds:>8.1f}{'' if seconds <= BUDGET else '  over budget'}", flush=True)


if __name__ == "__main__":
    main()
