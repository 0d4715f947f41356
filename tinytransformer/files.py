"""The one rule for every file tinytransformer writes: nothing a user made is lost, nothing is half-written.

    check_outputs({"--save": "m.npz", "--json": "m.json"}, inputs={"--pretrained": "mlm.npz"},
                  is_ours={"--save": is_checkpoint}, force=False)     # before any work: OutputError or None
    atomic_write(path, lambda f: f.write(b"..."))                    # temp file beside path, then rename

Checked before any work starts, so that a long run never ends in a file that cannot be written:
every output path is given (not ""), names a file (not a folder, no trailing slash), has an extension the
writer knows, sits in a folder that exists and can be written, differs from every other output and from
every input, and is not a file the tool did not make (unless force).
"""
import json
import os
import tempfile


class OutputError(ValueError):
    """An output path that cannot be used: one line naming the option, the path and why."""


def atomic_write(path, write, mode="wb"):
    """Call write(f) on a new temporary file beside path, then rename it over path.

    A crash, a full disk or Ctrl-C during write leaves path as it was (the temporary file is removed);
    a reader never sees half a file. The file gets the permissions of a file made with open() (umask).
    """
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, mode) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)                  # mkstemp makes 0600; an ordinary file is 0644
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def json_keys(path):
    """The keys of the JSON object in the file at path; an empty set if it holds none (or cannot be read). How a
    command recognises a file it wrote before replacing it."""
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, ValueError):
        return set()
    return set(found) if isinstance(found, dict) else set()


def check_output(flag, path, extensions):
    """One output path on its own: given, a file (not a folder), a known extension, a folder that exists."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise OutputError(f"{flag}: expected a file name, got {path!r} (an unset shell variable?)")
    path = os.fspath(path)
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        raise OutputError(f"{flag} {path}: expected a file name, got a folder")
    if extensions and not path.lower().endswith(tuple(extensions)):
        raise OutputError(f"{flag} {path}: expected a name ending in {' or '.join(extensions)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputError(f"{flag} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"{flag} {path}: the folder {folder} cannot be written")


def check_outputs(outputs, extensions=None, inputs=None, is_ours=None, force=False):
    """Every output path, checked before any work; raises OutputError with one line, else returns None.

    outputs and inputs: {flag: path or None} (None: not given). extensions: {flag: (".npz",)}.
    is_ours: {flag: function(path) -> True if the existing file at path is one this tool wrote}; an existing
    file at an output path is only replaced if it is ours, or with force. A flag without an is_ours
    function never replaces an existing file without force.
    """
    extensions, inputs, is_ours = extensions or {}, inputs or {}, is_ours or {}
    given = {flag: path for flag, path in outputs.items() if path is not None}
    for flag, path in given.items():
        check_output(flag, path, extensions.get(flag))
    seen = {os.path.realpath(path): flag for flag, path in inputs.items() if path is not None}
    for flag, path in given.items():
        real = os.path.realpath(path)
        if real in seen:
            raise OutputError(f"{flag} {path}: the same file as {seen[real]}; expected a different path")
        seen[real] = flag
        if os.path.exists(path) and not force and not is_ours.get(flag, lambda _: False)(path):
            raise OutputError(f"{flag} {path}: the file exists and was not written by tinytransformer; "
                              "choose another name, or force the replacement (--force, force=True)")
