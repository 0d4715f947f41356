"""Re-execute notebooks in place, top to bottom in a fresh kernel, as they are committed.

    python notebooks/execute.py                      # every NN_*.ipynb
    python notebooks/execute.py 04 08_training       # those whose names start so

No timing metadata is written, so a re-run that prints the same numbers
leaves the file unchanged. Run it after changing a notebook or the library
code a notebook shows; the tests check that every committed notebook was
executed in order.
"""
import pathlib
import sys

import nbclient
import nbformat

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parent


def execute(path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    nbformat.write(nb, path)


def main(prefixes):
    paths = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
    chosen = [p for p in paths if not prefixes or any(p.name.startswith(x) for x in prefixes)]
    if not chosen:
        raise SystemExit(f"execute: no notebook in {NOTEBOOK_DIR} starts with {prefixes}")
    for path in chosen:
        print(f"executing {path.name}", flush=True)
        execute(path)


if __name__ == "__main__":
    main(sys.argv[1:])
