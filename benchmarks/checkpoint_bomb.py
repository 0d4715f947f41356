"""The checkpoint reader against zip bombs: a small .npz whose entries inflate to 1 GiB must be refused in
under a second and under 100 MB of memory, without reading the 1 GiB. Each bomb is loaded in a fresh
process (its peak RSS is the whole process, Python and NumPy included); prints one line per bomb and
writes benchmarks/results/checkpoint_bomb.json.

    python benchmarks/checkpoint_bomb.py [--gib 1]

The bombs: a tiny GPT's checkpoint with one parameter (embed.table) replaced by the bomb, with an extra
entry that is the bomb, with the bomb's header lying (it claims the parameter's shape, the data
inflates to 1 GiB), and with a config whose vocabulary makes the bomb the right shape.
"""
import argparse
import datetime
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_average, write_record  # noqa: E402

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "checkpoint_bomb.json"
CHUNK = 2**20
# run in the child: load, time it, report the error and the peak RSS (ru_maxrss is in KiB on Linux)
LOAD = """
import resource, sys, time
from tinytransformer import load_checkpoint
start = time.perf_counter()
try:
    load_checkpoint(sys.argv[1])
    outcome = "LOADED"
except ValueError as error:
    outcome = str(error).replace(sys.argv[1], "FILE")
print(f"{time.perf_counter() - start:.4f}\\t{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}\\t{outcome}")
"""


def npy_header(shape, dtype="<f4"):
    """The bytes of a version 1.0 .npy header for an array of shape and dtype."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def write_bomb(archive, name, header, n_bytes):
    """Add entry name to archive: header, then n_bytes of zeros, deflated, streamed a MiB at a time."""
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    with archive.open(info, "w", force_zip64=True) as f:
        f.write(header)
        for _ in range(n_bytes // CHUNK):
            f.write(bytes(CHUNK))


def make_bombs(folder, n_bytes):
    """{what: path} of the three bombs, built from a tiny GPT's checkpoint."""
    import tinytransformer as tt
    base = os.path.join(folder, "base.npz")
    config = tt.TransformerConfig(vocab_size=7, d_model=8, n_heads=2, n_layers=1, d_ff=8, max_len=8)
    tt.save_checkpoint(tt.nn.GPT(config, rng=0), base)
    with zipfile.ZipFile(base) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    shape = tt.nn.GPT(config, rng=0).embed.table.shape
    size = f"{n_bytes / 2**30:g} GiB"
    rows = n_bytes // 4 // config.d_model                   # a vocabulary whose embedding is the whole bomb
    honest_config = npy_bytes(np.array(json.dumps({**json.loads(str(np.load(io.BytesIO(members["config.npy"])))),
                                                   "vocab_size": rows})))
    bombs = {f"a parameter inflating to {size}": ("embed.table.npy", npy_header((n_bytes // 4,)), {}),
             f"an extra entry inflating to {size}": ("bomb.npy", npy_header((n_bytes // 4,)), {}),
             "a parameter whose header lies": ("embed.table.npy", npy_header(shape), {}),
             f"a config that matches a {size} parameter": ("embed.table.npy", npy_header((rows, config.d_model)),
                                                           {"config.npy": honest_config})}
    paths = {}
    for i, (what, (name, header, changed)) in enumerate(bombs.items()):
        path = os.path.join(folder, f"bomb{i}.npz")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for member, data in {**members, **changed}.items():
                if member != name:
                    archive.writestr(member, data)
            write_bomb(archive, name, header, n_bytes)
        paths[what] = path
    return paths


def npy_bytes(array):
    """The .npy file of array, as bytes."""
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gib", type=float, default=1.0, help="what each bomb inflates to, in GiB")
    args = parser.parse_args(argv)
    n_bytes = int(args.gib * 2**30) // CHUNK * CHUNK
    before, results = load_average(), []
    with tempfile.TemporaryDirectory() as folder:
        for what, path in make_bombs(folder, n_bytes).items():
            done = subprocess.run([sys.executable, "-c", LOAD, path], capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
            seconds, peak_mb, outcome = done.stdout.strip().split("\t")
            result = {"bomb": what, "file_bytes": os.path.getsize(path), "inflates_to": n_bytes,
                      "seconds": float(seconds), "peak_rss_mb": float(peak_mb), "outcome": outcome,
                      "refused_fast_and_small": outcome != "LOADED" and float(seconds) < 1 and float(peak_mb) < 100}
            results.append(result)
            print(f"{what}: {result['file_bytes']:,} bytes on disk, {seconds} s, peak RSS {peak_mb} MB: {outcome}")
    print(f"{sum(r['refused_fast_and_small'] for r in results)} of {len(results)} refused in under 1 s and 100 MB")
    write_record(OUT, {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "machine": os.uname().machine, "cpus": os.cpu_count(), "load_before": before,
                       "load_after": load_average(), "results": results})
    return 0 if all(r["refused_fast_and_small"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
