"""`python -m tinytransformer handin`: the zip a student uploads, made from the edition it runs in.

The zip holds the package, tinytransformer/, and nothing else: not the virtual environment (.venv), the
notebooks and their outputs, the tests, caches or .git, which the grader never reads and which make an upload
hundreds of MiB. Before it says "upload this", it reads the zip back as the grader reads a submission.
"""
import os
import zipfile
from pathlib import Path

from .common import BadInput, say
from ..course.edition import OPS, TAPE_FILE, op_files
from ..course.reading import SOURCE_LIMIT, ZIP_LIMIT, BadSubmission, hidden, not_utf8, read_submission
from ..files import atomic_write

PACKAGE = "tinytransformer"
SKIPPED_SUFFIXES = (".pyc", ".pyo")


def add_parser(commands):
    """Add the handin command (zip this edition's package for upload) to the command line's commands."""
    handin = commands.add_parser(
        "handin", help="write the .zip to upload: this edition's tinytransformer/ folder and nothing else",
        description="Zip the package of the student edition in the current folder (or --edition DIR): "
                    "tinytransformer/, without caches, so no .venv, notebooks or tests. Prints the zip's size "
                    "and what it holds, after reading it back as your instructor's grader will.")
    handin.add_argument("--edition", metavar="DIR", default=".",
                        help="the edition: the folder holding pyproject.toml and tinytransformer/ (default: here)")
    handin.add_argument("--output", metavar="FILE", default=None,
                        help="the zip to write (default: handin.zip in the edition's folder)")
    handin.set_defaults(run=run)


def edition_root(start):
    """The folder holding tinytransformer/ops/: start or the nearest folder above it; BadInput if none."""
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if (folder / OPS).is_dir():
            return folder
    raise BadInput(f"{start} is not in a student edition: no tinytransformer/ops/ here or above; run handin in "
                   "the folder that holds pyproject.toml and tinytransformer/")


def package_files(root, leave_out=()):
    """The package's files, relative to root, sorted: no caches, compiled files or hidden folders; BadInput for
    a symbolic link (the grader refuses one) or a source file larger than the grader reads."""
    found = []
    for here, dirs, files in os.walk(root / PACKAGE):
        dirs[:] = sorted(d for d in dirs if not hidden(f"{d}/x") and not Path(here, d, "pyvenv.cfg").exists())
        for name in sorted(files):
            path = Path(here, name)
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                raise BadInput(f"{relative} is a symbolic link, which the grader refuses: put the file itself there")
            if name.endswith(SKIPPED_SUFFIXES) or name.startswith(".") or path.resolve() in leave_out:
                continue
            if name.endswith(".py") and path.stat().st_size > SOURCE_LIMIT:
                raise BadInput(f"{relative} is {path.stat().st_size} bytes: the grader reads source files up to "
                               f"{SOURCE_LIMIT // 1024} KiB")
            found.append(relative)
    return found


def holdings(names):
    """'tinytransformer/ (12 files), tinytransformer/ops/ (9 files), ...': each folder and its file count."""
    counts = {}
    for name in names:
        folder = name.rsplit("/", 1)[0] + "/"
        counts[folder] = counts.get(folder, 0) + 1
    return ", ".join(f"{folder} ({n} file{'s' * (n != 1)})" for folder, n in sorted(counts.items()))


def run(args):
    """Write the zip, read it back as the grader does, print its size and what it holds; return 0."""
    root = edition_root(args.edition)
    output = Path(args.output) if args.output else root / "handin.zip"
    if output.suffix.lower() != ".zip":
        raise BadInput(f"--output {output}: expected a file name ending in .zip")
    if not output.parent.is_dir():
        raise BadInput(f"--output {output}: no folder {output.parent}")
    names = package_files(root, leave_out={output.resolve()})

    def write(f):
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            for name in names:
                z.write(root / name, name)
    atomic_write(output, write)
    size = output.stat().st_size
    wanted = {path.as_posix() for path in op_files(root).values()} | {TAPE_FILE.as_posix()}
    try:
        found = read_submission(output, wanted)
    except BadSubmission as error:
        raise BadInput(f"wrote {output}, but the grader would refuse it: {error}") from None
    for name, data in found.items():
        if not_utf8(data):
            raise BadInput(f"wrote {output}, but the grader would not read {name}: {not_utf8(data)}; delete that line")
    if size > ZIP_LIMIT:
        raise BadInput(f"wrote {output}, {size / 2 ** 20:.0f} MiB: over the grader's {ZIP_LIMIT // 2 ** 20} MiB; "
                       f"what is large in tinytransformer/ is not the library's")
    say(f"wrote {output}: {size / 1024:.0f} kB, {len(names)} files: {holdings(names)}")
    say(f"the grader reads it: {len(found)} of the {len(wanted)} files your backward passes are in were found; "
        "not in it, as the grader needs none of them: .venv, notebooks, tests, docs, caches. Upload this file.")
    return 0
